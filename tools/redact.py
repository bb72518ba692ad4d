"""Mask credentials in tool output before it reaches the model or Slack.

Secrets are never read, but credentials still leak through the data that is read: a
password in a pod's env, a bearer token in a debug log line, a connection string in a
ConfigMap. Every string a tool returns passes through `redact`. The rules favour masking
too much over too little, yet keep what an investigation needs: the name of the key whose
value was masked, the scheme and host of a URL, pod and host names, trace ids.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from typing import Any

MASK = "[REDACTED]"

# Names of keys, env vars and fields whose values are credentials.
_SECRET_WORDS = re.compile(
    r"passw|(?:^|[-_.])pass(?:$|[-_.])|pwd|secret|token|api[-_]?key|apikey|access[-_]?key|"
    r"private[-_]?key|credential|"
    r"(?:^|[-_.])auth(?:orization)?(?:$|[-_.])|^authorization$|dsn|conn(?:ection)?[-_]?str|"
    r"signing[-_]?key|encryption[-_]?key|session[-_]?key|cookie",
    re.IGNORECASE,
)
# ...unless the name says the value only points at a credential or describes it.
_REFERENCE_SUFFIX = re.compile(
    r"(?:tokens|name|ref|refs|path|file|dir|id|count|type|ttl|expiry|expires|expiration|header|url|"
    r"endpoint|host|port|user|username|length|timeout|enabled|seconds|limit|version)$",
    re.IGNORECASE,
)


def looks_secret(name: str) -> bool:
    """Whether a key or variable name (`DB_PASSWORD`, `apiKey`) names a credential."""
    if name.upper() == "PWD":  # the shell's working directory
        return False
    return bool(_SECRET_WORDS.search(name)) and not _REFERENCE_SUFFIX.search(name)


_NAME_SEGMENT = re.compile(r"[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[a-z0-9]+(?:[-.][a-z0-9]+)+")


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _looks_random(value: str) -> bool:
    """Long, high-entropy and machine-made: mixed case with digits, or 32+ hex digits."""
    if len(value) < 20 or value.startswith("/") or all(
        _NAME_SEGMENT.fullmatch(part) for part in value.split("/")
    ):
        return False  # paths, Kind/name and DNS-style names (pods, hosts) are not credentials
    mixed = bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value)
                 and re.search(r"\d", value))
    hexadecimal = len(value) >= 32 and bool(re.fullmatch(r"[0-9a-fA-F]+", value))
    return (mixed or hexadecimal) and _entropy(value) >= 3.5


_ID_KEY = re.compile(
    r"(?:^|[-_.])(?:id|uid|uuid|trace|span|hash|sha|sha256|digest|commit|revision|checksum|"
    r"etag|image|version|request|correlation)$|(?:trace|span|request|correlation)[-_.]?id$",
    re.IGNORECASE,
)

_Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]


def _key_value(match: re.Match[str]) -> str:
    value = match.group("value")
    if "[REDACTED" in value:  # an earlier rule already masked it
        return match.group(0)
    if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) > 1:
        return f"{match.group('key')}{match.group('sep')}{value[0]}{MASK}{value[0]}"
    return f"{match.group('key')}{match.group('sep')}{MASK}"


def _random_value(match: re.Match[str]) -> str:
    if _ID_KEY.search(match.group("key")) or not _looks_random(match.group("value")):
        return match.group(0)
    return f"{match.group('key')}{match.group('sep')}{MASK}"


def _scheme_value(match: re.Match[str]) -> str:
    """The credential after "Bearer", "Token"...; a plain lower-case word after one ("token
    exchange failed", "token refresh") is prose, kept: a credential has digits, capitals or
    punctuation in it, or is long."""
    value = match.group(2)
    if value.isalpha() and value.islower() and len(value) < 20:
        return match.group(0)
    return f"{match.group(1)} {MASK}"


_RULES: tuple[_Rule, ...] = (
    # PEM private keys, with or without their END line (a cut log line).
    (re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)",
                re.DOTALL),
     r"-----BEGIN \1PRIVATE KEY-----" + MASK + r"-----END \1PRIVATE KEY-----"),
    # user:password@ in URLs (any scheme); the user and host stay.
    (re.compile(r"(?<![a-zA-Z0-9+.-])([a-zA-Z][a-zA-Z0-9+.-]*://)([^:/?#@\s]*):([^@/?#\s]+)@"),
     r"\1\2:" + MASK + "@"),
    # JSON Web Tokens.
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), MASK),
    # Vendor tokens with a recognisable prefix.
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b"), MASK),  # AWS
    (re.compile(r"\bxox[abposre]-[A-Za-z0-9-]{10,}"), MASK),  # Slack
    (re.compile(r"\bxapp-\d-[A-Za-z0-9-]{10,}"), MASK),  # Slack app-level
    (re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9/]+"), "hooks.slack.com/services/" + MASK),
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"), MASK),
    (re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), MASK),  # GitLab
    (re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), MASK),  # Google API key
    (re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"), MASK),  # Stripe
    (re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}"), MASK),  # OpenAI, Anthropic
    # Authorization schemes: "Bearer <token>", "Basic <base64>".
    (re.compile(r"\b(Bearer|Basic|Token|Digest)\s+([A-Za-z0-9\-._~+/]{8,}=*)", re.IGNORECASE),
     _scheme_value),
    # key=value, key: value, "key": "value" where the key names a credential. The key is
    # matched as a whole token and judged in the callback: a regex that searched for the
    # credential word inside the token backtracked cubically on long tokens.
    (re.compile(
        r"(?<![\w.-])(?P<key>[\w.-]+)(?P<sep>[\"']?\s*[:=]\s*)"
        r"(?P<value>\"[^\"]*\"|'[^']*'|(?:(?:Bearer|Basic|Token)\s+)?[^\s\"',;&}\]]+)",
        re.IGNORECASE), _key_value),
    # Any key=value whose value is long and random.
    (re.compile(r"(?<![\w.-])(?P<key>[A-Za-z_][\w.-]*)(?P<sep>[\"']?\s*[:=]\s*[\"']?)"
                r"(?P<value>[A-Za-z0-9+/_\-]{20,}={0,2})(?![\w+/=-])"), _random_value),
)


_KEY_WORDS = re.compile(
    r"passw|pass(?![a-z])|pwd|secret|token|api[-_]?key|apikey|access[-_]?key|private[-_]?key|"
    r"credential|authorization|auth|client[-_]?secret|dsn|cookie",
    re.IGNORECASE,
)


def _keep_reference_keys(match: re.Match[str]) -> str:
    """Mask the value when the key names a credential; `secretName: x` only points at one."""
    key = match.group("key").strip("\"'")
    if not _KEY_WORDS.search(key) or not looks_secret(key):
        return match.group(0)
    return _key_value(match)


def redact(text: str) -> str:
    """`text` with every credential-looking value replaced by `[REDACTED]`."""
    if not text:
        return text
    for pattern, replacement in _RULES:
        if replacement is _key_value:
            text = pattern.sub(_keep_reference_keys, text)
        else:
            text = pattern.sub(replacement, text)
    return text


def redact_data(obj: Any) -> Any:
    """A copy of nested data with `redact` applied to every string, and the string value of
    every key that names a credential (`{"password": "x"}`) masked whole."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {
            key: MASK if isinstance(value, str) and value and isinstance(key, str)
            and looks_secret(key) else redact_data(value)
            for key, value in obj.items()
        }
    if isinstance(obj, list | tuple):
        return [redact_data(item) for item in obj]
    return obj


def redact_env(env: list[dict[str, Any]] | None) -> list[dict[str, str]]:
    """A container's env as `{name, value}` pairs safe to show.

    Values of variables whose names look secret are masked; `valueFrom` is shown as the
    reference it is ("secret payment-api/token"), since the value itself is never read.
    """
    shown: list[dict[str, str]] = []
    for variable in env or []:
        name = str(variable.get("name", ""))
        source = variable.get("valueFrom") or {}
        if ref := source.get("secretKeyRef"):
            value = f"<from secret {ref.get('name', '?')}/{ref.get('key', '?')}>"
        elif ref := source.get("configMapKeyRef"):
            value = f"<from configmap {ref.get('name', '?')}/{ref.get('key', '?')}>"
        elif ref := source.get("fieldRef"):
            value = f"<from field {ref.get('fieldPath', '?')}>"
        elif ref := source.get("resourceFieldRef"):
            value = f"<from resource {ref.get('resource', '?')}>"
        elif looks_secret(name) and variable.get("value"):
            value = MASK
        else:
            value = redact(str(variable.get("value", "")))
        shown.append({"name": name, "value": value})
    return shown
