"""certificate: an expired or mismatched TLS certificate, and whose certificate it is.

Signals: TLS errors in the logs ("x509: certificate has expired", "certificate signed by
unknown authority", "certificate is valid for X, not Y", handshake failures). Who is at
fault depends on who reports the error and how:
- a side that receives an alert ("remote error: tls: bad certificate", "sslv3 alert
  certificate expired", "Received fatal alert: certificate_expired") had its own
  certificate refused by its peer: the logger is the culprit, client or server alike;
- a side that fails to verify its peer's certificate blames the peer. As a client calling
  a host, that is the server behind the host when it runs in the cluster; when it names no
  host, the one in-cluster server whose certificate other clients refuse (or that receives
  their alerts); else the logger (the cause lies outside the cluster). As a server
  answering a handshake ("handshake error from 10.0.3.7", "client CN=relay.billing.svc"),
  it is the client: named in the line, found by its pod's IP, or among the server's
  callers that fail with TLS errors;
- a line about the logger's own files or keys ("client certificate ... has expired",
  "tls.crt", "serving certificate") blames the logger, and so does a pinning failure (the
  client pins a key its peer no longer serves: its pin set is stale).
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Followup
from engines.analyzer.detectors import _common as t
from engines.analyzer.detectors._logs import Sighting, sightings
from engines.analyzer.detectors._targets import (
    behind_ingress,
    callers_by_callee,
    hosts_in,
    resolve,
    target_workload,
    workload_at,
)
from engines.analyzer.facts import Facts, LogPattern, Ref
from engines.analyzer.scope import Scope

TLS = ("x509", "certificate has expired", "certificate expired", "expired certificate",
       "certificate is not yet valid", "certificate signed by unknown authority",
       "certificate is valid for", "certificate verify failed", "certificate_verify_failed",
       "tls: failed to verify", "tls: bad certificate", "tls handshake", "handshake failure",
       "handshake_failure", "sslhandshakeexception", "pkix path", "unable to find valid "
       "certification path", "ssl routines", "bad certificate", "unknown ca",
       "self signed certificate", "self-signed certificate", "hostname mismatch",
       "doesn't match", "does not match any of the subject alternative names",
       "alert_certificate", "alert_bad_certificate", "alert_unknown_ca", "fatal alert",
       "ssl alert number", "pinning failure", "pin set", "pin mismatch", "pin validation",
       "sslpeerunverifiedexception")
PULLS = ("pull image", "pulling image", "failed to pull", "errimagepull", "registry",
         "manifest")
ALERT = re.compile(
    r"remote error: tls: [a-z ]*(?:certificate|unknown ca|authority)"
    r"|alert[ _](?:bad|unsupported|expired|revoked|unknown)[ _]certificate"
    r"|alert[ _]certificate[ _](?:expired|unknown|revoked|required)|alert[ _]unknown[ _]ca"
    r"|fatal alert: ?(?:bad_?certificate|certificate_?\w+|unknown_?ca|unsupported_?certificate)"
    r"|ssl alert number (?:4[2-68]|116)\b", re.IGNORECASE)
"""An alert received from the peer: it refused this side's own certificate."""
_PEER = r"(?:\bfrom (?:client |peer )?|\b(?:client|remote[_ ]addr|peer)[:=] ?)\[?"
SERVING = re.compile(
    _PEER + r"\d{1,3}(?:\.\d{1,3}){3}|handshake error from|\bfrom client\b"
    r"|(?:verify|verifying|reject\w*|invalid|bad|untrusted|unknown) client cert"
    r"|client cert\w* (?:verification|rejected|is invalid|not trusted|from|chain)"
    r"|client ssl certificate|no client certificate|client (?:didn't|did not) provide",
    re.IGNORECASE)
"""A server answering a handshake: the certificate it failed to verify is a client's."""
OWN = re.compile(r"\b(?:own|our|local|serving) certificate|tls\.crt|\.pem\b|\.crt\b"
                 r"|\bkey ?pair\b|certificate file", re.IGNORECASE)
PINNING = re.compile(r"\bpin(?:ning|ned)? (?:failure|set|mismatch|validation)|pins? did not "
                     r"match|sslpeerunverifiedexception", re.IGNORECASE)
"""A client that pins its peer's key refused the peer's new certificate: the stale pins are
the client's own configuration, however valid the new certificate is."""
SIGNER = re.compile(r"\b(?:csr|certificate) signing (?:error|failed)|\berror signing\b",
                    re.IGNORECASE)
"""A certificate authority in the cluster (a mesh's issuer) that fails to sign what its
clients ask for."""
UNSIGNED = re.compile(r"\bfailed to sign\b|\bsigning certificate\b", re.IGNORECASE)
"""A workload whose certificate could not be signed: its issuer's fault, not its own."""
_IDENTITY = re.compile(r"spiffe://[^/\s\"']+/ns/([a-z0-9-]+)/sa/([a-z0-9-]+)")
CLIENT_CERT = re.compile(r"\bclient[ -]cert", re.IGNORECASE)
_SUBJECT = re.compile(r"\bCN\s*=\s*\"?([A-Za-z][-A-Za-z0-9_.]*[A-Za-z0-9])")
_PEER_IP = re.compile(_PEER + r"(\d{1,3}(?:\.\d{1,3}){3})", re.IGNORECASE)
_CERTIFICATE = re.compile(r"certificate|x509|unknown ca|verif|pkix", re.IGNORECASE)
_TLS_TROUBLE = re.compile(r"\btls\b|\bssl|handshake|certificate|x509", re.IGNORECASE)


def whose(text: str) -> str:
    """Whose certificate a TLS error line says is bad: "own" (the logger's), "client" (a
    client the logger serves) or "server" (the host the logger calls)."""
    if ALERT.search(text) or PINNING.search(text):
        return "own"
    serving = SERVING.search(text) is not None
    if OWN.search(text) or (not serving and CLIENT_CERT.search(text)):
        return "own"
    return "client" if serving else "server"


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    clients: set[Ref] = set()  # workloads whose client certificate (mTLS) is at fault
    named: set[Ref] = set()  # in-cluster servers whose certificate clients that name them refuse
    alerted: set[Ref] = set()  # servers that receive their clients' TLS alerts
    unnamed: list[tuple[Sighting, float]] = []  # a peer's certificate refused, no host named
    pinned: set[Ref] = set()  # clients whose pinned keys their peer no longer serves
    graph: dict[Ref, set[Ref]] | None = None
    outside: set[str] = set()  # public hosts whose certificate is refused: an Ingress's?
    seen = sightings(facts, scope, TLS)
    signers = sorted({s.workload for s in seen
                      if SIGNER.search(f"{s.pattern.example} {s.pattern.template}")}, key=str)
    for sighting in seen:
        text = f"{sighting.pattern.example} {sighting.pattern.template}"
        logger = sighting.workload
        count = sighting.pattern.count
        weight = (0.65 if count >= 5 or sighting.pattern.previous else 0.4) * sighting.factor
        signing = logger in signers and SIGNER.search(text) is not None
        if signers and (signing or UNSIGNED.search(text)):
            _unsigned(found, facts, sighting, logger if signing else signers[0], weight, text)
            continue
        side = whose(text)
        if side == "own":
            pins = PINNING.search(text) is not None
            if pins:
                pinned.add(logger)
            entry = _clue(found, logger, sighting, weight, f"{logger.name} logs "
                          f"{sighting.quote[:90]!r}: " + ("the keys it pins no longer match "
                          "its peer's certificate" if pins else "its own certificate is at "
                          "fault"), f"tls-{logger.name}")
            entry.affects += tuple(s for s in _servers(text, logger, facts) if s != logger)
            if not SERVING.search(text):
                clients.add(logger)
            entries = [entry]
        elif side == "client":
            if not _CERTIFICATE.search(text):
                continue  # a client hung up mid-handshake ("EOF"): nothing about certificates
            graph = callers_by_callee(facts) if graph is None else graph
            entries = _refused(found, facts, sighting, graph, weight)
            clients.update(e.culprit for e in entries if e.culprit != logger)
        else:
            if (server := next(iter(_servers(text, logger, facts)), None)) is None:
                unnamed.append((sighting, weight))
                outside.update(h for h, _ in hosts_in(text) if resolve(
                    h, "", logger.namespace, facts).external)
                continue
            entry = _clue(found, server, sighting, weight, f"{logger.name} logs "
                          f"{sighting.quote[:90]!r}", f"tls-{logger.name}")
            entry.affects += (logger,) if logger != server else ()
            named.add(server)
            entries = [entry]
        if side == "own" and SERVING.search(text):
            alerted.add(logger)
        for entry in entries if sighting.why else ():
            entry.demote(0.9, sighting.why)
    _unnamed(found, facts, unnamed, named, alerted)
    _events(facts, found)
    for ref, entry in found.items():
        entry.affects = tuple(dict.fromkeys(a for a in entry.affects if a != ref))
        role = ("signer" if ref in signers else "pinned" if ref in pinned
                else "client" if ref in clients else "server")
        _finish(facts, ref, entry, role)
        if outside and not facts.ingresses_read:
            entry.followups.insert(0, Followup(t.INGRESSES, {}, "see whether an Ingress of the "
                                               f"cluster serves {sorted(outside)[0]}"))
    return list(found.values())


def _unsigned(found: dict[Ref, Candidate], facts: Facts, sighting: Sighting, signer: Ref,
              weight: float, text: str) -> None:
    """A certificate the cluster's issuer could not sign: the issuer's own signing
    certificate is at fault, and every workload it fails to sign for is its victim (named
    by the line's workload identities, or the logger asking for one)."""
    logger = sighting.workload
    note = (f"{signer.name} logs {sighting.quote[:90]!r}: it cannot sign certificates"
            if logger == signer else f"{logger.name} gets no certificate from {signer.name}: "
            f"{sighting.quote[:80]!r}")
    entry = _clue(found, signer, sighting, weight, note, f"tls-signing-{logger.name}")
    victims = [next((r for r in facts.workloads if r.namespace == ns and r.name == account),
                    None) for ns, account in _IDENTITY.findall(text)]
    entry.affects += tuple(r for r in (*victims, logger) if r is not None and r != signer)


def _unnamed(found: dict[Ref, Candidate], facts: Facts, unnamed: list[tuple[Sighting, float]],
             named: set[Ref], alerted: set[Ref]) -> None:
    """A client refuses its peer's certificate without naming the host it called: the peer
    is the in-cluster server it is known to call among those whose certificate is refused,
    else the one server whose certificate clients that name it refuse, else the one server
    receiving its clients' alerts; with none of these, the peer is outside the cluster and
    the client is where it shows."""
    graph = callers_by_callee(facts) if unnamed and (named or alerted) else {}
    for sighting, weight in unnamed:
        logger = sighting.workload
        tiers = [sorted((s for s in group if s != logger), key=str) for group in
                 ([s for s in named | alerted if logger in graph.get(s, ())], named, alerted)]
        if (server := next((tier[0] for tier in tiers if len(tier) == 1), None)) is None:
            entry = _clue(found, logger, sighting, weight, f"{logger.name} logs "
                          f"{sighting.quote[:90]!r}", f"tls-{logger.name}")
        else:
            entry = _clue(found, server, sighting, 0.8 * weight,
                          f"{logger.name} refuses a peer's certificate too "
                          f"({sighting.quote[:70]!r}): {server.name}'s, which other clients "
                          "refuse", f"tls-{logger.name}")
            entry.affects += (logger,)
        if sighting.why:
            entry.demote(0.9, sighting.why)


def _refused(found: dict[Ref, Candidate], facts: Facts, sighting: Sighting,
             graph: dict[Ref, set[Ref]], weight: float) -> list[Candidate]:
    """A server refuses a client's certificate: blame the client, once it is known (by name,
    by pod IP, as the server's caller); until then the server, demoted, with a call to find
    the client by the IP its log names."""
    text = f"{sighting.pattern.example} {sighting.pattern.template}"
    server = sighting.workload
    clients, how = _clients(text, server, facts, graph)
    entries = []
    for client in clients:
        entry = _clue(found, client, sighting, weight * (0.7 if how == "caller" else 1.0),
                      f"{server.name} refuses {client.name}'s certificate "
                      f"({sighting.quote[:70]!r})", f"tls-refused-by-{server.name}")
        entry.affects += (server,)
        if how != "caller" and (calls := _calls(facts, client, server)) is not None:
            pattern, quote = calls
            entry.add(0.3, f"{client.name}'s calls to {server.name} fail: {quote[:80]!r}",
                      (quote,), pattern.source, t.LOG_TOOLS, f"tls-calls-{server.name}")
        entries.append(entry)
    if not entries:
        entry = _clue(found, server, sighting, weight, f"{server.name} logs "
                      f"{sighting.quote[:90]!r}", f"tls-{server.name}")
        why = (f"{server.name} refuses a client's certificate: the client is the one to fix, "
               "once it is known")
        if why not in entry.demoted_because:  # once, however many lines say it
            entry.demote(0.6, why)
        entries.append(entry)
    for ip in _PEER_IP.findall(text)[:1]:
        lookup = Followup(t.PODS, {"ip": ip}, f"find the client at {ip} that {server.name} "
                          "refuses")
        for entry in entries if workload_at(ip, facts) is None else ():
            if lookup not in entry.followups:
                entry.followups.append(lookup)
    return entries


def _calls(facts: Facts, client: Ref, server: Ref) -> tuple[LogPattern, str] | None:
    """A warning or error of the client about calling the server, and a quote of it."""
    for pattern in facts.patterns:
        if t.level_of(pattern) in ("info", "debug") or client not in t.pattern_workloads(
                pattern, facts)[:1]:
            continue
        text = pattern.example or pattern.template
        for host, port in hosts_in(text):
            if target_workload(resolve(host, port, client.namespace, facts), facts) == server:
                return pattern, t.snippet(text, host)
    return None


def _events(facts: Facts, found: dict[Ref, Candidate]) -> None:
    """Warning events where the cluster calls a server for a workload and refuses its
    certificate ("failed calling webhook ... Post https://policy.guard.svc:443/validate:
    x509: certificate has expired"): the server behind that host is the culprit. A
    registry's certificate (an image pull) is image_pull's."""
    for event in t.recent_events(facts, warnings=True):
        phrase = t.phrase_in(event.message, TLS)
        victim = t.event_workload(facts, event)
        if phrase is None or victim is None or t.phrase_in(event.message, PULLS) or whose(
                event.message) != "server":
            continue
        for server in [s for s in _servers(event.message, victim, facts) if s != victim][:1]:
            quote = t.snippet(event.message, phrase)
            entry = found.setdefault(server, Candidate("certificate", server))
            entry.add(0.6 if event.count >= 3 else 0.4,
                      f"{event.reason} for {victim.name}: {quote[:90]!r}", (quote, event.reason),
                      event.source, t.EVENT_TOOLS, f"tls-event-{victim.name}")
            entry.affects += (victim,)


def _clue(found: dict[Ref, Candidate], culprit: Ref, sighting: Sighting, weight: float,
          note: str, topic: str) -> Candidate:
    entry = found.setdefault(culprit, Candidate("certificate", culprit))
    entry.add(weight, note, (sighting.quote, sighting.phrase), sighting.pattern.source, t.LOG_TOOLS,
              topic)
    return entry


def _servers(text: str, logger: Ref, facts: Facts) -> list[Ref]:
    """The in-cluster workloads behind the hosts a line names (the servers it calls)."""
    found = [target_workload(behind_ingress(resolve(host, port, logger.namespace, facts), facts),
                             facts) for host, port in hosts_in(text)]
    return list(dict.fromkeys(ref for ref in found if ref is not None))


def _clients(text: str, server: Ref, facts: Facts,
             graph: dict[Ref, set[Ref]]) -> tuple[list[Ref], str]:
    """The clients whose certificate a server refuses: by the subject the line names, by the
    pod IP it came from, else the server's callers that themselves log TLS trouble (or the
    one caller whose calls to it fail)."""
    named = [target_workload(resolve(subject, "", server.namespace, facts), facts) or next(
        (r for r in facts.workloads if r.name == subject.lower()), None)
        for subject in _SUBJECT.findall(text)]
    if named := list(dict.fromkeys(r for r in named if r is not None and r != server)):
        return named, "name"
    at = [ref for ip in _PEER_IP.findall(text) if (ref := workload_at(ip, facts))]
    if at:
        return list(dict.fromkeys(r for r in at if r != server)), "ip"
    callers = sorted((c for c in graph.get(server, ()) if c != server), key=str)
    troubled = {ref for pattern in facts.patterns if _TLS_TROUBLE.search(pattern.text)
                for ref in t.pattern_workloads(pattern, facts)[:1]}
    failing = [c for c in callers if _calls(facts, c, server) is not None]
    return [c for c in callers if c in troubled] or (failing if len(failing) == 1 else []), \
        "caller"


def _finish(facts: Facts, ref: Ref, entry: Candidate, role: str) -> None:
    """Add the culprit's error ratio, and the fix for its role: an issuer that cannot sign,
    a client whose pins are stale, a client whose own certificate is bad, or a server."""
    signals = facts.signals_of(ref)
    if signals is not None and signals.get("requests").get("abnormal"):
        entry.add(0.15, str(signals.get("requests").get("why")), ("5xx ratio",), signals.source,
                  (t.SIGNALS,), "tls-errors")
    peers = ", ".join(a.name for a in entry.affects[:2]) or "the servers it calls"
    if role == "signer":
        entry.fix = (f"Renew or replace the signing (intermediate CA) certificate of {ref.kind} "
                     f"{ref.namespace}/{ref.name} and restart it, so it issues certificates "
                     "again; the workloads it serves pick up new ones on their own.")
    elif role == "pinned":
        entry.fix = (f"Update the pin set of {ref.kind} {ref.namespace}/{ref.name} to the "
                     f"current key of {peers} (and pin a backup key or the issuing CA, so a "
                     "scheduled rotation does not break it), then restart its pods.")
    elif role == "client":
        entry.fix = (f"Renew the client certificate (mTLS) that {ref.kind} {ref.namespace}/"
                     f"{ref.name} presents to {peers}: check its expiry and issuing CA, then "
                     "restart its pods so they load it; the servers need no change.")
    else:
        entry.fix = (f"Renew or replace the TLS certificate used by {ref.kind} {ref.namespace}/"
                     f"{ref.name} (check its expiry, issuer chain and the names it covers), "
                     "then reload the pods that serve it.")
    entry.follow(t.LOG_PATTERNS, {"namespace": ref.namespace, "text": "certificate"},
                 "read the TLS errors in full")
