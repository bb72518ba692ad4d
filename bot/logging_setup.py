"""The bot's logs: one JSON object per line on stderr, secrets masked.

Each line carries `time` (UTC, ISO 8601), `level`, `logger`, `message` and, when the line
was written on behalf of an investigation, its `investigation_id` (from the
`investigation_id` context variable, which the investigation's task sets when it starts, or
from `extra={"investigation_id": ...}`). The message and any traceback pass through
`tools.redact.redact`, so a token that slips into a log line is masked. The level comes from
`TRIAGE_LOG_LEVEL` (default INFO); `TRIAGE_LOG_FORMAT=text` gives plain lines for a terminal.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import IO, Any

from engines.errors import ConfigurationError
from tools.redact import redact

investigation_id: ContextVar[str | None] = ContextVar("triage_investigation_id", default=None)

LEVELS = {"DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARNING": logging.WARNING,
          "WARN": logging.WARNING, "ERROR": logging.ERROR, "CRITICAL": logging.CRITICAL}
FORMATS = ("json", "text")
NOISY_LOGGERS = ("slack_bolt", "slack_sdk", "triage.bolt", "aiohttp.access")


def parse_level(value: str | None) -> int:
    """A TRIAGE_LOG_LEVEL value as a logging level; empty means INFO."""
    name = (value or "").strip().upper()
    if not name:
        return logging.INFO
    if name not in LEVELS:
        raise ConfigurationError(
            f"TRIAGE_LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, not {value!r}"
        )
    return LEVELS[name]


def current_investigation(record: logging.LogRecord) -> str | None:
    explicit = getattr(record, "investigation_id", None)
    return str(explicit) if explicit else investigation_id.get()


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": redact(record.getMessage()),
        }
        found = current_investigation(record)
        if found:
            entry["investigation_id"] = found
        if record.exc_info:
            entry["exception"] = redact(self.formatException(record.exc_info))
        elif record.exc_text:
            entry["exception"] = redact(record.exc_text)
        if record.stack_info:
            entry["stack"] = redact(self.formatStack(record.stack_info))
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """The plain format, with the same masking and the investigation id when known."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = redact(super().format(record))
        found = current_investigation(record)
        return f"{text} [investigation {found}]" if found else text


class _TriageHandler(logging.StreamHandler):  # type: ignore[type-arg,unused-ignore]
    """Marks the handler this module installed, so configuring again replaces it."""


def configure(environ: Mapping[str, str], stream: IO[str] | None = None) -> int:
    """Install the bot's handler on the root logger; returns the level. Raises
    ConfigurationError for a bad TRIAGE_LOG_LEVEL or TRIAGE_LOG_FORMAT.

    Like `logging.basicConfig`, it leaves alone a root logger that something else already
    configured (a test runner, a program embedding the bot): only the settings are checked.
    """
    level = parse_level(environ.get("TRIAGE_LOG_LEVEL"))
    style = (environ.get("TRIAGE_LOG_FORMAT") or "json").strip().lower()
    if style not in FORMATS:
        raise ConfigurationError(
            f"TRIAGE_LOG_FORMAT must be json or text, not {environ.get('TRIAGE_LOG_FORMAT')!r}"
        )
    for noisy in NOISY_LOGGERS:
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))
    root = logging.getLogger()
    ours = [h for h in root.handlers if isinstance(h, _TriageHandler)]
    if len(root.handlers) > len(ours):
        return level
    handler = _TriageHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JsonFormatter() if style == "json" else TextFormatter())
    for old in ours:
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    return level
