"""butai.client over real sockets against the local runtime, and how a stage is found."""
import json
import os
import threading

import pytest

from butai import config
from butai.client import (
    ConfigError,
    Conflict,
    Forbidden,
    InvalidRequest,
    NotFound,
    SpeakResult,
    Stage,
    StageView,
    Unauthorized,
)
from tests.agents.helpers import call

pytestmark = pytest.mark.e2e


@pytest.fixture
def stage(fresh_stage):
    return Stage(fresh_stage.api_url, fresh_stage.stage_id, fresh_stage.agent_key)


def test_speak_fetch_and_get_stage_over_real_sockets(stage, fresh_stage):
    result = stage.speak("はじめまして！", expression="smile")
    assert isinstance(result, SpeakResult) and result.expression == "smile"
    unknown = stage.speak("ふむ", expression="sparkly")
    assert (unknown.expression, unknown.asked_expression) == ("neutral", "sparkly")
    fresh_stage.reply("よろしく")
    fresh_stage.reply("ね")
    assert [r.text for r in stage.fetch_replies()] == ["よろしく", "ね"]
    assert stage.fetch_replies() == []  # each reply once
    view = stage.get_stage()
    assert isinstance(view, StageView)
    assert view.current.text == "ふむ" and view.current.expression == "neutral"
    assert [(e.role, e.text) for e in view.log] == [("character", "はじめまして！"), ("character", "ふむ"),
                                                    ("player", "よろしく"), ("player", "ね")]


def test_a_repeated_request_id_is_spoken_once_and_conflicts_on_other_text(stage, fresh_stage):
    first = stage.speak("一度だけ", request_id="turn-1")
    again = stage.speak("一度だけ", request_id="turn-1")
    assert again == first
    with pytest.raises(Conflict) as caught:
        stage.speak("別の台詞", request_id="turn-1")
    assert caught.value.field == "request_id"
    assert [e["text"] for e in fresh_stage.view()["log"]] == ["一度だけ"]


def test_server_errors_become_typed_exceptions(stage, fresh_stage):
    with pytest.raises(Forbidden) as caught:
        Stage(stage.api_url, stage.stage_id, fresh_stage.player_key).speak("x")
    assert caught.value.code == "agent_key_required" and caught.value.field == "Authorization"
    with pytest.raises(Unauthorized) as caught:
        Stage(stage.api_url, stage.stage_id, "bka_wrong").fetch_replies()
    assert caught.value.code == "wrong_key"
    with pytest.raises(NotFound) as caught:
        Stage(stage.api_url, "s_0000000000000000", stage.agent_key).get_stage()
    assert caught.value.code == "stage_not_found"
    with pytest.raises(InvalidRequest) as caught:
        stage.speak("x" * 2001)
    assert caught.value.field == "text" and "2000" in caught.value.message
    with pytest.raises(InvalidRequest) as caught:
        stage.speak("x", request_id="has spaces")
    assert caught.value.field == "request_id"


def test_wait_for_replies_returns_when_the_player_answers(stage, fresh_stage):
    timer = threading.Timer(0.4, fresh_stage.reply, args=("いま来た",))
    timer.start()
    try:
        replies = stage.wait_for_replies(timeout=20, interval=0.1)
    finally:
        timer.join()
    assert [r.text for r in replies] == ["いま来た"]
    assert stage.wait_for_replies(timeout=0.2, interval=0.1) == []


def test_from_local_reads_local_json(fresh_stage, monkeypatch):
    stage = Stage.from_local("agent", path=fresh_stage.local_json)
    assert (stage.api_url, stage.stage_id, stage.agent_key) == (fresh_stage.api_url, fresh_stage.stage_id,
                                                                fresh_stage.agent_key)
    monkeypatch.setenv("BUTAI_LOCAL_JSON", str(fresh_stage.local_json))
    assert Stage.from_local("agent").speak("local.json から").expression == "neutral"
    with pytest.raises(ConfigError, match="no local stage named 'demo'.*known: agent"):
        Stage.from_local()
    by_env = Stage.from_env(env={"BUTAI_API_URL": fresh_stage.api_url, "BUTAI_STAGE_ID": fresh_stage.stage_id,
                                 "BUTAI_AGENT_KEY": fresh_stage.agent_key, "BUTAI_LOCAL_JSON": "/nonexistent.json"})
    assert by_env.get_stage().stage.id == fresh_stage.stage_id
    assert Stage.from_env(env={"BUTAI_LOCAL_JSON": str(fresh_stage.local_json), "BUTAI_STAGE": "agent"}) \
        .stage_id == fresh_stage.stage_id


def test_the_local_runtime_serves_the_openapi_document(fresh_stage):
    status, headers, doc = call(fresh_stage.api_url, "GET", "/openapi.json")
    assert status == 200 and doc["openapi"].startswith("3.1")
    assert "/stages/{stage_id}/speak" in doc["paths"]


# --- which stage, where, with which key ------------------------------------------------

def write_local(tmp_path, pid=None, **stages):
    path = tmp_path / "local.json"
    data = {"api_url": "http://127.0.0.1:8000/", "stages": {
        name: {"stage_id": sid, "agent_key": f"bka_{name}", "player_key": f"bkp_{name}"}
        for name, sid in stages.items()}}
    if pid is not None:
        data["pid"] = pid
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_resolve_a_local_name_or_id_brings_url_and_key(tmp_path):
    path = write_local(tmp_path, pid=os.getpid(), demo="s_demo", other="s_other")
    env = {"BUTAI_LOCAL_JSON": str(path)}
    assert config.resolve(None, env=env) == config.Target("http://127.0.0.1:8000", "s_demo", "bka_demo", "demo")
    assert config.resolve("other", env=env).stage_id == "s_other"
    assert config.resolve("s_other", env=env).agent_key == "bka_other"
    assert config.resolve(None, env={**env, "BUTAI_STAGE": "other"}).stage_id == "s_other"
    # explicit URL and key win over local.json, and over the environment
    cloud = {**env, "BUTAI_API_URL": "https://env.example", "BUTAI_AGENT_KEY": "bka_env"}
    assert config.resolve("demo", env=cloud, api_url="https://flag.example", key="bka_flag") == \
        config.Target("https://flag.example", "s_demo", "bka_flag", "demo")
    # a stage id that is not local takes the environment's URL and key
    assert config.resolve(None, env={**cloud, "BUTAI_STAGE_ID": "s_cloud"}) == \
        config.Target("https://env.example", "s_cloud", "bka_env")


def test_resolve_says_what_is_missing(tmp_path):
    stopped = write_local(tmp_path, pid=None, demo="s_demo")
    with pytest.raises(ConfigError, match="not running.*make run"):
        config.resolve("demo", env={"BUTAI_LOCAL_JSON": str(stopped)})
    none = {"BUTAI_LOCAL_JSON": str(tmp_path / "missing.json")}
    with pytest.raises(ConfigError, match="no stage given"):
        config.resolve(None, env=none)
    with pytest.raises(ConfigError, match="unknown stage 'demo'.*make run.*--api-url"):
        config.resolve("demo", env=none)
    with pytest.raises(ConfigError, match="no agent key for stage 's_x'.*BUTAI_AGENT_KEY"):
        config.resolve("s_x", env={**none, "BUTAI_API_URL": "https://a.example"})
    with pytest.raises(ConfigError, match="no API URL"):
        config.resolve("s_x", env={**none, "BUTAI_AGENT_KEY": "bka_x"})
    with pytest.raises(ConfigError, match="http:// or https://"):
        config.resolve("s_x", env=none, api_url="ftp://x", key="bka_x")
