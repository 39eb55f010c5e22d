"""boto3 sessions and clients that honour an endpoint override (moto locally)."""
from __future__ import annotations

import boto3
from botocore.config import Config

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
                                     region_name=settings.region)
    return boto3.session.Session(region_name=settings.region)


def client(service: str, settings: Settings, boto3_session=None):
    return session(settings, boto3_session).client(
        service, endpoint_url=settings.aws_endpoint, config=_CLIENT_CONFIG)
