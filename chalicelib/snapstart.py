"""SnapStart: what every instance may take from the snapshot, and what each must make again after it.

With SnapStart (docs/deploy.md) Lambda runs the API function's start-up once per published version,
snapshots the process, and resumes every new instance from that snapshot.  Whatever start-up made is
then shared by all of them, so:

- before the snapshot (``prepare``) the work that every first turn repeats and that holds nothing
  unique or connected is done once: the modules a turn imports on first use, the analyser's dictionary,
  botocore's data for the clients every instance makes (read into the loader the sessions share,
  botocore_data.py, by clients that hold no credentials and are thrown away); start-up's garbage is
  collected.
- after each restore (``restored``) nothing drawn or connected before the snapshot is used again:
  ``random`` is reseeded from the operating system (restored instances would otherwise draw the same
  retry jitter), the id generator forgets its last id, the boto3 sessions and the services holding
  their clients are dropped (built again on the first request, with credentials and connections of
  this instance), and the collector is paused again until the first request (coldstart.py).

Ids, keys and secrets are drawn from the operating system when each is made (ids.py, stage/keys.py,
``secrets``), never from state made at start-up.

The runtime hooks come from ``snapshot_restore_py``, which Lambda's managed Python runtimes (3.12 and
later) provide and nothing else does: ``install()`` registers them there and does nothing elsewhere
(tests, the local runtime).  The hooks run only when SnapStart takes or restores a snapshot.
"""
from __future__ import annotations

import random

from . import aws, botocore_data, coldstart, context, ids
from .config import Settings

# The clients every instance makes (stage/, director: tables and bucket); a model endpoint's client is made
# on the model's first call, if ever.
_SERVICES = ("dynamodb", "s3")


def prepare() -> None:
    """Before the snapshot: a first turn's own start-up, done once for every instance."""
    # What building the services and a first turn import on first use (context.build, the director).
    from . import director, talk  # noqa: F401
    from .expression import build_judge  # noqa: F401
    from .interpret import backends  # noqa: F401
    from .interpret.ja import sudachi
    sudachi.available()          # reads the analyser's dictionary (a few hundred ms)
    _read_client_data()
    coldstart.before_snapshot()


def _read_client_data() -> None:
    # Explicit placeholder credentials: nothing of this process's own is resolved or kept.
    import boto3
    settings = Settings.from_env(models=False)
    reader = boto3.session.Session(aws_access_key_id="snapshot", aws_secret_access_key="snapshot",
                                   region_name=settings.region, botocore_session=botocore_data.session())
    for service in _SERVICES:
        reader.client(service, endpoint_url=settings.aws_endpoint)


def restored() -> None:
    """After a restore: what this instance must not share with the others restored from the snapshot."""
    random.seed()                # from os.urandom, now
    ids.forget()
    context.use(None)            # services (and the clients they hold) are built again on first use
    aws.forget()
    coldstart.begin()


def install() -> bool:
    """Registers the hooks with the runtime; False outside Lambda's managed Python runtimes."""
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:
        return False
    register_before_snapshot(prepare)
    register_after_restore(restored)
    return True
