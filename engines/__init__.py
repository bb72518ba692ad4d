"""Reasoning engines: they know nothing of Slack, only incidents, models, tools and events."""
