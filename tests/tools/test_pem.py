"""PEM bundles are summarised by subject, issuer and validity; keys are counted, not read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tools._pem import certificates, has_private_key, looks_like_pem

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def _pem(subject: str, issuer: str, begins: datetime, ends: datetime, *, ca: bool) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (x509.CertificateBuilder()
               .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
               .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
               .public_key(key.public_key()).serial_number(1)
               .not_valid_before(begins).not_valid_after(ends))
    if ca:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=0), True)
    return builder.sign(key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM).decode()


def test_each_certificate_says_who_signed_it_and_how_long_it_is_valid() -> None:
    bundle = (_pem("api.shop", "Shop CA", NOW - timedelta(days=80), NOW + timedelta(days=3),
                   ca=False)
              + _pem("Next CA", "Next CA", NOW + timedelta(days=1), NOW + timedelta(days=900),
                     ca=True)
              + _pem("Shop CA", "Shop CA", NOW - timedelta(days=900), NOW + timedelta(days=90),
                     ca=True))
    found, unreadable = certificates(bundle)
    assert unreadable == 0
    assert [c.text(NOW) for c in found] == [
        "CN=api.shop, issued by CN=Shop CA, expires in 3d (2026-12-03T10:00:00Z)",
        "CA CN=Next CA, self-signed, NOT YET VALID until 2026-12-01T10:00:00Z",
        "CA CN=Shop CA, self-signed, valid until 2027-02-28T10:00:00Z",
    ]


def test_a_broken_block_is_counted_and_a_private_key_only_noticed() -> None:
    key = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()
    broken = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
    assert looks_like_pem(broken) and not looks_like_pem(key)
    assert certificates(broken + key) == ([], 1)
    assert has_private_key(key) and not has_private_key(broken)
