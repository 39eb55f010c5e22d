"""A recall says its line again (it counts toward the line's times a game), and it comes back only when the
question asks what that line told: a general entry's words are ways in to its subject, not what its line said."""
from __future__ import annotations

import copy
from typing import Any

from chalicelib.conversation.facts import _analysed
from chalicelib.conversation.variety import PER_GAME
from tests.director.playing import play
from tests.director.test_conversation_focus import STALL, L
from tests.director.test_conversation_listening import stall

FILMS = "好きなのは、雨の夜の映画。古い場所が出てくるやつ。"


def films() -> Any:
    data = copy.deepcopy(STALL)
    data["characters"][1]["knowledge"].append(
        {"info": "好きな映画", "condition": "", "words": ["映画館", "好きな映画", "映画好き"], "lines": [L(FILMS)]})
    data["characters"][1]["recall"] = {"lines": [L("さっき言ったじゃん。{said}")]}
    data["characters"][1]["unsure"] = {"lines": [L("うーん、まだ決めてないの。")]}
    return stall(characters=data["characters"])


def test_a_compound_noun_is_its_own_thing():
    assert "映画館" in _analysed("どこの映画館？")[0] and "映画" not in _analysed("どこの映画館？")[0]
    assert "映画" in _analysed("好きな映画は？")[0]


def test_a_recall_needs_the_line_to_have_told_what_is_asked():
    first, where = play(films(), "由美ちゃん、好きな映画は？", "由美ちゃん、どこの映画館で観るの？", to="由美")
    assert first.answer.text == FILMS
    assert FILMS not in where.answer.text        # the line never said where: no 「さっき言ったじゃん」 of it


def test_a_line_recalled_counts_as_said_again():
    turns = play(films(), "由美ちゃん、好きな映画は？", *["由美ちゃん、好きな映画ってなんだっけ？"] * 4, to="由美")
    assert sum(FILMS in t.answer.text for t in turns if t.answer is not None) <= PER_GAME
    recalled = [t for t in turns if t.answer is not None and t.answer.detail.get("recalled")]
    assert all(t.memory.said.get(t.answer.detail["recalled"]) for t in recalled)
