"""Fixtures for the hardening tests.

`moto_app` is the `aws_settings` + `services` + `client` of tests/conftest.py
built once per test module instead of once per test (a fresh moto, tables,
bucket and character images take about two seconds); each test still gets
its own stages, and their history is deleted afterwards so moto's tables stay
small (moto copies a whole table for every action of a transaction).
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.conftest import ROOT
from tests.hardening._support import StageState

SCENARIO = ROOT / "scenarios" / "chinoike.json"


@pytest.fixture(scope="module")
def moto_app():
    from chalice.test import Client
    from moto import mock_aws

    from app import app
    from butai_tools.local.aws import ensure_resources
    from butai_tools.stage import images
    from chalicelib import aws, context
    from chalicelib.config import Settings

    patch = pytest.MonkeyPatch()
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        patch.delenv(var, raising=False)
    patch.setenv("AWS_ACCESS_KEY_ID", "testing")
    patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings = Settings()
    try:
        with mock_aws():
            ensure_resources(settings)
            images.upload_all_characters(aws.client("s3", settings), settings.bucket, ROOT / "static/characters")
            services = context.build(settings)
            context.use(services)
            try:
                with Client(app) as client:
                    yield SimpleNamespace(settings=settings, services=services, client=client,
                                          state=StageState(settings))
            finally:
                context.use(None)
    finally:
        patch.undo()


@pytest.fixture
def agent_stage(moto_app):
    created = moto_app.services.stage.create_stage("hardening")
    yield created
    moto_app.state.clear_history(created.stage_id)


@pytest.fixture
def scenario_stage(moto_app):
    director = moto_app.services.director
    created = director.create("hardening-scenario", director.library.put(SCENARIO))
    yield created
    moto_app.state.clear_history(created.stage_id)
