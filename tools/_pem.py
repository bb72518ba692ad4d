"""Certificates in a PEM bundle, summarised: who each one is, who signed it, and until when.

A trust bundle in a ConfigMap (a CA file a client mounts) goes stale silently: the server
rotates to a certificate signed by a new CA, and the clients that still trust only the old
one fail TLS with "unknown authority" while the server looks healthy. Which CAs a bundle
holds and their validity are the facts that decide; the bundle's bytes are not needed.
Only public certificates are parsed: a private key block is never decoded, only counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from cryptography import x509
from cryptography.x509.oid import NameOID

from tools._toolkit import ago, iso

_BLOCK = re.compile(r"-----BEGIN CERTIFICATE-----\s+[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----")
_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
SOON_DAYS = 14  # a certificate this close to its end is flagged


@dataclass(frozen=True, slots=True)
class CertificateFacts:
    subject: str
    issuer: str
    not_before: datetime
    not_after: datetime
    is_ca: bool

    def state(self, now: datetime) -> str:
        """expired 3d ago / not valid before ... / expires in 9d / valid until ..."""
        if now >= self.not_after:
            return f"EXPIRED {ago(self.not_after, now)} ago ({iso(self.not_after)})"
        if now < self.not_before:
            return f"NOT YET VALID until {iso(self.not_before)}"
        left = self.not_after - now
        if left.days < SOON_DAYS:
            return f"expires in {ago(now, self.not_after)} ({iso(self.not_after)})"
        return f"valid until {iso(self.not_after)}"

    def text(self, now: datetime) -> str:
        role = "CA " if self.is_ca else ""
        signer = "self-signed" if self.subject == self.issuer else f"issued by {self.issuer}"
        return f"{role}{self.subject}, {signer}, {self.state(now)}"


def looks_like_pem(value: str) -> bool:
    return "-----BEGIN CERTIFICATE-----" in value


def has_private_key(value: str) -> bool:
    return bool(_KEY.search(value))


def certificates(value: str) -> tuple[list[CertificateFacts], int]:
    """The certificates of a PEM text, and how many blocks could not be read."""
    found: list[CertificateFacts] = []
    unreadable = 0
    for block in _BLOCK.findall(value):
        try:
            cert = x509.load_pem_x509_certificate(block.encode())
        except ValueError:
            unreadable += 1
            continue
        found.append(CertificateFacts(_name(cert.subject), _name(cert.issuer),
                                      cert.not_valid_before_utc, cert.not_valid_after_utc,
                                      _is_ca(cert)))
    return found, unreadable


def _name(name: x509.Name) -> str:
    """CN=..., O=... shortened to the common name (and organisation when there is one)."""
    common = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    organisation = name.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
    parts = [f"CN={common[0].value!s}"] if common else []
    if organisation:
        parts.append(f"O={organisation[0].value!s}")
    return ",".join(parts) or name.rfc4514_string()


def _is_ca(cert: x509.Certificate) -> bool:
    try:
        return bool(cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca)
    except x509.ExtensionNotFound:
        return False
