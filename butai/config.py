"""Which stage to talk to, where, and with which key.

One set of rules for the Python client, the ``butai speak/replies/watch``
commands and ``butai mcp``:

* The stage is named by an argument, else ``BUTAI_STAGE_ID``, else
  ``BUTAI_STAGE``, else ``demo`` when the local run's ``local.json`` has one.
* A stage found in ``local.json`` (``.butai/local.json``, or the file named by
  ``BUTAI_LOCAL_JSON``), by its local name or by its id, brings its own API
  URL and agent key; explicit ``api_url``/``key`` arguments still win.
* Any other stage id needs an API URL (argument, ``BUTAI_API_URL``, else the
  local run's URL) and an agent key (argument or ``BUTAI_AGENT_KEY``).
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

# Where `butai run` writes the local stages' URLs and keys (the local runtime reads this name from here).
LOCAL_JSON = Path(".butai") / "local.json"


DEFAULT_LOCAL_STAGE = "demo"


@dataclass(frozen=True)
class Target:
    api_url: str
    stage_id: str
    agent_key: str
    # The local stage name, when the stage came from local.json.
    name: str | None = None


def local_json_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env.get("BUTAI_LOCAL_JSON") or LOCAL_JSON)


def read_local(path: Path) -> dict | None:
    """The local run's state file, or None when there is none."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        data = json.loads(text)
    except ValueError:
        raise ConfigError(f"{path} is not valid JSON; restart the local stage with `make run`") from None
    return data if isinstance(data, dict) else None


def _running(local: dict) -> bool:
    pid = local.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False  # `butai run` removes its pid when it stops
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _find(local: dict | None, ref: str) -> tuple[str, dict] | None:
    stages = (local or {}).get("stages") or {}
    if isinstance(stages.get(ref), dict):
        return ref, stages[ref]
    for name, entry in stages.items():
        if isinstance(entry, dict) and entry.get("stage_id") == ref:
            return name, entry
    return None


def resolve(stage: str | None = None, *, api_url: str | None = None, key: str | None = None,
            env: Mapping[str, str] | None = None, local_json: Path | str | None = None) -> Target:
    """Works out the stage, URL and key by the rules in this module's docstring."""
    env = os.environ if env is None else env
    path = Path(local_json) if local_json is not None else local_json_path(env)
    local = read_local(path)
    ref = stage or env.get("BUTAI_STAGE_ID") or env.get("BUTAI_STAGE")
    if not ref:
        if _find(local, DEFAULT_LOCAL_STAGE) is None:
            raise ConfigError("no stage given: name one (a stage id, or a local stage like `demo`) "
                              "or set BUTAI_STAGE_ID")
        ref = DEFAULT_LOCAL_STAGE
    found = _find(local, ref)
    if found is not None:
        name, entry = found
        if not api_url and not _running(local):
            raise ConfigError(f"the local stage is not running ({path}); start it with `make run`")
        url = api_url or local.get("api_url")
        agent_key = key or entry.get("agent_key")
        if not url or not agent_key or not entry.get("stage_id"):
            raise ConfigError(f"{path} has no API URL or agent key for stage {name!r}; "
                              "restart the local stage with `make run`")
        return Target(_clean_url(url), entry["stage_id"], agent_key, name)

    url = api_url or env.get("BUTAI_API_URL")
    if not url and local is not None and local.get("api_url") and _running(local):
        url = local["api_url"]
    agent_key = key or env.get("BUTAI_AGENT_KEY")
    if not url and not agent_key:
        where = f"not in {path}" if local is not None else f"no {path}"
        raise ConfigError(f"unknown stage {ref!r} ({where}): start the local stage with `make run`, "
                          "or give the API URL and agent key (--api-url/--key, or BUTAI_API_URL/BUTAI_AGENT_KEY)")
    if not url:
        raise ConfigError("no API URL: pass --api-url or set BUTAI_API_URL")
    if not agent_key:
        if local is not None:
            known = ", ".join(sorted(local.get("stages") or {})) or "none"
            raise ConfigError(f"unknown stage {ref!r}: not a local stage in {path} (known: {known}); "
                              "for a stage id, pass --key or set BUTAI_AGENT_KEY")
        raise ConfigError(f"no agent key for stage {ref!r}: pass --key or set BUTAI_AGENT_KEY")
    return Target(_clean_url(url), ref, agent_key)


def _clean_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ConfigError(f"API URL must start with http:// or https://, got {url!r}")
    return url
