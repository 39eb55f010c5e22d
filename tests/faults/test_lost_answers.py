"""A crash between claiming a reply and answering it loses no reply.

- Agents: `fetch_replies` takes a `request_id`; a retry with the same id gets
  the replies that call claimed again (and nothing new), so an answer lost on
  the way is recovered by the retry the client makes anyway.
- The director: the claim and the answer are one conditional write, so there
  is no moment where a reply is claimed but unanswered; a handler that dies
  before that write leaves the reply unread, and the next turn answers it first.
"""
import json

from butai.client import RetryPolicy, Stage
from chalicelib import context
from chalicelib.config import Settings
from chalicelib.stage.models import ReplyRequest
from tests.api.test_routes import post
from tests.conftest import ROOT


def fetch(client, stage, request_id=None):
    body = {"request_id": request_id} if request_id else None
    r = post(client, f"/stages/{stage.stage_id}/fetch_replies", stage.agent_key, body)
    assert r.status_code == 200, r.body
    return [x["text"] for x in r.json_body]


def test_a_retried_fetch_gets_the_same_replies_and_nothing_new(client, stage, services):
    for text in ("一", "二"):
        services.stage.reply(stage.stage_id, stage.player_key, ReplyRequest(text=text))
    assert fetch(client, stage, "fetch-1") == ["一", "二"]
    # The answer was lost; the agent retries the same call.
    assert fetch(client, stage, "fetch-1") == ["一", "二"]
    services.stage.reply(stage.stage_id, stage.player_key, ReplyRequest(text="三"))
    assert fetch(client, stage, "fetch-1") == ["一", "二"]      # still that call's answer
    assert fetch(client, stage, "fetch-2") == ["三"]            # a new call gets the new reply
    assert fetch(client, stage) == [] and fetch(client, stage, "fetch-3") == []


def test_a_fetch_request_id_is_still_checked_against_the_key(client, stage):
    r = post(client, f"/stages/{stage.stage_id}/fetch_replies", stage.player_key, {"request_id": "x"})
    assert r.status_code == 403
    r = post(client, f"/stages/{stage.stage_id}/fetch_replies", stage.agent_key, {"request_id": "has space"})
    assert r.status_code == 400 and r.json_body["error"]["field"] == "request_id"


def test_the_python_client_recovers_replies_whose_answer_was_lost(local_runtime, monkeypatch):
    api = local_runtime.info["api_url"]
    service = context.build(Settings(aws_endpoint=local_runtime.info["aws_endpoint"])).stage
    made = service.create_stage("lost-answer")
    for text in ("届いた", "もう一つ"):
        service.reply(made.stage_id, made.player_key, ReplyRequest(text=text))
    stage = Stage(api, made.stage_id, made.agent_key, retry=RetryPolicy(backoff=0.01, jitter=0))
    real = stage._opener.open
    lost = []

    def lose_first_answer(request, *args, **kwargs):
        response = real(request, *args, **kwargs)
        if request.full_url.endswith("/fetch_replies") and not lost:
            lost.append(json.loads(request.data))
            response.read()
            raise ConnectionResetError("the answer was lost on the way")
        return response

    monkeypatch.setattr(stage._opener, "open", lose_first_answer)
    assert [r.text for r in stage.fetch_replies()] == ["届いた", "もう一つ"]
    assert lost and lost[0]["request_id"]                       # the lost call had claimed them
    assert stage.fetch_replies() == []


def test_a_director_that_dies_before_its_turn_write_leaves_the_reply_for_the_next_turn(client, services):
    director = services.director
    played = director.create("crash", director.library.put(ROOT / "scenarios/chinoike.json"))
    # The reply is stored, then the handler dies before answering it.
    services.stage.reply(played.stage_id, played.player_key, ReplyRequest(text="こんばんは"))
    r = post(client, f"/stages/{played.stage_id}/reply", played.player_key, {"text": "流す曲を変えてみたら？"})
    texts = [e["text"] for e in r.json_body["view"]["log"]]
    # Both answered, in order: the orphan first (なし → A03/A04), then 音楽 (O1/O2).
    assert texts.index("……あなたはどう思う？") < texts.index("失礼ね。夜に合うのよ、ああいうのが。")
    assert services.stage.store.unread_replies(played.stage_id) == []
    turns = director.debug(played.stage_id, played.agent_key, limit=2)
    assert [t.text for t in turns] == ["こんばんは", "流す曲を変えてみたら？"]
