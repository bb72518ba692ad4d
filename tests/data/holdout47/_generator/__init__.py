"""Deterministic generator of the holdout47 scenarios:
`python -m tests.data.holdout47._generator`."""
