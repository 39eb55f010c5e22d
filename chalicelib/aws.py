"""boto3 sessions and clients that honour an endpoint override (moto locally)."""
from __future__ import annotations

import threading

import boto3
from botocore.config import Config

from . import botocore_data
from .config import Settings

# Retries use botocore's standard mode (exponential backoff with jitter) so a
# throttled or briefly failing DynamoDB call is retried inside the request.
_CLIENT_CONFIG = Config(retries={"mode": "standard", "max_attempts": 4},
                        connect_timeout=2, read_timeout=5)


def session(settings: Settings, boto3_session: boto3.session.Session | None = None):
    if boto3_session is not None:
        return boto3_session
    if settings.aws_endpoint:
        # The local emulator accepts any credentials; fixed ones keep a
        # developer's real credentials out of local runs entirely.
        return boto3.session.Session(aws_access_key_id="local", aws_secret_access_key="local",
                                     region_name=settings.region, botocore_session=botocore_data.session())
    return boto3.session.Session(region_name=settings.region, botocore_session=botocore_data.session())


# One session per endpoint and region for the clients made here: a new session reads botocore's
# endpoint data again (a 1.2 MB JSON file, the largest part of making a client), and a process
# makes several clients (the API's, the local runtime's, the tools'). Sessions are not safe to
# make clients from concurrently, hence the lock.
_shared: dict[tuple[str | None, str], boto3.session.Session] = {}
_shared_lock = threading.Lock()


def forget() -> None:
    """Drops the shared sessions: clients made from here on resolve credentials and open connections
    anew (after a SnapStart restore, chalicelib/snapstart.py)."""
    with _shared_lock:
        _shared.clear()


def client(service: str, settings: Settings, boto3_session=None):
    return _client(service, settings, boto3_session, _CLIENT_CONFIG)


def _client(service: str, settings: Settings, boto3_session, config: Config):
    if boto3_session is not None:
        return boto3_session.client(service, endpoint_url=settings.aws_endpoint, config=config)
    key = (settings.aws_endpoint, settings.region)
    with _shared_lock:
        shared = _shared.get(key)
        if shared is None:
            shared = _shared[key] = session(settings)
        return shared.client(service, endpoint_url=settings.aws_endpoint, config=config)


def model_call_config(timeout: float) -> Config:
    # botocore's own retries are off for model calls: retrying is the model-call layer's job
    # (chalicelib/llm/transport.py), with the same rule for an HTTP server and an endpoint.
    return Config(connect_timeout=min(timeout, 5.0), read_timeout=timeout,
                  retries={"total_max_attempts": 1, "mode": "standard"})


class LazyClient:
    """A boto3 client made on first use, from the process's settings (and session, where one is given).

    A model endpoint's client is handed to the model-call layer when the services are built, but a
    process that never calls the model (most turns, with the embedded classifier first) never pays
    for creating it.
    """

    def __init__(self, service: str, settings: Settings, boto3_session=None, *, timeout: float) -> None:
        self._args = (service, settings, boto3_session, timeout)
        self._client = None

    def __getattr__(self, name: str):
        if self._client is None:
            service, settings, boto3_session, timeout = self._args
            self._client = _client(service, settings, boto3_session, model_call_config(timeout))
        return getattr(self._client, name)
