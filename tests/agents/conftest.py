"""Fixtures for the agent-side tests (Python client, CLI, MCP server, OpenAPI, example)."""
from __future__ import annotations

import pytest

from tests.agents.helpers import FakeServer, local_stage


@pytest.fixture
def fake_server():
    server = FakeServer().start()
    yield server
    server.stop()


@pytest.fixture
def sleeps():
    """A stand-in for time.sleep that records how long the client wanted to wait."""
    waited: list[float] = []
    return waited


@pytest.fixture
def fresh_stage(local_runtime, tmp_path):
    """A new stage of the local runtime, alone in a local.json of its own (name: ``agent``)."""
    return local_stage(local_runtime, tmp_path, "agent")
