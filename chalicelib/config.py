"""The one `Settings` of a process: read from the environment once, with explicit overrides on top.

Every process builds its services from one of these: the Lambda (`context.get`:
``Settings.from_env()``), the local runtime (``Settings.from_env().with_(aws_endpoint=…)``), the
commands, benchmarks and load test alike; `context.build` takes it and nothing after reads the
environment.  Read when a process starts, never at import time, so tests and the local runtime can point
the same code at other tables or at moto.  A bottom-layer module: it imports only `env` (and, when the
settings are read, the model settings' parser, ``llm/settings.py``).
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from chalicelib import env

from . import lazyre

if TYPE_CHECKING:
    from .llm.settings import ModelSettings


_ORIGIN = lazyre.compile(r"^https://[A-Za-z0-9.-]+(?::[0-9]{1,5})?$")


def parse_origins(value: str | None) -> tuple[str, ...]:
    """``BUTAI_AUDIO_ORIGINS``: https origins separated by spaces or commas."""
    origins = []
    for part in re.split(r"[\s,]+", value or ""):
        if not part:
            continue
        origin = part.rstrip("/")
        if not _ORIGIN.match(origin):
            raise ValueError(f"BUTAI_AUDIO_ORIGINS: {part!r} is not an https origin (https://host[:port])")
        origins.append(origin.lower())
    return tuple(dict.fromkeys(origins))


def origin_of(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}".lower()


def _no_models() -> ModelSettings:
    # Imported when a Settings is made, not when this module is: the model settings' module sits in the
    # model-call layer, which the stream function and the tools that only need table names never load.
    from .llm.settings import ModelSettings
    return ModelSettings()


@dataclass(frozen=True)
class Settings:
    region: str = "us-east-1"
    # Table and bucket names; the defaults are what the local runtime creates.
    table_current: str = "butai-current"
    table_log: str = "butai-log"
    table_pending: str = "butai-pending-replies"
    bucket: str = "butai-assets"
    # Where boto3 sends requests: None for real AWS, the moto server locally.
    aws_endpoint: str | None = None
    # Base URL that the page and images are served from (CloudFront in the
    # cloud, the local runtime's own origin locally); '' means relative URLs.
    assets_base_url: str = ""
    # Where a stage's page lives; the player's key is appended in the fragment.
    page_url: str = ""
    default_character: str = "hiyori"
    # How long a character manifest read from S3 is trusted (seconds).
    manifest_ttl: float = 60.0
    # Days that log entries and replies are kept (DynamoDB TTL); 0 keeps them.
    retention_days: int = 0
    # Whether a player's key may read a scenario stage's debug view (local runs).
    players_see_debug: bool = False
    # https origins a line's audio may come from besides the stage's own (the page's CSP media-src).
    audio_origins: tuple[str, ...] = ()
    # Whether webhooks may be plain http to 127.0.0.1 (the local runtime only; the cloud sends https to
    # public addresses only).
    local_webhooks: bool = False
    # Where pages' sockets are managed (https://{api}.execute-api.{region}.amazonaws.com/{stage}): the
    # push fan-out posts there (chalicelib/push/). Unset locally, where the local runtime holds the sockets.
    push_endpoint: str = ""
    # Whether a voice worker renders the lines that carry no audio of their own nor rendered ahead (the local
    # run's worker, the cloud's voice function: docs/stage.md, "Voice"); lines rendered ahead play either way.
    voice: bool = False
    # The classifier, free conversation and the expression judge (llm/settings.py); the default is the
    # embedded, model-free configuration.
    models: ModelSettings = field(default_factory=_no_models)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, models: bool = True) -> Settings:
        """Every setting, read once. ``models=False`` skips the model settings (the webhook stream
        function and tools that only need tables and buckets)."""
        source = os.environ if environ is None else environ
        base = cls()
        if models:
            from .llm.settings import ModelSettings
            model_settings = ModelSettings.from_env(source)
        else:
            model_settings = base.models
        return cls(
            region=source.get("AWS_REGION") or source.get("AWS_DEFAULT_REGION") or base.region,
            table_current=source.get(env.TABLE_CURRENT, base.table_current),
            table_log=source.get(env.TABLE_LOG, base.table_log),
            table_pending=source.get(env.TABLE_PENDING, base.table_pending),
            bucket=source.get(env.BUCKET, base.bucket),
            aws_endpoint=source.get(env.AWS_ENDPOINT) or None,
            assets_base_url=source.get(env.ASSETS_URL, base.assets_base_url).rstrip("/"),
            page_url=source.get(env.PAGE_URL, base.page_url),
            default_character=source.get(env.DEFAULT_CHARACTER, base.default_character),
            manifest_ttl=float(source.get(env.MANIFEST_TTL, base.manifest_ttl)),
            retention_days=int(source.get(env.RETENTION_DAYS, base.retention_days)),
            players_see_debug=source.get(env.PLAYERS_SEE_DEBUG, "") == "1",
            audio_origins=parse_origins(source.get(env.AUDIO_ORIGINS)),
            push_endpoint=source.get(env.PUSH_ENDPOINT, base.push_endpoint).rstrip("/"),
            voice=source.get(env.VOICE, "").strip().lower() in ("1", "on", "true", "yes"),
            models=model_settings,
        )

    @property
    def own_origins(self) -> tuple[str, ...]:
        """Where the page and its assets are served from, when configured (a line's audio may be there)."""
        return tuple(o for o in (origin_of(self.assets_base_url), origin_of(self.page_url)) if o)

    def with_(self, **changes) -> Settings:
        """These settings with some fields replaced: ``Settings.from_env().with_(aws_endpoint=…)``."""
        return replace(self, **changes)

    def with_models(self, **changes) -> Settings:
        """These settings with some model variables overridden (`ModelSettings.with_`):
        ``settings.with_models(model_url="http://127.0.0.1:8080/v1", model="m")``."""
        return replace(self, models=self.models.with_(**changes))
