"""Generator of the holdout45 scenarios:
`PYTHONPATH=. python -m tests.data.holdout45._generator`."""
