"""Webhook signatures: what butai sends and how a receiver checks it.

Every delivery carries three headers:

    Butai-Webhook-Id: <reply id>          the same on every retry of one delivery (deduplicate on it)
    Butai-Webhook-Timestamp: <unix seconds when this attempt was signed>
    Butai-Webhook-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>

The timestamp is inside the signed text, so a captured request cannot be
replayed later with a fresh timestamp; a receiver refuses timestamps more than
``TOLERANCE_S`` away from its clock.  Several ``v1=`` values separated by
commas are allowed (any one matching is enough), so the format can carry two
signatures while a secret is being replaced.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from typing import Mapping

ID_HEADER = "Butai-Webhook-Id"
TIMESTAMP_HEADER = "Butai-Webhook-Timestamp"
SIGNATURE_HEADER = "Butai-Webhook-Signature"
SCHEME = "v1"
TOLERANCE_S = 300
SECRET_PREFIX = "bkw_"


class SignatureError(ValueError):
    """The request is not a genuine, fresh butai delivery; ``reason`` says why."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(secret: str, timestamp: int | str, body: bytes) -> str:
    signed = str(timestamp).encode("ascii") + b"." + body
    return hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()


def sign(secret: str, delivery_id: str, body: bytes, now: float | None = None) -> dict[str, str]:
    """The three headers of one delivery attempt."""
    timestamp = int(time.time() if now is None else now)
    return {ID_HEADER: delivery_id, TIMESTAMP_HEADER: str(timestamp),
            SIGNATURE_HEADER: f"{SCHEME}={signature(secret, timestamp, body)}"}


def _header(headers: Mapping[str, str], name: str) -> str | None:
    lowered = name.lower()
    for key, value in headers.items():
        if key.lower() == lowered:
            return value
    return None


def verify(secret: str, headers: Mapping[str, str], body: bytes, *, tolerance: float = TOLERANCE_S,
           now: float | None = None) -> str:
    """Checks a delivery; returns its id (the reply id) or raises SignatureError.

    ``body`` must be the raw bytes received, before any JSON parsing.
    """
    if not secret:
        raise SignatureError("no_secret", "no webhook secret to verify with")
    stamp = _header(headers, TIMESTAMP_HEADER)
    given = _header(headers, SIGNATURE_HEADER)
    if not stamp or not given:
        raise SignatureError("missing_header", f"{TIMESTAMP_HEADER} and {SIGNATURE_HEADER} are required")
    try:
        timestamp = int(stamp)
    except ValueError:
        raise SignatureError("bad_timestamp", f"{TIMESTAMP_HEADER} is not a whole number of seconds") from None
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise SignatureError("stale_timestamp", f"the delivery was signed {int(current - timestamp)} s away from "
                                                f"now (more than {int(tolerance)} s): refused as a replay")
    expected = signature(secret, timestamp, body)
    candidates = [part.strip()[len(SCHEME) + 1:] for part in given.split(",")
                  if part.strip().startswith(SCHEME + "=")]
    if not any(hmac.compare_digest(expected, c) for c in candidates):
        raise SignatureError("bad_signature", "the signature does not match the body and timestamp")
    return _header(headers, ID_HEADER) or ""
