"""Credentials are masked wherever they appear; what an investigation needs stays."""

from __future__ import annotations

from typing import Any

import pytest

from tools.redact import MASK, looks_secret, redact, redact_data, redact_env

JWT = ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("Authorization: Bearer abcDEF123456ghiJKL789", "abcDEF123456ghiJKL789"),
        ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA=='", "dXNlcjpwYXNzd29yZA=="),
        ("password=hunter2 user=bob", "hunter2"),
        ('{"password": "hunter 2", "user": "bob"}', "hunter 2"),
        ("db_pass: s3cret!", "s3cret!"),
        ("api_key: sk_live_abcdefghijklmnop1234", "sk_live_abcdefghijklmnop1234"),
        ("X-Api-Key=0123456789abcdef", "0123456789abcdef"),
        ("connecting to postgres://app:s3cr3t@db.shop:5432/shop", "s3cr3t"),
        ("redis://:hunter2@redis:6379/0", "hunter2"),
        ("found AKIAIOSFODNN7EXAMPLE in env", "AKIAIOSFODNN7EXAMPLE"),
        ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("posting with xoxb-1234567890-abcdefghij", "xoxb-1234567890-abcdefghij"),
        ("https://hooks.slack.com/services/T000/B000/XXXXXXXX", "T000/B000/XXXXXXXX"),
        ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "ghp_abcdefghijklmnopqrstuvwxyz012345"),
        (f"session {JWT}", JWT),
        ("GET /pay?token=abc123&x=1", "abc123"),
        ("session=Zx8Kq2Lm9Pw4Rt7Yv1Bn3Cd6 ok", "Zx8Kq2Lm9Pw4Rt7Yv1Bn3Cd6"),
        ("signature=5f4dcc3b5aa765d61d8327deb882cf99ab12cd34", "5f4dcc3b5aa765d61d8327deb882cf99"),
        ("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"),
    ],
)
def test_credentials_are_masked(text: str, secret: str) -> None:
    masked = redact(text)
    assert secret not in masked
    assert MASK in masked


def test_private_key_blocks_even_when_cut() -> None:
    block = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY----- ok"
    masked = redact(block)
    assert "MIIEow" not in masked and masked.endswith(" ok")
    cut = redact("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC")
    assert "MIIEvQ" not in cut


@pytest.mark.parametrize(
    "text",
    [
        "pod=checkout-7c9d5f8b4-x2k4p restarted",
        "trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7",
        "secretName: shop-tls",
        "password authentication failed for user app",
        "max_tokens=512 took 30ms",
        "image=sha256:abcdef0123456789abcdef0123456789abcdef0123456789",
        "GET /api/checkout returned 502 upstream reset after 569ms",
        "path=/var/lib/kubelet/pods/3fa85f64-5717-4562-b3fc-2c963f66afa6/volumes",
        "host=ledger-prod.cluster-c8xq2kzs1abc.eu-central-1.rds.amazonaws.com port=5432",
    ],
)
def test_what_is_not_a_credential_stays(text: str) -> None:
    assert redact(text) == text


def test_masks_keep_the_key_and_the_url() -> None:
    assert redact("password=hunter2") == f"password={MASK}"
    assert redact("postgres://app:pw@db:5432/x") == f"postgres://app:{MASK}@db:5432/x"
    assert redact("Authorization: Bearer abcDEF123456ghiJKL789") == f"Authorization: Bearer {MASK}"


def test_redact_data_walks_nested_values_and_secret_keys() -> None:
    data = {
        "password": "plain",
        "secretName": "shop-tls",
        "nested": [{"line": "token=abc123"}, ("api_key: x1",)],
        "count": 3,
        "flag": None,
    }
    assert redact_data(data) == {
        "password": MASK,
        "secretName": "shop-tls",
        "nested": [{"line": f"token={MASK}"}, [f"api_key: {MASK}"]],
        "count": 3,
        "flag": None,
    }


@pytest.mark.parametrize(
    ("name", "secret"),
    [("DB_PASSWORD", True), ("API_TOKEN", True), ("aws_secret_access_key", True),
     ("STRIPE_API_KEY", True), ("REDIS_AUTH", True), ("SENTRY_DSN", True),
     ("PWD", False), ("PASSWORD_FILE", False), ("TOKEN_URL", False), ("LOG_LEVEL", False),
     ("secretName", False), ("AUTHOR", False), ("max_tokens", False)],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret


def test_env_values_masked_and_references_shown() -> None:
    env: list[dict[str, Any]] = [
        {"name": "LOG_LEVEL", "value": "info"},
        {"name": "DB_PASSWORD", "value": "hunter2"},
        {"name": "DATABASE_URL", "value": "postgres://app:pw@db/x"},
        {"name": "PAYMENT_TOKEN", "valueFrom": {"secretKeyRef": {"name": "pay", "key": "tok"}}},
        {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "mode"}}},
        {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
    ]
    assert redact_env(env) == [
        {"name": "LOG_LEVEL", "value": "info"},
        {"name": "DB_PASSWORD", "value": MASK},
        {"name": "DATABASE_URL", "value": f"postgres://app:{MASK}@db/x"},
        {"name": "PAYMENT_TOKEN", "value": "<from secret pay/tok>"},
        {"name": "MODE", "value": "<from configmap cfg/mode>"},
        {"name": "NODE", "value": "<from field spec.nodeName>"},
    ]
    assert redact_env(None) == []


def test_empty_text() -> None:
    assert redact("") == ""


def test_kind_and_pod_names_are_not_mistaken_for_credentials() -> None:
    text = "object: Pod/checkout-fr4tfr2wj2-4dcs2 involved: ReplicaSet/orders-api-7f9c8d6b5"
    assert redact(text) == text


def test_long_unbroken_strings_do_not_backtrack() -> None:
    """A quadratic pattern took minutes on these; linear ones take well under a second."""
    import time

    started = time.perf_counter()
    for text in ("x" * 50_000, "ab." * 17_000, "key=value " * 5_000):
        redact(text)
    assert time.perf_counter() - started < 10


def test_a_plain_word_after_token_or_bearer_is_prose_not_a_credential() -> None:
    assert redact("idp token exchange failed after 5s") == "idp token exchange failed after 5s"
    assert redact("token refresh failed") == "token refresh failed"
    assert redact("Authorization: Bearer abcdefghijkl0123") == "Authorization: Bearer [REDACTED]"
    assert redact("Basic dXNlcjpwYXNz") == "Basic [REDACTED]"  # base64 has capitals
    assert "averyveryverylongsecretword" not in redact("token averyveryverylongsecretword")
