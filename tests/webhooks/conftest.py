"""The local runtime in this process, for the long-poll, webhook and example tests."""
from pathlib import Path

import pytest

from butai_tools.local.runtime import LocalRuntime
from chalicelib.webhooks.delivery import Schedule

FAST = Schedule(first=0.05, cap=0.2, total=3.0)


@pytest.fixture(scope="module")
def runtime(tmp_path_factory):
    # In this process, so the tests can reach its worker and signal; per module, because moto's in-memory
    # backends are shared with the `mock_aws` tests of other modules, which must not run meanwhile.
    rt = LocalRuntime(state_dir=Path(tmp_path_factory.mktemp("wake")), port=0, demo_stage=None,
                      scenario_stages={}, saver_interval=3600, rate=0)
    rt.start()
    rt.webhook_worker.dispatcher.schedule = FAST      # retries in tenths of seconds, not minutes
    yield rt
    rt.stop()
