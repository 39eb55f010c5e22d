"""The scenario director over moto: a scenario played through the stage's routes."""
import dataclasses
import json

import pytest

from butai_tools.interpret.export import export_eval
from chalicelib.director import Director, ScenarioLibrary
from chalicelib.llm.errors import ModelCallError
from chalicelib.scenario import PlayerInput
from chalicelib.stage.models import ReplyRequest
from chalicelib.stage.records import DirectorMemory
from chalicelib.stage.store import AlreadyClaimed, StaleGame
from chalicelib.stage.tails import LogTails
from chalicelib.talk import Talker
from tests.conftest import ROOT

SCENARIO = ROOT / "scenarios/chinoike.json"


@pytest.fixture
def director(services):
    return services.director


@pytest.fixture
def played(director):
    key = director.library.put(SCENARIO)
    return director.create("play", key)


def reply(client, stage, text, **extra):
    r = client.http.post(f"/stages/{stage.stage_id}/reply", body=json.dumps({"text": text, **extra}),
                         headers={"Authorization": f"Bearer {stage.player_key}", "Content-Type": "application/json"})
    assert r.status_code == 202, r.body
    return r.json_body["view"]


def answer_unread(director, stage_id):
    """Answers the replies the stage announces as unread, oldest first, as the next reply's turn would
    (a test's way in: in the service they are answered before a new reply).  Returns the stage after."""
    record, _, _ = director._play(director.stages.scenario_stage(stage_id))
    return record


def lines(view, since=0):
    return [(e["role"], e.get("character"), e["text"]) for e in view["log"][since:]]


def test_a_new_game_speaks_the_start_lines(client, played):
    view = client.http.get(f"/stages/{played.stage_id}",
                           headers={"Authorization": f"Bearer {played.player_key}"}).json_body
    assert view["stage"]["kind"] == "scenario" and view["stage"]["title"] == "血の池の夜"
    assert [e["character"] for e in view["log"]] == ["赤尾妙子", "神楽坂葵"]
    scene = view["scene"]
    assert scene["place"] == "店内" and scene["speaking"] == "神楽坂葵"
    assert {c["id"]: c["expression"] for c in scene["characters"]} == {"赤尾妙子": "smile", "神楽坂葵": "neutral"}
    assert scene["characters"][0]["image_url"].endswith("/smile.svg")
    assert view["current"]["speaker"] == "葵"


def test_the_reference_scenario_in_free_japanese(client, played):
    view = reply(client, played, "こんばんは")
    # free conversation (no model configured: the responder's greeting reaction), then A03 and A04
    assert lines(view, 2)[1:] == [
        ("character", "赤尾妙子", "いらっしゃい。ゆっくりしていって。"),
        ("character", "赤尾妙子", "変えるって、葵ちゃんが一人で言ってるだけよ。うちは三十年このままでやってきたんだから。"),
        ("character", "神楽坂葵", "……あなたはどう思う？")]
    assert lines(view, 2)[0] == ("player", None, "こんばんは")
    view = reply(client, played, "流す曲を変えてみたら？")
    assert [t for _, _, t in lines(view)[-2:]] == [
        "音楽は昭和歌謡よ、決まってるじゃない。……葵ちゃんの映画音楽？　あれ、眠くならない？",
        "失礼ね。夜に合うのよ、ああいうのが。"]
    assert {c["id"]: c["expression"] for c in view["scene"]["characters"]}["神楽坂葵"] == "angry"
    assert view["log"][-1]["expression"] == "angry"  # O2 is shown with the face its effect sets
    view = reply(client, played, "控え室に行こう")
    assert view["scene"]["place"] == "控え室" and [c["id"] for c in view["scene"]["characters"]] == ["神楽坂葵"]
    assert view["log"][-1]["text"].startswith("散らかっててごめんね")
    view = reply(client, played, "お邪魔しました")
    # leaving the staff room offers the way back; 「行き先」 is said by the buttons only, not by a notice too
    assert view["scene"]["destinations"] == [{"place": "店内", "name": "店内"}]
    assert view["scene"]["notices"] == [] and view["log"][-1]["role"] == "player"
    view = reply(client, played, "店内へ行く", move="店内")
    assert view["scene"]["place"] == "店内" and view["scene"]["destinations"] == []
    # nothing scripted greets the return: ママ's arrival reaction, with its face
    assert view["log"][-1]["character"] == "赤尾妙子" and view["log"][-1]["expression"] == "surprised"
    view = reply(client, played, "ごちそうさまでした、また来ます")
    # leaving the shop ends the visit: closing lines, the ending card, no destinations
    assert [e["character"] for e in view["log"][-3:]] == ["赤尾妙子", "神楽坂葵", None]
    assert view["log"][-1] == {**view["log"][-1], "role": "notice", "text": "血の池の夜　おしまい"}
    assert view["scene"]["destinations"] == [] and view["scene"]["ending"]["restart"] == "もう一度"
    view = reply(client, played, "まだいるよ")
    # still over, and the ending is not announced again for every line
    assert view["scene"]["ending"] and [e["role"] for e in view["log"][-2:]] == ["notice", "player"]
    view = reply(client, played, "もう一度")
    assert view["scene"].get("ending") is None and view["scene"]["place"] == "店内"
    assert view["log"][-1]["text"].startswith("ママ、その話はあと")
    assert "もう一度" not in [e["text"] for e in view["log"]]       # typed or tapped, a restart is no line said


def test_two_parts_of_one_line_answered_by_two_characters_are_logged_in_order(client, played):
    reply(client, played, "こんばんは")
    view = reply(client, played, "かんぱーい！ところで葵ちゃんっていくつ？")
    said = lines(view)[-3:]
    assert said[0] == ("player", None, "かんぱーい！ところで葵ちゃんっていくつ？")
    assert said[1][1] == "赤尾妙子" and "乾杯" in said[1][2]           # the toast, by the one who answers
    assert said[2][1] == "神楽坂葵" and "二十代" in said[2][2]         # the question, by the one it is about
    assert view["scene"]["speaking"] == "神楽坂葵"


def test_the_same_reply_handled_twice_gives_one_turn(director, played, services):
    stages = services.stage
    stages.reply(played.stage_id, played.player_key, ReplyRequest(text="こんばんは"))
    record = stages.store.get_stage(played.stage_id)
    pending = stages.store.unread_replies(played.stage_id)
    loaded = director.library.get(record.scenario)
    first = director.turn(record, loaded, pending[0])
    second = director.turn(record, loaded, pending[0])   # a second handler, same reply, same game state
    stages.store.apply_turn(played.stage_id, first)
    try:
        # Refused, or recognised as the same turn already applied: either way nothing is written twice.
        stages.store.apply_turn(played.stage_id, second)
    except (AlreadyClaimed, StaleGame):
        pass
    log = stages.store.recent_log(played.stage_id, 50)
    assert [e.text for e in log].count("……あなたはどう思う？") == 1
    assert [e.text for e in log].count("こんばんは") == 1
    assert stages.store.get_stage(played.stage_id).game_version == record.game_version + 1
    assert answer_unread(director, played.stage_id).game_version == record.game_version + 1  # nothing left


class FailingBackend:
    name = "failing"

    def interpret(self, text, choices, context):
        raise TimeoutError("the classifier did not answer")


def test_a_classifier_failure_keeps_the_game_going(services, aws_settings, client):
    from chalicelib import aws
    library = ScenarioLibrary(aws.client("s3", aws_settings), aws_settings.bucket, backend_factory=FailingBackend)
    services.director = Director(services.stage, library)
    stage = services.director.create("failing", library.put(SCENARIO))
    view = reply(client, stage, "流す曲を変えてみたら？")
    assert lines(view)[2] == ("player", None, "流す曲を変えてみたら？")  # the reply is kept
    assert view["log"][-1]["text"] == "……あなたはどう思う？"         # なし: free talk + progression
    turn = services.director.debug(stage.stage_id, stage.agent_key)[-1]
    assert turn.input == "なし" and any("classifier" in e for e in turn.errors)
    assert services.stage.fetch_replies(stage.stage_id, stage.agent_key) == []  # claimed by the turn, once


class Broken:
    name = "broken"

    def __init__(self):
        self.calls = 0

    def complete(self, messages, *, max_tokens, temperature):
        self.calls += 1
        if self.calls % 2:
            raise ModelCallError("unavailable", "HTTP 503")
        return "Sure! Here is the answer."


def test_a_generation_failure_answers_with_a_recorded_fallback(services, played, client):
    services.director.talker = Talker(Broken())
    view = reply(client, played, "何か面白い話ある？")
    assert view["log"][3]["text"] == "さあ、私にはわからないわね。"    # the model failed: an authored reaction
    turn = services.director.debug(played.stage_id, played.agent_key)[-1]
    assert turn.free_talk.source == "reaction" and turn.free_talk.reason == "not_japanese"
    assert [a.error or a.rejected for a in turn.free_talk.attempts] == ["unavailable", "not_japanese"]
    assert "free conversation: not_japanese" in turn.errors


def test_small_talk_is_answered_without_repeats(services, played, client):
    texts = ("まあね", "いい夜だね", "ふーん", "ふむ", "へえ", "ほう", "そうなんだ", "まあいいや")
    for text in texts:   # nothing the scenario answers
        view = reply(client, played, text)
    turns = services.director.debug(played.stage_id, played.agent_key, limit=len(texts))
    sources = [t.free_talk.source for t in turns]
    # the responder first brings things up herself (chatter), then the fallbacks rotate
    assert sources == ["chatter"] * 5 + ["fallback"] * 3
    said = [(e["text"], e["expression"]) for e in view["log"] if e["role"] == "character"]
    assert len({t for t, _ in said}) == len(said)          # no line twice
    # each with its own face (no grin carried over from a scripted line)
    assert ("さあ、どうだったかしらね。", "neutral") in said and ("その話は、また今度ゆっくりね。", "smile") in said


def test_addressee_from_the_page(services, played, client):
    reply(client, played, "こんばんは")
    view = reply(client, played, "どう思う？", to="神楽坂葵")
    turn = services.director.debug(played.stage_id, played.agent_key)[-1]
    assert turn.to == "神楽坂葵" and turn.addressee == "神楽坂葵"
    assert view["log"][-1]["character"] == "神楽坂葵"  # 葵 answers, not the place's responder


def test_reset_restarts_and_export_eval_reviews_real_play(services, played, client, tmp_path):
    reply(client, played, "こんばんは")
    reply(client, played, "流す曲を変えてみたら？")
    services.director.reset(played.stage_id)
    view = client.http.get(f"/stages/{played.stage_id}",
                           headers={"Authorization": f"Bearer {played.player_key}"}).json_body
    assert view["scene"]["turn"] == 0 and view["log"][-1]["text"].startswith("ママ、その話はあと")
    reply(client, played, "おつまみは何がおすすめ？")
    data = export_eval(services.stage, played.stage_id)
    assert data["scenario"] == "chinoike.json"
    assert [(c["setup"], c["text"], c["expect"]) for c in data["cases"]] == [
        ([], "こんばんは", "なし"),
        (["なし"], "流す曲を変えてみたら？", "意図:音楽"),
        ([], "おつまみは何がおすすめ？", "なし")]


def test_debug_view_needs_the_agent_key_unless_players_may_see_it(services, played, client):
    reply(client, played, "こんばんは")
    url = f"/stages/{played.stage_id}/debug?limit=1"
    as_player = client.http.get(url, headers={"Authorization": f"Bearer {played.player_key}"})
    assert as_player.status_code == 403
    as_agent = client.http.get(url, headers={"Authorization": f"Bearer {played.agent_key}"}).json_body
    turn = as_agent["turns"][0]
    assert turn["text"] == "こんばんは" and turn["input"] == "なし"
    assert [c["input"] for c in turn["interpretation"]["candidates"]][:2] == ["移動:控え室", "離脱"]
    assert set(turn["ms"]) >= {"candidates", "narrowing", "model", "refinement", "rules", "talk", "total"}
    services.director.players_see_debug = True
    assert client.http.get(url, headers={"Authorization": f"Bearer {played.player_key}"}).status_code == 200
    bad = client.http.get(f"/stages/{played.stage_id}/debug?limit=x",
                          headers={"Authorization": f"Bearer {played.agent_key}"})
    assert bad.status_code == 400 and bad.json_body["error"]["field"] == "limit"


def test_agent_stages_are_untouched_by_the_director(client, stage, services):
    r = client.http.post(f"/stages/{stage.stage_id}/reply", body=json.dumps({"text": "やあ"}),
                         headers={"Authorization": f"Bearer {stage.player_key}", "Content-Type": "application/json"})
    assert r.status_code == 202 and r.json_body["view"] is None
    assert [x.text for x in services.stage.fetch_replies(stage.stage_id, stage.agent_key)] == ["やあ"]
    assert PlayerInput.parse("なし") == PlayerInput.none()


def test_a_turn_computed_from_a_stale_game_is_refused_and_recomputed(director, played, services):
    stages = services.stage
    for text in ("こんばんは", "流す曲を変えてみたら？"):
        stages.reply(played.stage_id, played.player_key, ReplyRequest(text=text))
    record = stages.store.get_stage(played.stage_id)
    first, second = stages.store.unread_replies(played.stage_id)
    loaded = director.library.get(record.scenario)
    late = director.turn(record, loaded, second)      # computed before the first turn landed
    stages.store.apply_turn(played.stage_id, director.turn(record, loaded, first))
    with pytest.raises(StaleGame):
        stages.store.apply_turn(played.stage_id, late)
    answer_unread(director, played.stage_id)          # answers the second reply on top of the first turn
    texts = [e.text for e in stages.store.recent_log(played.stage_id, 50)]
    # the replies were both stored first; the second turn's lines come after the first turn's
    assert texts.index("……あなたはどう思う？") < texts.index("失礼ね。夜に合うのよ、ああいうのが。")
    assert texts[-1] == "失礼ね。夜に合うのよ、ああいうのが。"  # 音楽 after A04: O1, O2


def test_a_turn_is_one_read_and_one_write_when_the_process_holds_the_log(client, played, services):
    calls = []
    services.stage.store._db.meta.events.register("before-call.dynamodb",
                                                  lambda model, **_: calls.append(model.name))
    reply(client, played, "こんばんは")
    calls.clear()
    view = reply(client, played, "流す曲を変えてみたら？")
    assert calls == ["GetItem", "TransactWriteItems"]           # the stage, then reply + claim + turn
    polled = client.http.get(f"/stages/{played.stage_id}",
                             headers={"Authorization": f"Bearer {played.player_key}"}).json_body
    assert view["log"] == polled["log"] and view["version"] == polled["version"]
    services.stage.log_tails = LogTails()                        # as a fresh Lambda instance
    calls.clear()
    reply(client, played, "控え室に行こう")
    assert calls == ["GetItem", "Query", "TransactWriteItems"]


def test_a_line_spoken_between_turns_is_in_the_next_turns_view(client, played, services):
    from chalicelib.stage.models import SpeakRequest
    reply(client, played, "こんばんは")
    services.stage.speak(played.stage_id, played.agent_key, SpeakRequest(text="（外から）いらっしゃい"))
    view = reply(client, played, "流す曲を変えてみたら？")
    texts = [e["text"] for e in view["log"]]
    assert texts.index("（外から）いらっしゃい") < texts.index("流す曲を変えてみたら？")
    assert services.stage.fetch_replies(played.stage_id, played.agent_key) == []


class Scripted:
    """A generation model that answers with the given lines, in turn."""
    name = "scripted"

    def __init__(self, *texts):
        self.texts = list(texts)

    def complete(self, messages, *, max_tokens, temperature):
        return self.texts.pop(0)


def test_free_conversation_lines_get_a_judged_face(services, played, client):
    services.director.talker = Talker(Scripted("ありがとね、嬉しいこと言ってくれるじゃないか！",
                                               "ごめんね、その話はあたしにはよく分からないんだ。"))
    view = reply(client, played, "こんばんは")
    said = next(e for e in view["log"] if e["text"] == "ありがとね、嬉しいこと言ってくれるじゃないか！")
    assert said["expression"] == "smile" and said["expression_source"] == "auto"
    assert max(said["expression_scores"], key=said["expression_scores"].get) == "smile"
    keys = set(json.loads((ROOT / "static/characters" / said["character"] / "manifest.json").read_text())["expressions"])
    assert set(said["expression_scores"]) == keys          # chosen among the speaker's own expressions
    assert all(e.get("expression_source") == "agent" for e in view["log"] if e["role"] == "character" and e is not said)
    turn = services.director.debug(played.stage_id, played.agent_key)[-1]
    assert turn.free_talk.expression == turn.free_talk.judgment.expression == "smile"
    assert turn.free_talk.judgment.judge == "lexicon"

    view = reply(client, played, "この店、いつからあるの？")
    said = next(e for e in view["log"] if e["text"] == "ごめんね、その話はあたしにはよく分からないんだ。")
    assert said["expression"] == "troubled"                # judged again, not inherited from the smile


def test_a_judged_face_shows_in_the_scene_when_the_line_is_the_last(services, played, client):
    director = services.director
    record = director.stages.read_stage(played.stage_id)
    loaded = director.library.get(record.scenario)
    step = loaded.rules.handle(PlayerInput.none(), loaded.rules.restore(record.game))
    from chalicelib.talk import TalkResult
    if step.free_talk is None:
        pytest.skip("the reference scenario answers なし with scripted lines only")
    step = dataclasses.replace(step, lines=())
    talk = TalkResult("えっ、まさか本当に？", "model")
    write = director._write(record, loaded, step, state_before=loaded.rules.restore(record.game), talk=talk,
                            memory=DirectorMemory(), turn=None, claim=None)
    scene = json.loads(write.stage.scene)
    faces = {c["id"]: c["expression"] for c in scene["characters"]}
    assert faces[step.free_talk.speaker] == "surprised" and write.stage.line.expression == "surprised"
    assert write.stage.line.expression_source == "auto"


def test_the_conversation_is_kept_in_the_directors_memory_with_the_turn(services, played, client):
    reply(client, played, "こんばんは")
    reply(client, played, "とりあえずビールください")
    record = services.stage.read_stage(played.stage_id)
    memory = DirectorMemory.read(record.director)
    # written in the same conditional write as the game state: the order, the lines said, the open question
    assert memory.conversation.orders == ["ビール"] and "menu/赤尾妙子/ビール#1" in memory.conversation.said
    assert memory.conversation.last.text == "はい、ビール。よく冷えてるわよ。"
    turn = services.director.debug(played.stage_id, played.agent_key)[-1]
    assert turn.free_talk.source == "order" and turn.context["order"]["item"] == "ビール"


def test_the_restart_control_is_not_a_line_and_does_nothing_before_the_end(services, played, client):
    reply(client, played, "こんばんは")
    before = reply(client, played, "もう一度", restart=True)            # the game has not ended: nothing happens
    assert "もう一度" not in [e["text"] for e in before["log"]] and before["scene"]["turn"] == 1
    view = reply(client, played, "ごちそうさま、また来ます")
    assert view["scene"]["ending"] is not None
    view = reply(client, played, "もう一度", restart=True)
    assert view["scene"].get("ending") is None and view["log"][-1]["text"].startswith("ママ、その話はあと")
    assert [e["text"] for e in view["log"]].count("もう一度") == 0
    assert DirectorMemory.read(services.stage.read_stage(played.stage_id).director).conversation.said == {}


def test_faces_belong_to_the_turn_and_then_rest(client, played):
    """A face lasts the turn it is set in: O2 makes 葵 angry; the next turn in which she says nothing she
    rests (neutral), and a line of hers that sets no face of its own (B01) is said at rest too."""
    faces = lambda view: {c["id"]: c["expression"] for c in view["scene"]["characters"]}  # noqa: E731
    reply(client, played, "こんばんは")
    view = reply(client, played, "流す曲を変えてみたら？")
    assert faces(view) == {"赤尾妙子": "neutral", "神楽坂葵": "angry"}      # O1 sets no face for ママ; O2 angry
    view = reply(client, played, "ママ、きれいですね")                      # ママ's reaction only
    assert [e["character"] for e in view["log"][-2:]] == [None, "赤尾妙子"]
    assert faces(view) == {"赤尾妙子": "smile", "神楽坂葵": "neutral"}
    view = reply(client, played, "控え室に行こう")
    assert view["log"][-1]["text"].startswith("散らかっててごめんね")
    assert view["log"][-1]["expression"] == "neutral" and faces(view) == {"神楽坂葵": "neutral"}
