"""Per-stage access keys.

Keys carry 192 random bits, so a plain SHA-256 is a safe at-rest form: there
is nothing to brute-force, and a fast hash keeps every request to one read.
The role prefix lets a person tell which key they hold; it is not trusted.
"""
from __future__ import annotations

import hashlib
import hmac
import re
import secrets

AGENT_PREFIX = "bka_"
PLAYER_PREFIX = "bkp_"
STAGE_PREFIX = "s_"


STAGE_ID_PATTERN = re.compile(r"^s_[0-9a-f]{16}$")


def new_stage_id() -> str:
    return STAGE_PREFIX + secrets.token_hex(8)


def is_stage_id(value: str) -> bool:
    return bool(STAGE_ID_PATTERN.match(value or ""))


def new_key(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(24)


def hash_key(key: str) -> str:
    # surrogatepass: a key with a lone surrogate (possible in a Lambda event) is simply a wrong key.
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def same_hash(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode(), b.encode())


def bearer_token(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
