"""The investigations the bot runs, one file per job:

- registry.py: `Investigations`, what listeners call: the running investigations by thread,
  and how one starts, is retried after a Wrong, or is refused while shutting down.
- run.py: the task of one investigation (`RunRequest` for the runner, the end in any case).
- records.py: what the store keeps of a run as it happens.
- resume.py: after a restart, the interrupted investigations carry on from their logs.
- steering.py: humans' replies in a running thread become constraints.
- approvals.py: a tool that changes something waits for a human's Approve or Deny.
- lessons.py: Reflexion's reflections (pending until a human confirms the diagnosis) and
  humans' corrections, kept and retrieved.
- inbox.py: events other replicas received for the runs here, claimed and applied.
- board_clicks.py: a click on the hypothesis board as the constraint it asks for.
- shutdown.py: the running investigations end with a summary within the grace period.
- investigation.py: the in-memory state of one running investigation.
"""
