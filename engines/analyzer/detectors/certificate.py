"""certificate: an expired or mismatched TLS certificate.

Signals: TLS errors in the logs ("x509: certificate has expired", "certificate signed by
unknown authority", "certificate is valid for X, not Y", handshake failures). The culprit
is the workload that serves the bad certificate when it runs in the cluster, else the
workload that logs the error (the cause lies outside the cluster).
"""

from __future__ import annotations

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import LOG_PATTERNS, LOG_TOOLS, SIGNALS
from engines.analyzer.detectors._logs import sightings
from engines.analyzer.detectors._targets import hosts_in, resolve, target_workload
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.scope import Scope

TLS = ("x509", "certificate has expired", "certificate expired", "expired certificate",
       "certificate is not yet valid", "certificate signed by unknown authority",
       "certificate is valid for", "certificate verify failed", "certificate_verify_failed",
       "tls: failed to verify", "tls: bad certificate", "tls handshake", "handshake failure",
       "handshake_failure", "sslhandshakeexception", "pkix path", "unable to find valid "
       "certification path", "ssl routines", "bad certificate", "unknown ca",
       "self signed certificate", "self-signed certificate", "hostname mismatch",
       "doesn't match", "does not match any of the subject alternative names")


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    for sighting in sightings(facts, scope, TLS):
        text = f"{sighting.pattern.example} {sighting.pattern.template}"
        culprit = sighting.workload
        server = None
        for host, port in hosts_in(text):
            target = resolve(host, port, sighting.workload.namespace, facts)
            if (ref := target_workload(target, facts)) is not None:
                server = ref
                break
        if server is not None:
            culprit = server
        entry = found.setdefault(culprit, Candidate("certificate", culprit))
        count = sighting.pattern.count
        weight = (0.65 if count >= 5 or sighting.pattern.previous else 0.4) * sighting.factor
        entry.clues.append(Clue(weight, f"{sighting.workload.name} logs {sighting.quote[:90]!r}",
                                (sighting.quote, sighting.phrase), sighting.pattern.source,
                                LOG_TOOLS, f"tls-{sighting.workload.name}"))
        if sighting.workload != culprit:
            entry.affects += (sighting.workload,)
        if sighting.why:
            entry.demote(0.9, sighting.why)
    for ref, entry in found.items():
        signals = facts.signals_of(ref)
        if signals is not None and signals.get("requests").get("abnormal"):
            entry.clues.append(Clue(0.15, str(signals.get("requests").get("why")),
                                    ("5xx ratio",), signals.source, (SIGNALS,), "tls-errors"))
        entry.fix = (f"Renew or replace the TLS certificate used by {ref.kind} {ref.namespace}/"
                     f"{ref.name} (check its expiry, issuer chain and the names it covers), then "
                     "reload the pods that serve it.")
        entry.followups.append(Followup(LOG_PATTERNS, {"namespace": ref.namespace,
                                                       "text": "certificate"},
                                        "read the TLS errors in full"))
    return list(found.values())
