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


def client(service: str, settings: Settings, boto3_session=None):
    if boto3_session is not None:
        return boto3_session.client(service, endpoint_url=settings.aws_endpoint, config=_CLIENT_CONFIG)
    key = (settings.aws_endpoint, settings.region)
    with _shared_lock:
        shared = _shared.get(key)
        if shared is None:
            shared = _shared[key] = session(settings)
        return shared.client(service, endpoint_url=settings.aws_endpoint, config=_CLIENT_CONFIG)
