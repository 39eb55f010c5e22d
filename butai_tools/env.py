"""The environment variables only the tools read: the local run's port, state file and rate limit.

The Lambda code's names are in ``chalicelib/env.py``; the tools take those from there when they set or
read one on the Lambda code's behalf (the template's function environment, ``butai doctor``), so a
``BUTAI_*`` name is spelled in one place (``tests/unit/test_env.py`` holds that).
"""
PORT = "BUTAI_PORT"                  # `butai run`'s port (default 8000)
LOCAL_JSON = "BUTAI_LOCAL_JSON"      # where the local run writes its state file (the agent side reads it too)
LOCAL_RATE = "BUTAI_LOCAL_RATE"      # the local run's requests per second per key (0: no limit)
LOCAL_BURST = "BUTAI_LOCAL_BURST"    # and the burst it allows
LAMBDA_PYTHON = "BUTAI_LAMBDA_PYTHON"  # an interpreter of the Lambda runtime's version, when not found on its own
CHROMIUM = "BUTAI_CHROMIUM"          # the Chromium `butai bench push` drives (default /usr/bin/chromium)
ARTIFACT_BUCKET = "BUTAI_ARTIFACT_BUCKET"  # the bucket infra/deploy.sh uploads the code to (teardown removes a stack's)
