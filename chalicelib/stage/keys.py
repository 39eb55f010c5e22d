"""Per-stage access keys.

Keys carry 192 random bits, so a plain SHA-256 is a safe at-rest form: there
is nothing to brute-force, and a fast hash keeps every request to one read.
The role prefix lets a person tell which key they hold; it is not trusted.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets

from .. import lazyre

AGENT_PREFIX = "bka_"
PLAYER_PREFIX = "bkp_"
STAGE_PREFIX = "s_"


STAGE_ID_PATTERN = lazyre.compile(r"^s_[0-9a-f]{16}$")


def new_stage_id() -> str:
    return STAGE_PREFIX + secrets.token_hex(8)


def is_stage_id(value: str) -> bool:
    return bool(STAGE_ID_PATTERN.fullmatch(value or ""))


def new_key(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(24)


def hash_key(key: str) -> str:
    # surrogatepass: a key with a lone surrogate (possible in a Lambda event) is simply a wrong key.
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def same_hash(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode(), b.encode())


# What a key is made of: token_urlsafe's alphabet (the prefix `bka_`/`bkp_` included).
KEY_ALPHABET = "A-Za-z0-9_-"
# An Authorization header carries a key only when it is exactly `Bearer <key>`: the scheme as written, one
# space, the key, nothing around it.  Any other spelling (`bearer`, two spaces, a tab, a vertical tab,
# U+0085, U+00A0 …) is no key at all.  The template's WAF rule is built from this same pattern and the WAF
# counts the header as it is (butai_tools/infra.py), so the edge and the app read every header value alike.
# The pattern is read the way WAF's PCRE reads it (Python's `re.match` is the same for it: `$` also matches
# before one final line break), and the key is everything after the scheme, byte for byte: such a line
# break, should one ever arrive, stays in the key and makes it a wrong one, as it makes it a count of its
# own at the edge.
AUTHORIZATION_PATTERN = f"^Bearer [{KEY_ALPHABET}]+$"
SCHEME = "Bearer "
_AUTHORIZATION = lazyre.compile(AUTHORIZATION_PATTERN)


def bearer_token(authorization: str | None) -> str | None:
    """The key of an `Authorization: Bearer <key>` header, or None for anything else."""
    if not authorization or not _AUTHORIZATION.match(authorization):
        return None
    return authorization[len(SCHEME):]
