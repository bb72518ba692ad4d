"""A small PKI made with `cryptography` for the certificate scenario: a root, an issuing
intermediate and a renewed leaf, deterministic enough to regenerate the same story."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import AuthorityInformationAccessOID, ExtendedKeyUsageOID, NameOID


def _name(cn: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Hollowbrook Health"),
            x509.NameAttribute(NameOID.COMMON_NAME, cn),
        ]
    )


def _cert(
    subject: str,
    issuer: str,
    key,
    signer,
    start: datetime,
    days: int,
    *,
    ca: bool,
    serial: int,
    dns: list[str] | None = None,
    aia: str | None = None,
) -> x509.Certificate:
    b = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(serial)
        .not_valid_before(start)
        .not_valid_after(start + timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if dns:
        b = b.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(d) for d in dns]), critical=False
        )
        b = b.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
    if aia:
        b = b.add_extension(
            x509.AuthorityInformationAccess(
                [
                    x509.AccessDescription(
                        AuthorityInformationAccessOID.CA_ISSUERS,
                        x509.UniformResourceIdentifier(aia),
                    )
                ]
            ),
            critical=False,
        )
    return b.sign(signer, hashes.SHA256())


def pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


CACHE = Path(__file__).with_name("pki_cache.json")


def chain(renewed: datetime, dns: list[str]) -> tuple[str, str, str]:
    """(root PEM, intermediate PEM, leaf PEM); made once and kept in pki_cache.json, since
    keys cannot be generated from a seed and the data should not change on every run."""
    if CACHE.exists():
        cached = json.loads(CACHE.read_text())
        return cached["root"], cached["intermediate"], cached["leaf"]
    made = _make(renewed, dns)
    CACHE.write_text(
        json.dumps(dict(zip(("root", "intermediate", "leaf"), made, strict=True)), indent=1)
    )
    return made


def _make(renewed: datetime, dns: list[str]) -> tuple[str, str, str]:
    root_key = ec.generate_private_key(ec.SECP256R1())
    int_key = ec.generate_private_key(ec.SECP256R1())
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    root = _cert(
        "Hollowbrook Root CA R1",
        "Hollowbrook Root CA R1",
        root_key,
        root_key,
        datetime(2023, 2, 1),
        3650,
        ca=True,
        serial=0x1A01,
    )
    inter = _cert(
        "Hollowbrook Issuing CA G2",
        "Hollowbrook Root CA R1",
        int_key,
        root_key,
        datetime(2024, 6, 3),
        1826,
        ca=True,
        serial=0x2B07,
    )
    leaf = _cert(
        dns[0],
        "Hollowbrook Issuing CA G2",
        leaf_key,
        int_key,
        renewed,
        90,
        ca=False,
        serial=0x5C3E99,
        dns=dns,
        aia="http://pki.hollowbrook.internal/issuing-ca-g2.crt",
    )
    return pem(root), pem(inter), pem(leaf)
