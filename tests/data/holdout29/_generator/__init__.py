"""Generator of the holdout29 scenario set: `python -m tests.data.holdout29._generator`."""
