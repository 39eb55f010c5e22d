"""Step semantics beyond the acceptance examples: addressee, moves, leave,
free conversation, purity, candidates, and the helpers for the interpreter."""
from __future__ import annotations

import pytest

from chalicelib.scenario import (
    AlreadyHereNotice,
    ExitsNotice,
    GameState,
    PlayerInput,
    RefusedMoveNotice,
)

I = PlayerInput.parse


def after(rules, *inputs, addressee=None):
    state = rules.start().state
    for text in inputs:
        state = rules.handle(I(text), state, addressee).state
    return state


def snapshot(state: GameState):
    return (state.place, state.turn, state.shown_lines, state.last_line, dict(state.expressions))


# ---------------------------------------------------------------- addressee

def test_addressee_other_than_responder_blocks_someone_elses_response(rules):
    state = after(rules, "なし")
    step = rules.handle(I("意図:音楽"), state, addressee="神楽坂葵")
    assert step.line_ids == ()                       # O1 is ママ's: it does not fire...
    assert step.free_talk is not None
    assert step.free_talk.speaker == "神楽坂葵"      # ...and 葵 answers freely with her own knowledge
    given = step.free_talk.knowledge
    assert given[0].info == "店では映画のサントラを流したい。夜の店に合うと本気で思っている"
    assert all("意図:" not in k.condition for k in given[1:])   # and only entries of no topic besides
    later = rules.handle(I("意図:音楽"), step.state)
    assert later.line_ids == ("O1", "O2")            # O1 stayed unfired for later


def test_addressee_speaking_the_response_line_gets_it(rules):
    state = after(rules, "なし")
    step = rules.handle(I("意図:二人の先の話"), state, addressee="神楽坂葵")
    assert step.line_ids == ("F1",)
    assert step.state.expressions["神楽坂葵"] == "embarrassed"


def test_addressee_equal_to_responder_changes_nothing(rules):
    state = after(rules, "なし")
    assert rules.handle(I("意図:音楽"), state, addressee="赤尾妙子").line_ids == ("O1", "O2")


def test_addressee_not_present_is_ignored(rules):
    state = after(rules, "なし", "移動:控え室")
    step = rules.handle(I("意図:音楽"), state, addressee="赤尾妙子")
    assert step.free_talk is not None and step.free_talk.speaker == "神楽坂葵"


def test_addressee_skips_to_their_own_line(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:天気"), ("R2", "乙", "意図:天気")])
    state = rules.start().state
    assert rules.handle(I("意図:天気"), state, addressee="乙").line_ids == ("R2",)
    assert rules.handle(I("意図:天気"), state).line_ids == ("R1",)
    assert rules.first_response_line(I("意図:天気"), state).id == "R1"
    assert rules.first_response_line(I("意図:天気"), state, addressee="乙").id == "R2"


def test_unknown_addressee_is_a_programming_error(rules):
    with pytest.raises(ValueError, match='unknown character "誰か"'):
        rules.handle(I("なし"), rules.start().state, addressee="誰か")


# ---------------------------------------------------------------- moves and leaving

def test_move_to_a_place_that_is_not_an_exit(make_rules):
    rules = make_rules(
        room=[("R1", "甲", "移動:庭")], garden=[("G1", "乙", "到着")],
        places=[{"id": "部屋", "people": ["甲", "乙"], "responder": "甲", "exits": ["庭"]},
                {"id": "庭", "people": ["乙"], "responder": "乙", "exits": []},
                {"id": "屋根", "people": [], "exits": []}])
    state = rules.start().state
    step = rules.handle(I("移動:屋根"), state)
    assert step.notices == (RefusedMoveNotice("屋根", "not_an_exit", ("庭",)),)
    assert step.line_ids == () and step.free_talk is None
    assert step.state.place == "部屋"
    assert snapshot(step.state)[2:] == snapshot(state)[2:]
    assert step.state.turn == state.turn + 1
    assert "屋根" in step.notices[0].text


def test_move_to_an_unknown_place_is_refused(rules):
    step = rules.handle(I("移動:裏口"), rules.start().state)
    assert step.notices == (RefusedMoveNotice("裏口", "unknown_place", ("控え室",)),)
    assert step.state.place == "店内"


def test_move_to_the_current_place_is_already_here(rules):
    state = rules.start().state
    step = rules.handle(I("移動:店内"), state)
    assert step.notices == (AlreadyHereNotice("店内"),)
    assert step.line_ids == () and step.state.place == "店内"
    assert step.notices[0].to_dict() == {"kind": "already_here", "place": "店内"}


def test_move_happens_without_a_parting_line_and_arrival_fires_once(spec_rules):
    rules = spec_rules
    state = rules.start().state
    step = rules.handle(I("移動:控え室"), state)
    assert step.line_ids == ("B01",) and step.state.place == "控え室"
    back = rules.handle(I("移動:店内"), step.state)
    assert back.line_ids == () and back.state.place == "店内"
    again = rules.handle(I("移動:控え室"), back.state)
    assert again.line_ids == ()                      # 到着 + 未:B01: once only


def test_leave_lists_exits_and_stays(spec_rules):
    rules = spec_rules
    state = after(rules, "なし")
    step = rules.handle(I("離脱"), state)
    assert step.notices == (ExitsNotice(("控え室",)),)
    assert step.line_ids == () and step.free_talk is None
    assert step.state.place == "店内"


def test_progression_does_not_run_for_moves_or_leave(rules):
    state = rules.start().state                      # A03 is a pending 入力 line
    assert "A03" not in rules.handle(I("離脱"), state).line_ids
    assert "A03" not in rules.handle(I("移動:控え室"), state).line_ids
    assert rules.handle(I("意図:赤いドア"), state).line_ids == ("A03", "A04")


# ---------------------------------------------------------------- free conversation

def test_free_talk_knowledge_holds_for_this_input(make_rules):
    rules = make_rules()
    state = rules.start().state
    weather = rules.handle(I("意図:天気"), state).free_talk
    assert weather.speaker == "甲" and weather.intent == "天気"
    assert [k.info for k in weather.knowledge] == ["甲は晴れが好き", "甲はいつも眠い"]
    nothing = rules.handle(I("なし"), state, addressee="乙").free_talk
    assert nothing.speaker == "乙" and nothing.intent is None
    assert [k.info for k in nothing.knowledge] == ["乙は話題がないと黙る"]
    asked = rules.handle(I("意図:天気"), state, addressee="乙").free_talk
    assert asked.speaker == "乙" and [k.info for k in asked.knowledge] == ["乙は雨が好き"]


def test_no_free_talk_where_nobody_is_present(make_rules):
    rules = make_rules(places=[{"id": "部屋", "people": [], "exits": ["庭"]},
                               {"id": "庭", "people": ["乙"], "exits": ["部屋"]}])
    step = rules.handle(I("なし"), rules.start().state)
    assert step.free_talk is None
    assert rules.responder("庭") == "乙"            # defaults to the first person


def test_knows_about(rules):
    state = rules.start().state
    assert rules.knows_about("神楽坂葵", "二人の先の話", state)
    assert not rules.knows_about("赤尾妙子", "二人の先の話", state)


# ---------------------------------------------------------------- purity and state

def test_handle_never_mutates_its_input_state(rules):
    state = after(rules, "なし")
    before = snapshot(state)
    for text in ["意図:音楽", "移動:控え室", "離脱", "なし", "移動:店内"]:
        rules.handle(I(text), state)
        assert snapshot(state) == before
    with pytest.raises(AttributeError):
        state.place = "控え室"  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.expressions["赤尾妙子"] = "angry"  # type: ignore[index]


def test_branching_from_one_state_keeps_branches_apart(rules):
    state = after(rules, "なし")
    music = rules.handle(I("意図:音楽"), state).state
    menu = rules.handle(I("意図:メニュー"), state).state      # branches from the same state
    assert music.shown_lines[-2:] == ("O1", "O2") and not music.has_shown("M1")
    assert menu.shown_lines[-2:] == ("M1", "M2") and not menu.has_shown("O1")
    assert not state.has_shown("O1") and not state.has_shown("M1")
    both = rules.handle(I("意図:メニュー"), music).state
    assert both.shown_lines == ("A01", "A02", "A03", "A04", "O1", "O2", "M1", "M2")
    assert rules.handle(I("意図:音楽"), music).line_ids == ()


def test_turns_count_inputs(rules):
    start = rules.start()
    assert start.state.turn == 0
    assert after(rules, "なし", "離脱", "移動:店内").turn == 3


def test_same_input_same_result(rules):
    state = after(rules, "なし")
    a = rules.handle(I("意図:音楽"), state)
    b = rules.handle(I("意図:音楽"), state)
    assert a.to_dict() == b.to_dict()


def test_unknown_intent_is_rejected(rules):
    with pytest.raises(ValueError, match='unknown intent "ラーメン"'):
        rules.handle(I("意図:ラーメン"), rules.start().state)


def test_handle_accepts_written_inputs(rules):
    state = rules.start().state
    assert rules.handle("なし", state).to_dict() == rules.handle(PlayerInput.none(), state).to_dict()


# ---------------------------------------------------------------- candidates

def test_topic_not_open_yet_is_left_out(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:天気 + 済:R2"), ("R2", "乙", "意図:花")])
    state = rules.start().state
    # 天気: knowledge holds, but its only response waits on R2: left out
    assert [str(c) for c in rules.candidates(state)] == ["意図:花", "移動:庭", "離脱"]
    opened = rules.handle(I("意図:花"), state).state
    assert [str(c) for c in rules.candidates(opened)] == ["意図:天気", "移動:庭", "離脱", "意図:花"]


def test_answered_needs_knowledge_of_someone_present_or_a_shown_line(make_rules):
    rules = make_rules(room=[("R1", "甲", "意図:花 + 未:R9"), ("R9", "甲", "なし")])
    state = rules.start().state
    assert [str(c) for c in rules.answered_intents(state)] == ["意図:天気"]
    closed = rules.handle(I("なし"), state).state     # R9 shown: R1 can no longer fire
    assert [str(c) for c in rules.input_candidates(closed)] == ["移動:庭", "離脱"]
    assert [str(c) for c in rules.answered_intents(closed)] == ["意図:天気", "意図:花"]
    garden = rules.handle(I("移動:庭"), state).state
    assert [str(c) for c in rules.answered_intents(garden)] == ["意図:天気"]  # only 乙 is there


def test_knowledge_with_condition_counts_only_when_it_holds(make_rules, make_data):
    data = make_data(room=[("R1", "甲", "なし")])
    data["characters"][0]["knowledge"] = [{"info": "後で分かる", "condition": "意図:花 + 済:R1"}]
    data["characters"][1]["knowledge"] = []
    from chalicelib.scenario import GameRules, load_scenario_data
    rules = GameRules(load_scenario_data(data))
    state = rules.start().state
    assert rules.answered_intents(state) == []
    assert [str(c) for c in rules.answered_intents(rules.handle(I("なし"), state).state)] == ["意図:花"]


def test_first_response_line_and_refused_moves(rules):
    state = after(rules, "なし")
    assert rules.first_response_line(I("意図:音楽"), state).speaker == "赤尾妙子"
    assert rules.first_response_line(I("意図:赤いドア"), state) is None
    assert rules.first_response_line(I("移動:店内"), state) is None


def test_candidates_do_not_depend_on_how_many_lines_were_shown(rules):
    # Same question asked of states with the same facts but different histories.
    a = after(rules, "なし", "意図:音楽")
    b = after(rules, "なし", "移動:控え室", "移動:店内", "意図:音楽")
    assert rules.candidates(a)[:4] == rules.candidates(b)[:4]


def test_addressee_narrowing_keeps_what_the_addressee_can_answer(rules, make_rules):
    state = after(rules, "なし")
    # 葵 has knowledge about music, so 意図:音楽 stays (「葵はどう思う？この店の音楽」).
    assert rules.addressee_allows(I("意図:音楽"), state, "神楽坂葵")
    assert rules.addressee_allows(I("意図:二人の先の話"), state, "神楽坂葵")   # F1 is her own line
    assert rules.addressee_allows(I("移動:控え室"), state, "神楽坂葵")
    assert rules.addressee_allows(I("意図:音楽"), state, None)
    small = make_rules(room=[("R1", "甲", "意図:花")])
    s = small.start().state
    assert not small.addressee_allows(I("意図:花"), s, "乙")                  # 甲's line, 乙 knows nothing of 花
    assert small.addressee_allows(I("意図:天気"), s, "乙")                    # no line: free talk anyway
    assert small.addressee_allows(I("意図:花"), s, "甲")                      # the responder
    garden = small.handle(I("移動:庭"), s).state
    assert small.addressee_allows(I("意図:花"), garden, "甲")                 # 甲 is not there: ignored
