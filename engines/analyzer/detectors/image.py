"""image_pull: the image cannot be pulled (wrong name or tag, registry auth, no room).

Signals: containers waiting in ErrImagePull / ImagePullBackOff / InvalidImageName, and
"Failed to pull image" events, whose message says why (not found, unauthorized...). Pulls
refused for want of valid credentials while the CronJob that renews the registry token
fails are that CronJob's fault. An image too big for its nodes' image filesystem ("no space
left on device" while extracting a layer) fills the disk it is pulled onto: the kubelet's
failing image garbage collection on those nodes is its effect, not a node fault of their own.
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors import _common as t
from engines.analyzer.facts import Facts, Observation, Ref
from engines.analyzer.scope import Scope

PULL_STATES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
               "RegistryUnavailable")
PULL_MESSAGES = ("Failed to pull image", "pull access denied", "manifest unknown",
                 "not found", "unauthorized", "authentication required", "Back-off pulling image",
                 "ErrImagePull", "ImagePullBackOff", "no basic auth credentials",
                 "denied", "forbidden", "InvalidImageName")
# The pull itself ran out of room on the node's image filesystem.
NO_ROOM = ("no space left on device", "enospc", "disk quota exceeded", "not enough space")
IMAGE_GC = ("FreeDiskSpaceFailed", "ImageGCFailed")  # a kubelet that cannot free image room
AUTH = ("unauthorized", "authentication required", "pull access denied", "denied",
        "no basic auth credentials", "forbidden", "401", "403")


def _fix(ref: Ref, image: str, message: str) -> str:
    what = f"image {image}" if image else "its image"
    if t.phrase_in(message, NO_ROOM):
        return (f"{what.capitalize()} of {ref.kind} {ref.namespace}/{ref.name} does not fit the "
                "image filesystem of the nodes it is pulled onto: give that node pool a bigger "
                "root or image volume (or pin the workload to nodes that have one), slim the "
                "image, and keep image garbage collection able to free room.")
    if t.phrase_in(message, AUTH):
        return (f"Give {ref.kind} {ref.namespace}/{ref.name} registry credentials that can pull "
                f"{what} (fix the imagePullSecret or the registry permissions).")
    return (f"Point {ref.kind} {ref.namespace}/{ref.name} at an image that exists ({what} "
            "cannot be pulled: check the name and tag), or roll back to the previous image.")


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    images: dict[Ref, str] = {}
    messages: dict[Ref, list[str]] = {}
    no_room: dict[Ref, tuple[str, Observation | None]] = {}

    def candidate(ref: Ref) -> Candidate:
        return found.setdefault(ref, Candidate("image_pull", ref))

    for ref, pod in t.owned_pods(facts):
        for container in pod.containers:
            if container.waiting in PULL_STATES:
                entry = candidate(ref)
                entry.add(0.7, f"container {container.name} is waiting in {container.waiting}",
                          (container.waiting,), pod.described, (t.DESCRIBE, t.PODS), "pull-state")
                images[ref] = container.image
                if container.waiting_message:
                    messages.setdefault(ref, []).append(container.waiting_message)
                    entry.add(0.2, container.waiting_message[:120],
                              (container.waiting_message[:60],), pod.described, (t.DESCRIBE,),
                              "pull-message")
        if not pod.containers and pod.status.removeprefix("Init:") in PULL_STATES:
            candidate(ref).add(0.6, f"pod {pod.name} is {pod.status}", (pod.status,), pod.source,
                               (t.PODS,), "pull-row")
    for ref, workload in facts.workloads.items():
        if pulling := sum(n for s, n in workload.statuses.items() if s in PULL_STATES):
            candidate(ref).add(0.55, f"{pulling} pod(s) cannot pull their image",
                               tuple(s for s in workload.statuses if s in PULL_STATES),
                               workload.source, (t.WORKLOADS,), "pull-rollup")
            images.setdefault(ref, next(iter(workload.images), ""))
    for event in t.recent_events(facts, warnings=True):
        if event.reason not in ("Failed", "BackOff", "ErrImagePull", "ImagePullBackOff") or \
                not t.phrase_in(event.message, PULL_MESSAGES):
            continue
        if "image" not in event.message.lower():
            continue
        if (owner := t.event_workload(facts, event)) is None:
            continue
        messages.setdefault(owner, []).append(event.message)
        if (phrase := t.phrase_in(event.message, NO_ROOM)) is not None:
            no_room.setdefault(owner, (phrase, event.source))
        candidate(owner).add(0.45, event.message[:140], (event.message[:60],), event.source,
                             t.EVENT_TOOLS, "pull-event")
    for ref, (phrase, seen) in no_room.items():
        _fills_nodes(found[ref], ref, facts, phrase, seen)
    for ref, entry in found.items():
        entry.fix = _fix(ref, images.get(ref, ""), " ".join(messages.get(ref, [])))
        entry.follow(t.DESCRIBE, ref.pod_args, f"see why {ref.name}'s image does not pull")
        entry.follow(t.EVENTS, ref.object_args, f"read the pull errors of {ref.name}")
    denied = {r for r, said in messages.items() if t.phrase_in(" ".join(said), AUTH)}
    registries = {_registry(images.get(r, "")) for r in denied} - {""}
    refused = sorted((r for r in found if r in denied or _registry(images.get(r, ""))
                      in registries), key=str)  # the same registry refuses them all
    refresher = _failing_refresher(facts) if refused else None
    return [c for c in found.values() if c.clues] + (
        [_stale_credentials(refresher, refused, facts)] if refresher else [])


# A scheduled job that renews registry credentials (short-lived registry tokens are written
# into the pull Secrets every few hours): when its runs fail, the tokens in the Secrets
# expire and every pull that needs them is refused, while running pods go on.
REFRESHER = re.compile(r"cred|token|registry|pull-?secret|docker-?config|ecr|gcr|acr|"
                       r"image-?pull", re.IGNORECASE)


def _fills_nodes(entry: Candidate, ref: Ref, facts: Facts, phrase: str,
                 seen: Observation | None) -> None:
    """The nodes whose image filesystem the pull fills: those its waiting pods are on, and
    those whose kubelet cannot free room for images meanwhile."""
    nodes = sorted({pod.node for owner, pod in t.owned_pods(facts) if owner == ref and pod.node
                    and any(c.waiting in PULL_STATES for c in pod.containers)} |
                   {e.name for e in t.recent_events(facts, warnings=True)
                    if e.kind == "Node" and e.reason in IMAGE_GC})
    if not nodes:
        return
    entry.affects = tuple(dict.fromkeys((*entry.affects, *(Ref("Node", "", n) for n in nodes))))
    entry.add(0.3, f"its image does not fit the image filesystem of {len(nodes)} node(s) "
              f"({', '.join(nodes[:2])}): {phrase} while pulling", (phrase,), seen,
              t.EVENT_TOOLS, "fills-image-filesystem")


def _registry(image: str) -> str:
    """The registry host of an image reference ("" for Docker Hub's short names)."""
    first = image.split("/", 1)[0]
    return first if "/" in image and ("." in first or ":" in first) else ""


def _failing_refresher(facts: Facts) -> Ref | None:
    """The CronJob whose name says it refreshes registry credentials and whose runs fail."""
    return next((ref for ref in sorted(facts.workloads, key=str) if ref.kind == "CronJob"
                 and REFRESHER.search(ref.name) and t.failed_runs(facts, ref)), None)


def _stale_credentials(refresher: Ref, refused: list[Ref], facts: Facts) -> Candidate:
    entry = Candidate("image_pull", refresher, affects=tuple(refused))
    last = t.failed_runs(facts, refresher)[-1]
    failed = facts.workloads[last]
    names = ", ".join(r.name for r in refused[:3])
    entry.clues.append(Clue(0.55, f"registry credentials are refused for {names}, while "
                            f"{refresher.name}, which renews them, fails", ("401", "unauthorized"),
                            failed.source, (t.WORKLOADS,), "stale-credentials"))
    entry.clues.append(Clue(0.3, f"{last.name}: {failed.problems[0][:90]}",
                            (failed.problems[0][:50],), failed.source, (t.WORKLOADS,),
                            "refresher-fails"))
    entry.fix = (f"Fix CronJob {refresher.namespace}/{refresher.name} (read why its last run "
                 "failed: often the permission to get a registry token), then run it by hand "
                 f"(`kubectl create job --from=cronjob/{refresher.name} -n "
                 f"{refresher.namespace}`) so the pull Secrets get a valid token again; the "
                 "registry is fine.")
    entry.follow(t.POD_LOGS, {"namespace": refresher.namespace, "pod": last.name},
                 f"read why {refresher.name}'s last run failed")
    return entry
