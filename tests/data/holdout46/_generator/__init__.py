"""Deterministic generator of the holdout46 scenarios."""
