"""The Slack front end and the `triage` command line."""
