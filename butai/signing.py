"""Checking a webhook delivery on the receiving side.

A delivery carries ``Butai-Webhook-Id`` (the reply id, the same on every retry),
``Butai-Webhook-Timestamp`` (unix seconds when the attempt was signed) and
``Butai-Webhook-Signature: v2=<hex HMAC-SHA256(secret, "<id>.<timestamp>.<raw body>")>``;
several comma-separated ``v2=`` values may come (any one matching is enough).  The id is signed, so
the id ``verify`` returns is the one the stage sent.
The stage signs (``chalicelib/webhooks/signing.py``); a test keeps both sides in step.
"""
from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping

ID_HEADER = "Butai-Webhook-Id"
TIMESTAMP_HEADER = "Butai-Webhook-Timestamp"
SIGNATURE_HEADER = "Butai-Webhook-Signature"
SCHEME = "v2"
TOLERANCE_S = 300


class SignatureError(ValueError):
    """The request is not a genuine, fresh butai delivery; ``reason`` says why."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def _header(headers: Mapping[str, str], name: str) -> str | None:
    lowered = name.lower()
    return next((value for key, value in headers.items() if key.lower() == lowered), None)


def verify(secret: str, headers: Mapping[str, str], body: bytes, *, tolerance: float = TOLERANCE_S,
           now: float | None = None) -> str:
    """Checks a delivery; returns its id (the reply id, covered by the signature) or raises SignatureError.

    ``body`` must be the raw bytes received, before any JSON parsing."""
    if not secret:
        raise SignatureError("no_secret", "no webhook secret to verify with")
    delivery_id = _header(headers, ID_HEADER)
    stamp = _header(headers, TIMESTAMP_HEADER)
    given = _header(headers, SIGNATURE_HEADER)
    if not delivery_id or not stamp or not given:
        raise SignatureError("missing_header",
                             f"{ID_HEADER}, {TIMESTAMP_HEADER} and {SIGNATURE_HEADER} are required")
    try:
        timestamp = int(stamp)
    except ValueError:
        raise SignatureError("bad_timestamp", f"{TIMESTAMP_HEADER} is not a whole number of seconds") from None
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        # The timestamp is inside the signed text: a captured request cannot be replayed with a fresh one.
        raise SignatureError("stale_timestamp", f"the delivery was signed {int(current - timestamp)} s away from "
                                                f"now (more than {int(tolerance)} s): refused as a replay")
    signed = delivery_id.encode("utf-8", "surrogateescape") + b"." + str(timestamp).encode("ascii") + b"." + body
    expected = hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()
    candidates = [part.strip()[len(SCHEME) + 1:] for part in given.split(",")
                  if part.strip().startswith(SCHEME + "=")]
    if not any(hmac.compare_digest(expected, c) for c in candidates):
        raise SignatureError("bad_signature", "the signature does not match the id, timestamp and body")
    return delivery_id
