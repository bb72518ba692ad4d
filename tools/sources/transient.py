"""Which backend failures are worth retrying: the one place that says so.

A failure is *transient* when the very same request may succeed in a moment: the backend
did not answer (connection refused or reset, a timeout) or answered that it cannot now
(HTTP 5xx, 429 Too Many Requests). Everything else is for good: a 4xx says the request
itself is wrong (a bad query, missing privileges, a missing index) and a TLS failure is
configuration; retrying those only delays the answer the model needs.

The live sources call `is_transient` on the client library's own exception (or
`transient_status` on a status they read themselves) and raise `BackendUnavailableError`
for the transient ones; the toolset retries exactly those (tools.retry).
"""

from __future__ import annotations

import aiohttp
import elasticsearch
import httpx
import urllib3.exceptions
from kubernetes.client.exceptions import ApiException

from engines.errors import BackendError, BackendUnavailableError

# 501 Not Implemented and 505 HTTP Version Not Supported are answers, not outages.
_FOR_GOOD_5XX = frozenset({501, 505})


def transient_status(status: int) -> bool:
    """An HTTP status that says "not now" rather than "not this": 5xx and 429."""
    return status == 429 or (500 <= status < 600 and status not in _FOR_GOOD_5XX)


def is_transient(error: BaseException) -> bool:
    """Whether the request that raised `error` may succeed if sent again (module docstring).

    One branch per client library the sources use: the Elasticsearch client (whose
    transport wraps aiohttp), httpx (Prometheus), aiohttp itself, the `kubernetes` client
    and the urllib3 beneath it, and the standard library's timeouts and socket errors.
    """
    match error:
        case elasticsearch.SSLError():  # a ConnectionError subclass, but configuration
            return False
        case elasticsearch.ConnectionTimeout() | elasticsearch.ConnectionError():
            return True
        case elasticsearch.ApiError():
            return transient_status(error.meta.status)
        case httpx.HTTPStatusError():
            return transient_status(error.response.status_code)
        case httpx.TimeoutException() | httpx.NetworkError() | httpx.RemoteProtocolError():
            return True  # connect/read/write failures, timeouts, a connection cut mid-answer
        case aiohttp.ClientResponseError():
            return transient_status(error.status)
        case aiohttp.ClientSSLError() | aiohttp.ClientConnectorCertificateError():
            return False
        case aiohttp.ClientConnectionError() | aiohttp.ServerTimeoutError():
            return True
        case ApiException():
            return transient_status(int(error.status or 0))  # status 0: TLS, for good
        case urllib3.exceptions.MaxRetryError():
            return error.reason is not None and is_transient(error.reason)
        case urllib3.exceptions.SSLError():
            return False
        case (urllib3.exceptions.TimeoutError() | urllib3.exceptions.ProtocolError()
              | urllib3.exceptions.NewConnectionError()):
            return True  # NewConnectionError: refused; ProtocolError: reset or cut short
        case TimeoutError() | ConnectionError():  # asyncio.TimeoutError is TimeoutError
            return True  # ConnectionError: refused, reset, aborted, broken pipe
        case _:
            return False


def failure(message: str, error: BaseException, *, source: str) -> BackendError:
    """The error a source raises for a client exception: `BackendUnavailableError` (retried)
    when the failure is transient, a plain `BackendError` otherwise."""
    if is_transient(error):
        return BackendUnavailableError(message, source=source)
    return BackendError(message)
