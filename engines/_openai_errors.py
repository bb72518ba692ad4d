"""What an OpenAI-compatible endpoint's failures mean: which are worth a retry, how long the
server asked to wait, and the one line a human sees (status and the server's own message,
never a body dump or a credential)."""

from __future__ import annotations

import email.utils
import time

import openai

RETRIED_STATUS = frozenset({408, 409, 429})


def is_transient(error: BaseException) -> bool:
    if isinstance(error, openai.APIConnectionError):  # includes timeouts
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code in RETRIED_STATUS or error.status_code >= 500
    return False


def retry_after(error: BaseException | None) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, `retry-after` seconds or date)."""
    if not isinstance(error, openai.APIStatusError):
        return None
    headers = error.response.headers
    try:
        if (millis := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(millis) / 1000)
        if (value := headers.get("retry-after")) is None:
            return None
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(headers.get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def error_text(error: openai.APIError) -> str:
    body = error.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    if isinstance(body, str) and body.strip():
        return body.strip()
    return error.message


def describe(error: BaseException) -> str:
    """One line for humans: status and the server's own message, never a body dump."""
    if isinstance(error, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(error, openai.APIConnectionError):
        cause = error.__cause__
        return f"cannot connect ({cause or error.message})".replace("\n", " ")
    if isinstance(error, openai.APIStatusError):
        text = " ".join(error_text(error).split())
        text = text if len(text) <= 200 else text[:200] + "…"
        return f"HTTP {error.status_code}: {text}"
    return f"{type(error).__name__}: {error}"
