"""Deterministic generator for the holdout44 scenarios."""
