"""The local AWS: a moto server on 127.0.0.1, made safe for concurrent callers
and durable across restarts.

moto's in-memory backends are not thread-safe (a conditional write is a read
then a write, and a cancelled transaction restores whole tables), so every
request is served under one lock; that makes each DynamoDB call atomic, as it
is in AWS.  State is saved to a snapshot file after writes and at shutdown
and loaded again at start.
"""
from __future__ import annotations

import base64
import json
import os
import secrets
import threading
from pathlib import Path

from werkzeug.serving import make_server

from chalicelib import aws, tables
from chalicelib.config import Settings

_WRITE_TARGETS = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems",
                  "CreateTable", "DeleteTable", "UpdateTable", "UpdateTimeToLive"}
SNAPSHOT_VERSION = 1


class _SerializedApp:
    """WSGI wrapper: one request at a time, and a note of every write."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()
        self.dirty = threading.Event()
        self.s3_dirty = threading.Event()
        # Requests carrying this token run while the snapshot thread holds the lock.
        self.bypass_token = secrets.token_hex(16)

    def __call__(self, environ, start_response):
        if _from_a_browser(environ):
            start_response("403 Forbidden", [("Content-Type", "application/json")])
            return [b'{"error":{"code":"forbidden","message":"the local AWS serves signed SDK requests only"}}']
        if environ.get("HTTP_X_BUTAI_SNAPSHOT") == self.bypass_token:
            return self.app(environ, start_response)
        with self.lock:
            if _is_write(environ):
                self.dirty.set()
                if not environ.get("HTTP_X_AMZ_TARGET"):
                    self.s3_dirty.set()
            # moto builds the whole body before returning, so the lock covers the work.
            return list(self.app(environ, start_response))


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
    """Saves and restores the local tables and bucket as one JSON file."""

    def __init__(self, path: Path, settings: Settings, local_aws: LocalAws):
        self.path = path
        self.settings = settings
        self.local_aws = local_aws
        self._last_objects: dict | None = None

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
        """Writes a consistent snapshot: no other request runs while it is read."""
        app = self.local_aws.app
        with app.lock:
            app.dirty.clear()
            data = {"version": SNAPSHOT_VERSION, "tables": {}, "objects": self._last_objects}
            for logical in tables.TABLES:
                data["tables"][logical] = self._table_items(tables.table_name(self.settings, logical))
            if app.s3_dirty.is_set() or self._last_objects is None:
                app.s3_dirty.clear()
                data["objects"] = self._last_objects = self._objects()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)

    def load(self) -> int:
        """Restores a snapshot into the (empty) local AWS; returns the items restored."""
        if not self.path.exists():
            return 0
        data = json.loads(self.path.read_text(encoding="utf-8"))
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
    """Saves a snapshot shortly after writes, so even a hard kill loses at most ``interval``."""

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
