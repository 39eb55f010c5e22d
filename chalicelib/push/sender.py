"""How a message reaches a page's socket.

In the cloud through API Gateway's connection-management API (`post_to_connection`, whose 410 means
the socket is gone); locally through the local runtime's own sockets (butai_tools/local/push.py),
which keeps the same interface.
"""
from __future__ import annotations

from typing import Protocol

from botocore.config import Config

from .. import aws
from ..config import Settings


class Gone(Exception):
    """The connection no longer exists (API Gateway's 410 GoneException)."""


class Sender(Protocol):
    def send(self, connection_id: str, data: bytes) -> None:
        """Sends one message; raises Gone when the socket is closed."""
        ...

    def close(self, connection_id: str) -> None:
        """Closes the socket (a refused subscription, a rotated key); a gone socket is no error."""
        ...


# Short timeouts: a post to one slow socket must not hold the others' fan-out for long.
_CONFIG = Config(retries={"mode": "standard", "max_attempts": 3}, connect_timeout=2, read_timeout=3,
                 max_pool_connections=32)


class ManagementApi:
    """API Gateway's `@connections` API of the stage's WebSocket API."""

    def __init__(self, client):
        self._client = client

    @classmethod
    def from_settings(cls, settings: Settings, endpoint: str | None = None) -> ManagementApi:
        url = endpoint or settings.push_endpoint
        if not url:
            raise ValueError("no WebSocket management endpoint (BUTAI_PUSH_ENDPOINT) is configured")
        return cls(aws.session(settings).client("apigatewaymanagementapi", endpoint_url=url, config=_CONFIG))

    def send(self, connection_id: str, data: bytes) -> None:
        try:
            self._client.post_to_connection(ConnectionId=connection_id, Data=data)
        except self._client.exceptions.GoneException:
            raise Gone(connection_id) from None

    def close(self, connection_id: str) -> None:
        try:
            self._client.delete_connection(ConnectionId=connection_id)
        except self._client.exceptions.GoneException:
            pass
