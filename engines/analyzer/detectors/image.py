"""image_pull: the image cannot be pulled (wrong name or tag, registry auth).

Signals: containers waiting in ErrImagePull / ImagePullBackOff / InvalidImageName, and
"Failed to pull image" events, whose message says why (not found, unauthorized...).
"""

from __future__ import annotations

from engines.analyzer.candidates import Candidate
from engines.analyzer.detectors import _common as t
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.scope import Scope

PULL_STATES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
               "RegistryUnavailable")
PULL_MESSAGES = ("Failed to pull image", "pull access denied", "manifest unknown",
                 "not found", "unauthorized", "authentication required", "Back-off pulling image",
                 "ErrImagePull", "ImagePullBackOff", "no basic auth credentials",
                 "denied", "forbidden", "InvalidImageName")
AUTH = ("unauthorized", "authentication required", "pull access denied", "denied",
        "no basic auth credentials", "forbidden", "401", "403")


def _fix(ref: Ref, image: str, message: str) -> str:
    what = f"image {image}" if image else "its image"
    if t.phrase_in(message, AUTH):
        return (f"Give {ref.kind} {ref.namespace}/{ref.name} registry credentials that can pull "
                f"{what} (fix the imagePullSecret or the registry permissions).")
    return (f"Point {ref.kind} {ref.namespace}/{ref.name} at an image that exists ({what} "
            "cannot be pulled: check the name and tag), or roll back to the previous image.")


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    images: dict[Ref, str] = {}
    messages: dict[Ref, list[str]] = {}

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
        candidate(owner).add(0.45, event.message[:140], (event.message[:60],), event.source,
                             t.EVENT_TOOLS, "pull-event")
    for ref, entry in found.items():
        entry.fix = _fix(ref, images.get(ref, ""), " ".join(messages.get(ref, [])))
        entry.follow(t.DESCRIBE, ref.pod_args, f"see why {ref.name}'s image does not pull")
        entry.follow(t.EVENTS, ref.object_args, f"read the pull errors of {ref.name}")
    return [c for c in found.values() if c.clues]
