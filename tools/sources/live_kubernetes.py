"""The live cluster source: a real Kubernetes API server through the `kubernetes` client.

Endpoints come from `tools.sources.kube_api`, the same declaration the Helm chart's RBAC
is derived from, so a call the source makes is always a call the chart grants. Requests
go through the client's generic `param_serialize`/`call_api` (not the typed API classes)
and come back as raw JSON: objects are the plain dicts `kubectl get -o json` prints, with
`kind` and `apiVersion` set on list items and `managedFields` dropped, exactly what the
sandbox serves. The client is synchronous, so every request runs in a worker thread with
a connect and read timeout; the event loop never waits on the network.

API errors become `BackendError`s a human can act on (tools.sources._kube_errors): a 403
names the RBAC verb and resource that are missing, a 404 says what was not found, an
unreachable server says where it tried. Secrets are refused before any request
(`resource_for`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import urllib3
from kubernetes.client import ApiClient, Configuration
from kubernetes.client.exceptions import ApiException
from kubernetes.config import ConfigException, load_incluster_config, load_kube_config

from engines.errors import BackendError
from tools.sources._kube_errors import (
    SOURCE,
    HttpStatusError,
    api_error,
    connection_reason,
    identity_text,
    status_message,
)
from tools.sources.base import KubeObject
from tools.sources.kube_api import POD_LOG, KubeResource, resource_for
from tools.sources.transient import failure

log = logging.getLogger(__name__)

_PAGE = 500  # objects per list request; big clusters are read in pages
_MAX_OBJECTS = 20_000  # a list stops here rather than exhaust memory
_MAX_LOG_BYTES = 8 * 2**20

Query = list[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Access:
    """One SelfSubjectAccessReview answer: may this identity do `verb` on `resource`?"""

    verb: str
    resource: str
    group: str
    allowed: bool
    reason: str = ""


class KubernetesCluster:
    """A read-only ClusterSource over the Kubernetes API (see the module docstring)."""

    def __init__(
        self,
        api_client: ApiClient,
        *,
        timeout: float = 15.0,
        connect_timeout: float = 5.0,
        description: str = "",
    ) -> None:
        self._api = api_client
        self._timeout = (connect_timeout, timeout)
        self.description = description or f"kubernetes {self.server}"

    @classmethod
    def from_kubeconfig(
        cls, path: str | None = None, context: str | None = None, *, timeout: float = 15.0
    ) -> KubernetesCluster:
        """From a kubeconfig file (None: $KUBECONFIG or ~/.kube/config) and context.

        Loading reads files and may run an exec credential plugin: call it off the loop.
        """
        configuration = Configuration()
        try:
            load_kube_config(config_file=path, context=context,
                             client_configuration=configuration)
        except (ConfigException, OSError, ValueError) as exc:
            where = path or "$KUBECONFIG or ~/.kube/config"
            raise BackendError(f"cannot load the kubeconfig {where}"
                               f"{f' (context {context})' if context else ''}: {exc}") from None
        label = f"kubernetes context {context}" if context else "kubernetes (kubeconfig)"
        return cls(_client(configuration), timeout=timeout,
                   description=f"{label} at {configuration.host}")

    @classmethod
    def in_cluster(cls, *, timeout: float = 15.0) -> KubernetesCluster:
        """From the pod's service account (token, CA and KUBERNETES_SERVICE_HOST)."""
        configuration = Configuration()
        try:
            load_incluster_config(client_configuration=configuration)
        except ConfigException as exc:
            raise BackendError(f"not running in a cluster with a service account: {exc}") from None
        return cls(_client(configuration), timeout=timeout,
                   description=f"kubernetes in-cluster at {configuration.host}")

    @property
    def server(self) -> str:
        return str(self._api.configuration.host)

    def close(self) -> None:
        self._api.close()

    # ------------------------------------------------------------------ ClusterSource

    async def list_objects(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: Mapping[str, str] | None = None,
        field_selector: Mapping[str, str] | None = None,
    ) -> list[KubeObject]:
        resource = resource_for(kind)
        query: Query = []
        if label_selector:
            query.append(("labelSelector", _selector(label_selector)))
        if field_selector:
            query.append(("fieldSelector", _selector(field_selector)))
        scope = namespace if resource.namespaced else None
        return await asyncio.to_thread(self._list, resource, scope, query)

    async def get_object(self, kind: str, namespace: str, name: str) -> KubeObject | None:
        resource = resource_for(kind)
        scope = namespace if resource.namespaced else None
        path = resource.path(scope, name)
        try:
            body = await asyncio.to_thread(self._request, "GET", path)
        except HttpStatusError as exc:
            if exc.status == 404:
                return None
            raise api_error(exc, "get", resource.plural, resource.group, scope, name,
                            server=self.server, namespaced=resource.namespaced) from None
        return _clean(json.loads(body), resource)

    async def pod_logs(
        self,
        namespace: str,
        pod: str,
        container: str | None = None,
        *,
        previous: bool = False,
        tail_lines: int | None = None,
        since: datetime | None = None,
    ) -> str:
        query: Query = [("limitBytes", str(_MAX_LOG_BYTES))]
        if container:
            query.append(("container", container))
        if previous:
            query.append(("previous", "true"))
        if tail_lines is not None:
            query.append(("tailLines", str(max(0, tail_lines))))
        if since is not None:
            query.append(("sinceTime", since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")))
        path = POD_LOG.path(namespace, pod)
        try:
            body = await asyncio.to_thread(self._request, "GET", path, query, accept="*/*")
        except HttpStatusError as exc:
            if exc.status == 404:
                raise BackendError(f'pods "{pod}" not found in namespace "{namespace}"') from None
            raise api_error(exc, "get", POD_LOG.resource, POD_LOG.parent.group, namespace,
                            pod, server=self.server) from None
        text = body.decode("utf-8", errors="replace")
        if not text and not previous:
            await self._explain_empty_log(namespace, pod, container)
        return text

    async def _explain_empty_log(self, namespace: str, pod: str, container: str | None) -> None:
        """An empty current log of a container that never started says why, as the kubelet
        does; the API server answers an empty body for a pod with no node yet."""
        try:
            obj = await self.get_object("Pod", namespace, pod)
        except BackendError:  # the empty log stands; the pod's status is a bonus
            return
        status = (obj or {}).get("status") or {}
        for entry in (status.get("containerStatuses") or []) + (
                status.get("initContainerStatuses") or []):
            if container not in (None, entry.get("name")):
                continue
            waiting = (entry.get("state") or {}).get("waiting")
            if waiting is not None:
                reason = waiting.get("reason") or "ContainerCreating"
                raise BackendError(
                    f'container "{entry.get("name")}" in pod "{pod}" is waiting to start: '
                    f"{reason}"
                )

    # ------------------------------------------------------------------ identity checks

    async def version(self) -> dict[str, Any]:
        """The server's /version: proves it is reachable (any identity may read it)."""
        try:
            body = await asyncio.to_thread(self._request, "GET", "/version")
        except HttpStatusError as exc:
            raise api_error(exc, "get", "version", "", None, None, server=self.server,
                            namespaced=False) from None
        return dict(json.loads(body))

    async def whoami(self) -> str:
        """The authenticated user name (SelfSubjectReview), or "" where the API lacks it."""
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        try:
            body = await asyncio.to_thread(
                self._request, "POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                body=review)
        except HttpStatusError as exc:
            if exc.status == 401:
                raise api_error(exc, "create", "selfsubjectreviews", "authentication.k8s.io",
                                None, None, server=self.server, namespaced=False) from None
            return ""
        info = (json.loads(body).get("status") or {}).get("userInfo") or {}
        return str(info.get("username", ""))

    async def can_i(
        self, verb: str, resource: str, group: str = "", namespace: str | None = None
    ) -> Access:
        """SelfSubjectAccessReview: whether this identity may `verb` the `resource`
        (`pods/log` style subresources included), in a namespace or cluster-wide."""
        plural, _, sub = resource.partition("/")
        attributes: dict[str, str] = {"verb": verb, "resource": plural, "group": group}
        if sub:
            attributes["subresource"] = sub
        if namespace:
            attributes["namespace"] = namespace
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                  "spec": {"resourceAttributes": attributes}}
        try:
            body = await asyncio.to_thread(
                self._request, "POST",
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body=review)
        except HttpStatusError as exc:
            raise api_error(exc, "create", "selfsubjectaccessreviews", "authorization.k8s.io",
                            None, None, server=self.server, namespaced=False) from None
        status = json.loads(body).get("status") or {}
        return Access(verb, resource, group, bool(status.get("allowed")),
                      str(status.get("reason") or status.get("evaluationError") or ""))

    async def check(self) -> list[str]:
        """Reachable and authenticated, or a BackendError saying why. An identity that may
        not list pods cluster-wide is still usable (a namespaced Role): that is a note."""
        version = await self.version()
        user = await self.whoami()
        notes = [f"Kubernetes {version.get('gitVersion', '?')} as {user or 'unknown user'}"]
        if not (await self.can_i("list", "pods")).allowed:
            notes.append(f"{identity_text(user)} cannot list pods in all namespaces (needs RBAC "
                         "verb 'list' on 'pods'): only the namespaces granted will answer")
        return notes

    # ------------------------------------------------------------------ plumbing (threads)

    def _list(self, resource: KubeResource, namespace: str | None, query: Query) -> list[
            KubeObject]:
        """Every page of a list; runs in a worker thread."""
        found: list[KubeObject] = []
        token = ""
        while True:
            page = [*query, ("limit", str(_PAGE))] + ([("continue", token)] if token else [])
            try:
                body = json.loads(self._request("GET", resource.path(namespace), page))
            except HttpStatusError as exc:
                if exc.status == 410 and token:  # the continue token expired: start over
                    found, token = [], ""
                    continue
                raise api_error(exc, "list", resource.plural, resource.group, namespace,
                                None, server=self.server,
                                namespaced=resource.namespaced) from None
            found.extend(_clean(item, resource) for item in body.get("items") or [])
            token = str((body.get("metadata") or {}).get("continue") or "")
            if token and len(found) >= _MAX_OBJECTS:
                log.warning("listing %s stopped at %d objects", resource.plural, len(found))
            if not token or len(found) >= _MAX_OBJECTS:
                return found

    def _request(
        self,
        method: str,
        path: str,
        query: Iterable[tuple[str, str]] = (),
        *,
        body: Any = None,
        accept: str = "application/json",
    ) -> bytes:
        """One HTTP request with the client's auth and TLS; raises HttpStatusError on non-2xx."""
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = "application/json"
        try:
            method, url, headers, payload, _ = self._api.param_serialize(
                method, path, query_params=list(query), header_params=headers, body=body,
                auth_settings=["BearerToken"])
            response = self._api.call_api(method, url, header_params=headers, body=payload,
                                          _request_timeout=self._timeout)
            data = response.read()
        except ApiException as exc:  # the client wraps TLS failures as status 0
            raise failure(
                f"TLS with the Kubernetes API server at {self.server} failed (check the CA "
                f"of the kubeconfig cluster): {str(exc.reason).splitlines()[-1]}", exc,
                source=SOURCE) from None
        except urllib3.exceptions.HTTPError as exc:  # refused, reset, timed out: retried
            raise failure(
                f"cannot reach the Kubernetes API server at {self.server}: "
                f"{connection_reason(exc)}", exc, source=SOURCE) from None
        if not 200 <= response.status < 300:
            raise HttpStatusError(response.status, status_message(data) or str(response.reason))
        return bytes(data or b"")


def _client(configuration: Configuration) -> ApiClient:
    """An ApiClient that fails fast: no retry of its own, so a dead server is reported in
    seconds; the toolset retries transient failures within the tool's budget (tools.retry)."""
    configuration.retries = 0
    return ApiClient(configuration)


def _selector(pairs: Mapping[str, str]) -> str:
    return ",".join(f"{key}={value}" for key, value in pairs.items())


def _clean(obj: dict[str, Any], resource: KubeResource) -> KubeObject:
    """An object as `kubectl get -o json` prints it: kind and apiVersion set (list items
    lack them), managedFields hidden."""
    obj.setdefault("kind", resource.kind)
    obj.setdefault("apiVersion", resource.api_version)
    (obj.get("metadata") or {}).pop("managedFields", None)
    return obj
