"""Every effect, condition and line kind plays on a live scenario stage: the director's whole path — the turn
logic, the write it builds, DynamoDB's transaction (moto) — for scenarios built to use them all
(tests/feature_scenarios.py), not only the pure rules.  And a turn that cannot be played never poisons a
stage: the player gets the character's fallback line, the error is in the debug record, the next turn plays."""
from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import pytest

from butai_tools.stage.placeholders import publish_scenario
from chalicelib.director import UNPLAYABLE_NOTICE
from chalicelib.scenario import GameState, PlayerInput
from chalicelib.stage.models import ReplyRequest
from tests.conftest import ROOT
from tests.feature_scenarios import every_feature, random_scenario


@pytest.fixture(scope="module")
def live():
    from moto import mock_aws

    from butai_tools.local.aws import ensure_resources
    from chalicelib import context
    from chalicelib.config import Settings

    patch = pytest.MonkeyPatch()
    for var in ("AWS_SESSION_TOKEN", "AWS_PROFILE"):
        patch.delenv(var, raising=False)
    patch.setenv("AWS_ACCESS_KEY_ID", "testing")
    patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings = Settings()
    try:
        with mock_aws():
            ensure_resources(settings)
            yield SimpleNamespace(settings=settings, services=context.build(settings))
    finally:
        patch.undo()


class Stage:
    """A scenario stage on moto, played through `Director.reply` as the page's replies are."""

    def __init__(self, live, tmp_path, data: dict, name: str = "every"):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        self.services = live.services
        self.director = live.services.director
        key, self.portraits = publish_scenario(live.services, live.settings, path, ROOT / "static" / "characters")
        created = self.director.create(name, key)
        self.stage_id, self.key, self.agent_key = created.stage_id, created.player_key, created.agent_key
        self.rules = self.director.library.get(key).rules

    def say(self, text: str | None = None, given: str | None = None, **request):
        answer = self.director.reply(self.stage_id, self.key,
                                     ReplyRequest(text=text if text is not None else given, **request),
                                     given=PlayerInput.parse(given) if given is not None else None)
        turn = self.director.debug(self.stage_id, self.agent_key, 1)[0]
        assert not turn.unplayable, turn.errors
        assert turn.errors == [] or all("classifier" not in e for e in turn.errors), turn.errors
        return answer.view, turn

    @property
    def state(self) -> GameState:
        return self.rules.restore(self.services.stage.read_stage(self.stage_id).game)


def said(view, turn_entries=None) -> list[tuple[str | None, str, str | None]]:
    """(speaker id, text, face) of the log entries of the last turn (after the last player line)."""
    log = [e for e in view.log]
    last_player = max(i for i, e in enumerate(log) if e.role == "player")
    return [(e.character, e.text, e.expression) for e in log[last_player + 1:] if e.role == "character"]


def test_start_effects_and_chain_set_a_face_and_a_flag(live, tmp_path):
    stage = Stage(live, tmp_path, every_feature(), "start")
    assert set(stage.portraits.generated) == {"甲", "乙"}          # no art anywhere: placeholder faces
    state = stage.state
    assert state.shown_lines == ("S1", "S2") and "来た" in state.flags
    view = stage.services.stage.view(stage.services.stage.read_stage(stage.stage_id),
                                     stage.services.stage.turn_log(stage.services.stage.read_stage(stage.stage_id)))
    faces = {c.id: c.expression for c in view.scene.characters}
    assert faces["甲"] == "smile"


def test_every_condition_and_effect_kind_plays_on_the_stage(live, tmp_path):
    stage = Stage(live, tmp_path, every_feature(), "conditions")
    view, turn = stage.say(given="なし")                                   # なし + 済:S1 + 未:N1 + 未:R1
    assert turn.lines == ["N1"]
    view, turn = stage.say(given="意図:天気")                              # 意図:天気 + フラグ:来た; its flag
    assert turn.lines == ["R1"] and "晴れた" in stage.state.flags
    view, turn = stage.say(given="意図:花")                               # (意図:花 | 意図:天気) + 済:R1 + 未:R2
    assert turn.lines == ["R2", "R3"]                                     # and its chain
    assert ("乙", "見なくていいから。", "angry") in said(view)                # the face R2's effect set
    view, turn = stage.say(given="移動:庭")                               # a parting line, then 到着
    assert turn.lines == ["M1", "G1"] and stage.state.place == "庭"
    view, turn = stage.say(given="意図:天気")                             # alternatives: 意図:天気 + フラグ:晴れた
    assert turn.lines == ["G2"]
    view, turn = stage.say(given="移動:部屋")
    assert turn.lines[0] == "G3" and stage.state.place == "部屋"


def test_a_yes_to_a_question_sets_its_flag_and_the_story_moves_on_at_once(live, tmp_path):
    stage = Stage(live, tmp_path, every_feature(), "replies")
    view, turn = stage.say(given="意図:約束")
    assert turn.lines == ["Q1"]
    view, turn = stage.say("うん、もちろん来るよ")
    assert turn.free_talk.text == "よかった、待ってるね。" and turn.lines == ["P1"]
    assert "約束" in stage.state.flags
    entries = said(view)
    assert entries[0] == ("甲", "よかった、待ってるね。", "smile")
    assert entries[1][0] == "乙" and entries[1][2] == "smile"               # 表情:乙:smile from the reply
    view, turn = stage.say(given="離脱")                                  # the ending the flag chose
    assert stage.state.ended and stage.state.ending == "約束の夜"
    assert view.scene.ending.title == "約束の夜"
    assert [t for _, t, _ in said(view)] == ["もう帰るの？", "約束、忘れないでね。"]   # no お茶 line: no 一服


def test_a_no_sets_another_flag_and_the_default_ending_follows(live, tmp_path):
    stage = Stage(live, tmp_path, every_feature(), "no")
    stage.say(given="意図:約束")
    view, turn = stage.say("いや、来週は無理かな")
    assert turn.free_talk.text == "そっか、残念。" and "断った" in stage.state.flags and turn.lines == ["P2"]
    view, turn = stage.say(given="離脱")
    assert stage.state.ending == "部屋#default" and view.scene.ending.title == "ふつうの夜"
    # after the end nothing plays, and the card stays after a reload of the stage
    record = stage.services.stage.read_stage(stage.stage_id)
    assert stage.services.stage.view(record, stage.services.stage.turn_log(record)).scene.ending.title == "ふつうの夜"


def test_an_order_sets_its_flag_and_a_conditional_closing_line_is_said(live, tmp_path):
    stage = Stage(live, tmp_path, every_feature(), "menu")
    stage.say(given="意図:天気")
    view, turn = stage.say("お茶ください")
    assert turn.free_talk.text == "はい、お茶。" and "一服" in stage.state.flags
    view, turn = stage.say("肩もみお願いします")                              # a service is an item too
    assert turn.free_talk.text == "肩もみ、いくよ。"
    view, turn = stage.say("手ぬぐいください")                               # and goods
    assert turn.free_talk.text == "手ぬぐい一本。"
    view, turn = stage.say("番茶ください")                                  # 番茶, not the お茶 inside it
    assert turn.free_talk.text == "番茶だね。"
    view, turn = stage.say("お会計お願いします")
    assert turn.free_talk.text == "980円だよ。"
    view, turn = stage.say(given="離脱")
    assert stage.state.ending == "約束の夜"                                 # フラグ:一服 + 済:R1
    assert "お茶、おいしかったでしょ。" in [t for _, t, _ in said(view)]


def test_knowledge_stops_holding_once_its_until_holds(live, tmp_path):
    stage = Stage(live, tmp_path, every_feature(), "until")
    view, turn = stage.say("天気はどう？")
    assert turn.lines == ["R1"]                                           # the scripted line first (sets 晴れた)
    stage.say(given="意図:花")                                            # R2, which answers 天気 too
    view, turn = stage.say("雨は？天気はどう？")
    assert turn.free_talk.text == "すっかり晴れたね。"                      # not 「今日は雨だね」: until フラグ:晴れた


def test_a_choice_is_picked_by_its_option_words_whatever_topic_guards_it(live, tmp_path):
    stage = Stage(live, tmp_path, every_feature(), "choice")
    stage.say(given="意図:天気")
    view, turn = stage.say("じゃあ赤い薔薇にしよう")
    assert turn.free_talk.text == "赤い薔薇ね、いいね。"


def test_place_phrases_and_going_where_someone_is_move_the_player(live, tmp_path):
    stage = Stage(live, tmp_path, every_feature(), "phrases")
    view, turn = stage.say("ちょっと庭に出ます")                              # 庭's enter phrase
    assert stage.state.place == "庭"
    view, turn = stage.say("そろそろ縁側に上がります")                         # 庭's leave phrase: 離脱
    assert turn.input == "離脱"
    view, turn = stage.say(given="移動:部屋")
    assert stage.state.place == "部屋"
    stage.say("庭に出ます")
    assert stage.state.place == "庭"
    view, turn = stage.say("甲さんのところに戻ろうかな")                       # where 甲 is: 部屋
    assert turn.input == "移動:部屋" and stage.state.place == "部屋"
    view, turn = stage.say("甲さんのところに戻るのはやめとく")                 # taken back: nobody moves
    assert turn.input != "移動:部屋" and stage.state.place == "部屋"


def test_arrival_reaction_and_greeting_reaction(live, tmp_path):
    stage = Stage(live, tmp_path, every_feature(), "arrival")
    stage.say(given="なし")                                               # N1 answers the first なし
    view, turn = stage.say("こんばんは")
    assert turn.free_talk.source == "reaction" and turn.free_talk.text == "やあ、こんばんは。"
    stage.say(given="移動:庭")
    stage.say(given="移動:部屋")
    view, turn = stage.say(given="移動:庭")                               # G1 was shown: the arrival reaction
    assert said(view)[-1][1] == "また庭に来たの？"


# ---------------------------------------------------------------- never poisoned

def test_an_unplayable_turn_gets_the_tapped_characters_fallback_and_the_next_turn_plays(live, tmp_path,
                                                                                       monkeypatch, caplog):
    stage = Stage(live, tmp_path, every_feature(), "poison")
    loaded = stage.director.library.get(stage.services.stage.read_stage(stage.stage_id).scenario)
    monkeypatch.setattr(loaded.conversation, "play", lambda *a, **k: (_ for _ in ()).throw(KeyError("boom")))
    with caplog.at_level(logging.ERROR):
        answer = stage.director.reply(stage.stage_id, stage.key, ReplyRequest(text="こんばんは", to="乙"))
    [logged] = [r for r in caplog.records if "cannot be played" in r.getMessage()]
    assert logged.exc_info is not None and logged.exc_info[0] is KeyError          # the failure is in the logs
    turn = stage.director.debug(stage.stage_id, stage.agent_key, 1)[0]
    assert turn.unplayable and turn.errors == ["unplayable: KeyError: 'boom'"]
    assert answer.view.log[-1].character == "乙" and answer.view.log[-1].text == "へえ。"
    assert not stage.services.stage.unread_replies(stage.stage_id)
    monkeypatch.undo()
    view, turn = stage.say("こんばんは")
    assert turn.lines == ["N1"]                                           # the game goes on where it was


def test_without_a_fallback_line_the_notice_answers(live, tmp_path, monkeypatch):
    data = every_feature()
    for character in data["characters"]:
        character["fallbacks"] = []
    stage = Stage(live, tmp_path, data, "nofallback")
    loaded = stage.director.library.get(stage.services.stage.read_stage(stage.stage_id).scenario)
    monkeypatch.setattr(loaded.conversation, "play", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("x")))
    answer = stage.director.reply(stage.stage_id, stage.key, ReplyRequest(text="こんばんは"))
    assert answer.view.log[-1].role == "notice" and answer.view.log[-1].text == UNPLAYABLE_NOTICE


# ---------------------------------------------------------------- random scenarios, random walks

@pytest.mark.parametrize("seed", range(6))
def test_random_scenarios_play_on_the_stage_without_an_unplayable_turn(live, tmp_path, seed):
    import random
    stage = Stage(live, tmp_path, random_scenario(seed), f"random{seed}")
    rng = random.Random(seed)
    texts = ["こんばんは", "茶ください", "団子ください", "お会計", "うん、いいよ", "いや、やめとく", "話題甲の話"]
    for _ in range(25):
        state = stage.state
        if state.ended:
            stage.say("もう一度")
            continue
        options = [str(c) for c in stage.rules.candidates(state)] + ["なし"]
        if rng.random() < 0.35:
            stage.say(rng.choice(texts))
        else:
            stage.say(given=rng.choice(options))
