"""What a Kubernetes API server's refusal means, in one line a human can act on.

A 403 names the RBAC verb and resource that are missing (and whose identity lacks them), a
401 says the credentials were rejected, a 404 says what was not found, a 400 passes the API
server's own explanation on, and an overloaded or restarting server is marked for a retry.
Apart from tools.sources.live_kubernetes because it is wording over a status and a path,
with no request in it: the source makes the calls, this says what their failures mean.
"""

from __future__ import annotations

import json
import re
from typing import Any

import urllib3

from engines.errors import BackendError, BackendQueryError, BackendUnavailableError
from tools.sources.transient import transient_status

SOURCE = "cluster"  # the `Sources` field this source fills, named by its errors
_USER = re.compile(r'User "([^"]+)" cannot')


class HttpStatusError(Exception):
    """A non-2xx answer, before it is turned into a BackendError with its context."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def api_error(
    exc: HttpStatusError,
    verb: str,
    resource: str,
    group: str,
    namespace: str | None,
    name: str | None,
    *,
    server: str,
    namespaced: bool = True,
) -> BackendError:
    """An API error as one line that says what failed and what to do.

    A 400 is the API server's own explanation (an unsupported field selector, an
    invalid container, a previous instance that does not exist) and passes as is.
    """
    if exc.status == 400:
        return BackendQueryError(exc.message)
    plural, _, sub = resource.partition("/")
    what = f"the {sub} of {plural.removesuffix('s')} {name}" if sub else (
        f"{plural}/{name}" if name else plural)
    where = (f" in namespace {namespace}" if namespace
             else " in any namespace" if namespaced else "")
    if exc.status == 403:
        user = match.group(1) if (match := _USER.search(exc.message)) else ""
        in_group = f" in API group '{group}'" if group else ""
        return BackendError(
            f"forbidden: {identity_text(user)} cannot {verb} {what}{where} "
            f"(needs RBAC verb '{verb}' on '{resource}'{in_group})"
        )
    if exc.status == 401:
        return BackendError(
            f"unauthorized: the Kubernetes API server at {server} rejected the "
            "credentials (expired token or wrong kubeconfig user)"
        )
    if exc.status == 404:
        return BackendError(f"not found: {what}{where} ({exc.message})")
    message = f"Kubernetes API error {exc.status} on {verb} {what}{where}: {exc.message}"
    if transient_status(exc.status):  # overloaded, restarting, rate limited: retried
        return BackendUnavailableError(message, source=SOURCE)
    return BackendError(message)


def status_message(data: bytes | None) -> str:
    """The `message` of a Status body, or the body itself (the kubelet answers text)."""
    text = (data or b"").decode("utf-8", errors="replace").strip()
    try:
        parsed = json.loads(text)
    except ValueError:
        return text[:500]
    if isinstance(parsed, dict) and parsed.get("message"):
        return str(parsed["message"])
    return text[:500]


def identity_text(user: str) -> str:
    """`system:serviceaccount:triage:bot` → "the service account triage/bot"."""
    if user.startswith("system:serviceaccount:"):
        namespace, _, name = user.removeprefix("system:serviceaccount:").partition(":")
        return f"the service account {namespace}/{name}"
    return f'user "{user}"' if user else "the service account"


def connection_reason(exc: urllib3.exceptions.HTTPError) -> str:
    """The root cause of a urllib3 failure, without the retry wrapper's noise."""
    reason: Any = getattr(exc, "reason", None) or exc
    text = str(reason)
    if "Connection refused" in text:
        return "connection refused"
    if isinstance(reason, urllib3.exceptions.TimeoutError) or "timed out" in text:
        return "timed out"
    if "Name or service not known" in text or "nodename nor servname" in text:
        return "unknown host"
    return text
