"""The offline analyzer served as an OpenAI-compatible endpoint (`triage analyzer-server`)."""
