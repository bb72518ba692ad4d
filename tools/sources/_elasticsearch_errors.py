"""What each failure of the Elasticsearch client means, as an error that says what to do.

A 401 names the settings that hold the credentials, a 403 the index privileges that are
missing, a 404 the URL and index pattern to check; a 5xx, a 429, a timeout or an
unreachable server goes through tools.sources.transient, which marks the passing ones for
the toolset to retry. Apart from
tools.sources.live_elasticsearch because it is the client's exception tree read once, not
the queries the log source asks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from elasticsearch import (
    ApiError,
    AuthenticationException,
    AuthorizationException,
    BadRequestError,
    NotFoundError,
    SSLError,
    TransportError,
    UnsupportedProductError,
)
from elasticsearch import ConnectionError as EsConnectionError
from elasticsearch import ConnectionTimeout as EsConnectionTimeout

from engines.errors import BackendError, BackendQueryError
from tools.sources.transient import failure

SOURCE = "logs"  # the `Sources` field this source fills, named by its errors


async def call_elasticsearch(request: Callable[[], Awaitable[Any]], *, url: str,
                             index: str) -> Any:
    """Run one request of the source at `url` over `index`; every client error becomes a
    BackendError saying what to do. The response's body."""
    try:
        response = await request()
    except UnsupportedProductError:
        raise BackendError(f"the server at {url} is not Elasticsearch") from None
    except AuthenticationException:
        raise BackendError(
            f"Elasticsearch at {url} rejected the credentials (401): check "
            "ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME/ELASTICSEARCH_PASSWORD"
        ) from None
    except AuthorizationException as exc:
        raise BackendError(
            f"forbidden: the Elasticsearch user cannot read {index} (needs the "
            f"index privileges 'read' and 'view_index_metadata' on '{index}'): "
            f"{_reason(exc)}"
        ) from None
    except NotFoundError as exc:
        raise BackendError(f"not found at {url}: {_reason(exc)} (check the URL "
                           f"and TRIAGE_LOG_INDEX={index})") from None
    except BadRequestError as exc:
        raise BackendQueryError(f"Elasticsearch rejected the query: {_reason(exc)}") from None
    except ApiError as exc:  # 5xx and 429 are worth a retry (tools.sources.transient)
        raise failure(f"Elasticsearch error {exc.meta.status}: {_reason(exc)}", exc,
                      source=SOURCE) from None
    except EsConnectionTimeout as exc:
        raise failure(f"Elasticsearch at {url} timed out", exc, source=SOURCE) from None
    except SSLError as exc:
        raise BackendError(f"TLS with Elasticsearch at {url} failed (check "
                           f"ELASTICSEARCH_CA_CERTS): {exc.message}") from None
    except EsConnectionError as exc:
        raise failure(f"cannot reach Elasticsearch at {url}: "
                      f"{_connection_reason(exc)}", exc, source=SOURCE) from None
    except TransportError as exc:
        raise failure(f"Elasticsearch at {url} failed: {exc.message}", exc,
                      source=SOURCE) from None
    return response.body if hasattr(response, "body") else response


def _reason(exc: ApiError) -> str:
    """The root cause Elasticsearch gave, else its error type."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error")
    if isinstance(error, dict):
        causes = error.get("root_cause") or [error]
        first = causes[0] if causes else error
        return str(first.get("reason") or first.get("type") or exc.message)
    return str(error or exc.message)


def _connection_reason(exc: EsConnectionError) -> str:
    text = str(exc.message or exc)
    if "Connection refused" in text or "Connect call failed" in text:
        return "connection refused"
    if "Name or service not known" in text or "nodename nor servname" in text:
        return "unknown host"
    return text
