"""Webhook signatures: what the stage sends (a receiver checks them with ``butai.signing``).

Every delivery carries three headers:

    Butai-Webhook-Id: <reply id>          the same on every retry of one delivery (deduplicate on it)
    Butai-Webhook-Timestamp: <unix seconds when this attempt was signed>
    Butai-Webhook-Signature: v2=<hex HMAC-SHA256(secret, "<id>.<timestamp>.<raw body>")>

The id and the timestamp are inside the signed text: a captured request cannot
be replayed later with a fresh timestamp, nor within the five minutes a
receiver allows with a new id (which would defeat deduplication on the id).
(``v1`` signed only "<timestamp>.<raw body>", leaving the id header open to
change; it is no longer sent or accepted.)  Several ``v2=`` values separated by
commas are allowed (any one matching is enough), so the format can carry two
signatures while a secret is being replaced.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time

ID_HEADER = "Butai-Webhook-Id"
TIMESTAMP_HEADER = "Butai-Webhook-Timestamp"
SIGNATURE_HEADER = "Butai-Webhook-Signature"
SCHEME = "v2"
SECRET_PREFIX = "bkw_"


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature(secret: str, delivery_id: str, timestamp: int | str, body: bytes) -> str:
    signed = delivery_id.encode("utf-8") + b"." + str(timestamp).encode("ascii") + b"." + body
    return hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()


def sign(secret: str, delivery_id: str, body: bytes, now: float | None = None) -> dict[str, str]:
    """The three headers of one delivery attempt."""
    timestamp = int(time.time() if now is None else now)
    return {ID_HEADER: delivery_id, TIMESTAMP_HEADER: str(timestamp),
            SIGNATURE_HEADER: f"{SCHEME}={signature(secret, delivery_id, timestamp, body)}"}
