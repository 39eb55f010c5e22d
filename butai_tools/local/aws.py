"""The local AWS: a moto server on 127.0.0.1, made safe for concurrent callers
and durable across restarts.

moto's in-memory backends are not thread-safe (a conditional write is a read
then a write, and a cancelled transaction restores whole tables), so every
request is served under one lock; that makes each DynamoDB call atomic, as it
is in AWS.  Every write is journaled and synced to disk before it is answered
(butai_tools/local/journal.py); a snapshot of the whole state is saved now and
then and at shutdown, and at start the snapshot is loaded and the journal
replayed over it, so even ``kill -9`` loses no write that was answered.
"""
from __future__ import annotations

import base64
import io
import json
import os
import secrets
import threading
from pathlib import Path

from werkzeug.serving import make_server

from butai_tools.local.journal import Journal, sync_directory
from chalicelib import aws, tables
from chalicelib.config import Settings

_WRITE_TARGETS = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems",
                  "CreateTable", "DeleteTable", "UpdateTable", "UpdateTimeToLive"}
SNAPSHOT_VERSION = 1
DATA_MODE = 0o600          # the snapshot holds webhook secrets: readable by its owner only


class _SerializedApp:
    """WSGI wrapper: one request at a time, a note of every write, and each write journaled before it is
    answered."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.dirty = threading.Event()
        self.s3_dirty = threading.Event()
        # Requests carrying this token run while the snapshot thread holds the lock.
        self.bypass_token = secrets.token_hex(16)
        self.journal: Journal | None = None      # set once the state is restored

    def __call__(self, environ, start_response):
        if _from_a_browser(environ):
            start_response("403 Forbidden", [("Content-Type", "application/json")])
            return [b'{"error":{"code":"forbidden","message":"the local AWS serves signed SDK requests only"}}']
        if environ.get("HTTP_X_BUTAI_SNAPSHOT") == self.bypass_token:
            return self.app(environ, start_response)
        write = _is_write(environ)
        request = _request_of(environ) if write and self.journal is not None else None
        status: list[str] = []

        def answer(code, headers, exc_info=None):
            status.append(code)
            return start_response(code, headers, exc_info) if exc_info else start_response(code, headers)

        with self.lock:
            if write:
                self.dirty.set()
                if not environ.get("HTTP_X_AMZ_TARGET"):
                    self.s3_dirty.set()
            # moto builds the whole body before returning, so the lock covers the work.
            body = list(self.app(environ, answer))
            number = self.journal.append(request) if request is not None and status[0].startswith("2") else 0
        if number:
            # The answer leaves only once the write is on disk (one sync covers every writer waiting).
            self.journal.sync(number)
        return body

    def replay(self, journal: Journal, first_segment: int) -> int:
        """Applies the journaled writes from ``first_segment`` on (at start, before anything else runs)."""
        count = 0
        for request in journal.records(first_segment):
            list(self.app(_environ_of(request), lambda code, headers, exc_info=None: None))
            count += 1
        return count


# What a journal record keeps of a request: enough to make moto apply it again.
def _request_of(environ) -> dict:
    length = environ.get("CONTENT_LENGTH")
    stream = environ["wsgi.input"]
    if length:
        body = stream.read(int(length))
    else:
        # No length: a chunked body (the server de-chunks it and marks the stream as ending), or none.
        body = stream.read() if environ.get("wsgi.input_terminated") else b""
    environ["wsgi.input"] = io.BytesIO(body)
    headers = {k: v for k, v in environ.items() if k.startswith("HTTP_") or k in ("CONTENT_TYPE", "CONTENT_LENGTH")}
    return {"method": environ["REQUEST_METHOD"], "path": environ.get("PATH_INFO", ""),
            "query": environ.get("QUERY_STRING", ""), "headers": headers, "body": body}


def _environ_of(request: dict) -> dict:
    return {"REQUEST_METHOD": request["method"], "PATH_INFO": request["path"], "QUERY_STRING": request["query"],
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "0", "SERVER_PROTOCOL": "HTTP/1.1", "SCRIPT_NAME": "",
            "wsgi.input": io.BytesIO(request["body"]), "wsgi.errors": io.StringIO(), "wsgi.url_scheme": "http",
            "wsgi.version": (1, 0), "wsgi.multithread": False, "wsgi.multiprocess": False,
            "wsgi.run_once": False, **request["headers"]}


def _from_a_browser(environ) -> bool:
    """The local AWS listens on 127.0.0.1 without credentials, so any web page the player opens could
    send it requests (a form post or a no-cors fetch needs no CORS permission).  Browsers always say where
    such a request comes from (`Origin`), preflight with OPTIONS, and cannot sign: the SDK's requests
    carry a SigV4 signature and no `Origin`, so everything else is refused."""
    if environ.get("HTTP_ORIGIN") is not None or environ.get("REQUEST_METHOD") == "OPTIONS":
        return True
    signed = environ.get("HTTP_AUTHORIZATION", "").startswith("AWS4-HMAC-SHA256 ")
    presigned = "X-Amz-Signature=" in environ.get("QUERY_STRING", "")
    return not (signed or presigned)


def _is_write(environ) -> bool:
    target = environ.get("HTTP_X_AMZ_TARGET", "")
    if target:
        return target.rsplit(".", 1)[-1] in _WRITE_TARGETS
    return environ.get("REQUEST_METHOD") in ("PUT", "POST", "DELETE")


class LocalAws:
    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app

        from butai_tools.local import dynamodb as local_dynamodb
        local_dynamodb.install()
        self.app = _SerializedApp(DomainDispatcherApplication(create_backend_app))
        class QuietHandler(MotoRequestHandler):
            def log_request(self, *args, **kwargs):
                pass

        self._server = make_server(host, port, self.app, threaded=True, request_handler=QuietHandler)
        self._thread = threading.Thread(target=self._server.serve_forever, name="moto", daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> LocalAws:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join(timeout=5)
        self._server.server_close()


def ensure_resources(settings: Settings) -> None:
    """Creates the tables and the bucket when missing (idempotent)."""
    tables.create_tables(aws.client("dynamodb", settings), settings)
    s3 = aws.client("s3", settings)
    existing = {b["Name"] for b in s3.list_buckets().get("Buckets", [])}
    if settings.bucket not in existing:
        s3.create_bucket(Bucket=settings.bucket)


class Snapshots:
    """Saves and restores the local tables and bucket as one JSON file, with the journal of the writes
    after it (``journal-<n>.log`` beside it)."""

    def __init__(self, path: Path, settings: Settings, local_aws: LocalAws):
        self.path = path
        self.settings = settings
        self.local_aws = local_aws
        self._last_objects: dict | None = None
        self.journal = Journal(path.parent)
        self.replayed = 0
        self._saving = threading.Lock()

    def _clients(self, bypass: bool):
        db = aws.client("dynamodb", self.settings)
        s3 = aws.client("s3", self.settings)
        if bypass:
            token = self.local_aws.app.bypass_token
            for client in (db, s3):
                client.meta.events.register(
                    "before-sign.*.*", lambda request, **_: request.headers.__setitem__("X-Butai-Snapshot", token))
        return db, s3

    def _table_items(self, name: str) -> list[dict]:
        # Read straight from moto's memory (under the server lock): an HTTP
        # scan of a large log would hold every caller up for far longer.
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.dynamodb.models import dynamodb_backends
        table = dynamodb_backends[DEFAULT_ACCOUNT_ID][self.settings.region].tables[name]
        return [item.to_json()["Attributes"] for item in table.all_items()]

    def _objects(self) -> dict:
        _, s3 = self._clients(bypass=True)
        objects = {}
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=self.settings.bucket):
            for obj in page.get("Contents", []):
                got = s3.get_object(Bucket=self.settings.bucket, Key=obj["Key"])
                objects[obj["Key"]] = {
                    "body": base64.b64encode(got["Body"].read()).decode(),
                    "content_type": got.get("ContentType", "application/octet-stream"),
                    "cache_control": got.get("CacheControl", ""),
                }
        return objects

    def save(self) -> None:
        """Writes a consistent snapshot: no other request runs while it is read.  The journal starts a new
        segment at that moment; the older ones go once the snapshot is on disk."""
        app = self.local_aws.app
        with self._saving:
            with app.lock:
                app.dirty.clear()
                data = {"version": SNAPSHOT_VERSION, "tables": {}, "objects": self._last_objects}
                for logical in tables.TABLES:
                    data["tables"][logical] = self._table_items(tables.table_name(self.settings, logical))
                if app.s3_dirty.is_set() or self._last_objects is None:
                    app.s3_dirty.clear()
                    data["objects"] = self._last_objects = self._objects()
                if app.journal is not None:
                    data["journal"] = app.journal.rotate()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, DATA_MODE)
            os.fchmod(fd, DATA_MODE)     # O_CREAT's mode does not apply to a file left over from an earlier run
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, ensure_ascii=False)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
            sync_directory(self.path.parent)
            if "journal" in data:
                self.journal.drop_before(data["journal"])

    def load(self) -> int:
        """Restores the snapshot into the (empty) local AWS, replays the journal over it, then starts
        journaling (a fresh snapshot makes the replayed writes part of it).  Returns the items restored."""
        count = self._load_snapshot()
        first = self._snapshot_journal
        app = self.local_aws.app
        self.replayed = app.replay(self.journal, first)
        last = self.journal.segments()
        self.journal.open(max([first, *[n for n, _ in last]]) + 1)
        app.journal = self.journal
        self.save()
        return count

    def _load_snapshot(self) -> int:
        self._snapshot_journal = 0
        if not self.path.exists():
            return 0
        os.chmod(self.path, DATA_MODE)      # a snapshot written by an older version was 0644
        data = json.loads(self.path.read_text(encoding="utf-8"))
        self._snapshot_journal = int(data.get("journal", 0))
        db, s3 = self._clients(bypass=False)
        count = 0
        for logical, items in data.get("tables", {}).items():
            if logical not in tables.TABLES:
                continue
            name = tables.table_name(self.settings, logical)
            for start in range(0, len(items), 25):
                batch = [{"PutRequest": {"Item": item}} for item in items[start:start + 25]]
                pending = {name: batch}
                while pending:
                    pending = db.batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
                count += len(batch)
        for key, obj in data.get("objects", {}).items():
            extra = {"CacheControl": obj["cache_control"]} if obj.get("cache_control") else {}
            s3.put_object(Bucket=self.settings.bucket, Key=key, Body=base64.b64decode(obj["body"]),
                          ContentType=obj.get("content_type", "application/octet-stream"), **extra)
        self.local_aws.app.dirty.clear()
        return count


class Saver(threading.Thread):
    """Saves a snapshot ``interval`` seconds after writes.  Nothing depends on it for durability (the
    journal has every write): it keeps the journal short, and so the replay at start."""

    def __init__(self, snapshots: Snapshots, interval: float = 1.0):
        super().__init__(name="snapshot", daemon=True)
        self.snapshots = snapshots
        self.interval = interval
        self._halt = threading.Event()

    def run(self) -> None:
        dirty = self.snapshots.local_aws.app.dirty
        while not self._halt.is_set():
            if dirty.wait(timeout=0.2) and not self._halt.wait(self.interval):
                self.snapshots.save()

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=10)
