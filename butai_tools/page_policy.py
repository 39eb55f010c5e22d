"""The stage page's security headers: the one definition, used by the local
run (butai_tools/local/runtime.py) and the CloudFront response headers policy
(butai_tools/infra.py).

The page runs no inline code, talks only to its own origin, and plays media
from its own origin plus the audio origins an operator listed
(``BUTAI_AUDIO_ORIGINS``): nothing else can be loaded by a line's ``audio``.
"""
from __future__ import annotations

from collections.abc import Iterable


def content_security_policy(media_origins: Iterable[str] = ()) -> str:
    media = " ".join(["'self'", *media_origins]).strip()
    return ("default-src 'self'; img-src 'self' data:; connect-src 'self'; style-src 'self'; "
            f"script-src 'self'; media-src {media}; object-src 'none'; base-uri 'none'; "
            "frame-ancestors 'none'; form-action 'self'")


def page_headers(media_origins: Iterable[str] = ()) -> dict[str, str]:
    return {
        "Content-Security-Policy": content_security_policy(media_origins),
        "Referrer-Policy": "no-referrer",
        "X-Content-Type-Options": "nosniff",
    }
