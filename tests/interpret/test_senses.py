"""Words in their sense: negated verbs, the shared head of listed phrases,
a listed word inside another word, whose thing a word names, and a topic
named only inside a clause about another topic's noun."""
from __future__ import annotations

import pytest

from chalicelib.interpret.ja import available
from chalicelib.interpret.negated import negated_verb, negation_spans
from chalicelib.interpret.owners import place_owned_words, said_of_person
from chalicelib.interpret.related import IntentMeaning
from chalicelib.interpret.text import TextForms, WordMatcher, nfkc

pytestmark = pytest.mark.skipif(not available(), reason="SudachiPy or its dictionary is not installed")


def _input(interpreter, states, text, to=None):
    return str(interpreter.interpret_turn(text, states["none"], to).input)


# ---- a listed verb negation matches every negation of that verb

@pytest.mark.parametrize("word, verb", [("変えな", "変える"), ("変えず", "変える"), ("変わらな", "変わる"),
                                        ("いじらな", "弄る")])
def test_a_listed_negation_names_its_verb(word, verb):
    assert negated_verb(word) == verb


@pytest.mark.parametrize("word", ["今のまま", "食べ", "流す", "な"])
def test_other_words_are_no_negation(word):
    assert negated_verb(word) is None


@pytest.mark.parametrize("text", ["変わりませんように", "何ひとつ変わってないね", "変わらずにいて", "変わってほしくないな"])
def test_any_negated_form_of_the_verb_matches(text):
    assert negation_spans(nfkc(text), "変わる")
    assert WordMatcher().allows(TextForms.of(text), ["変わらな"])


@pytest.mark.parametrize("text", ["変えなきゃ", "変えなくちゃ", "変えなければ", "変えなくてはいけない", "変えないと", "変えてみた"])
def test_an_obligation_or_an_affirmative_is_no_negation(text):
    assert negation_spans(nfkc(text), "変える") == []


def test_a_negated_form_no_string_lists_is_the_topic(interpreter, states):
    assert _input(interpreter, states, "何ひとつ変わってないのがいい") == "意図:今のままでいい"
    assert _input(interpreter, states, "変わりませんように") == "意図:今のままでいい"


# ---- the word that ends several of an intent's phrases

def test_the_shared_head_of_listed_phrases_is_a_weaker_listed_word(rules, interpreter, states):
    assert IntentMeaning.phrase_heads(rules.scenario) == {"侭": "意図:今のままでいい"}
    assert _input(interpreter, states, "あのままの店がいい") == "意図:今のままでいい"


# ---- a listed word inside a longer word

@pytest.mark.parametrize("text", ["角を曲がったところにコンビニある？", "赤字続きで大変だね", "味方になってくれる？"])
def test_a_one_character_word_inside_another_word_is_not_the_topic(interpreter, states, text):
    assert _input(interpreter, states, text) == "なし"


def test_a_longer_word_near_the_listed_one_in_meaning_keeps_its_sense(interpreter, states):
    assert _input(interpreter, states, "日本酒ある？") == "意図:メニュー"
    assert _input(interpreter, states, "真っ赤だね、あれ") == "意図:赤いドア"


# ---- whose thing: the place's or a person's

def test_words_the_intent_ties_to_a_place(rules):
    owned = place_owned_words(rules.scenario)
    assert "名前" in owned["意図:店名と看板"]
    assert "意図:音楽" not in owned


@pytest.mark.parametrize("text, said", [("お名前は？", True), ("あなたの名前", True), ("ママの名前", True),
                                        ("ここの名前", False), ("店の名前", False), ("名前", False)])
def test_said_of_a_person(interpreter, text, said):
    n = nfkc(text)
    assert said_of_person(n, n.index("名前"), interpreter.names) is said


def test_a_name_asked_of_a_person_is_not_the_shops(interpreter, states):
    assert _input(interpreter, states, "お名前は？", "神楽坂葵") == "なし"
    assert _input(interpreter, states, "あなたの名前、素敵だね") == "なし"
    assert _input(interpreter, states, "ここの名前の由来は？") == "意図:店名と看板"


def test_a_word_the_intent_does_not_tie_to_a_place_keeps_its_topic_when_said_of_a_person(interpreter, states):
    assert _input(interpreter, states, "ママの料理が楽しみ") == "意図:メニュー"


# ---- a topic named only in a clause about another topic's noun

def test_a_topic_in_a_modifying_clause_gives_way_to_the_noun_it_modifies(interpreter, states):
    assert _input(interpreter, states, "つまみが欲しくなる歌だね") == "意図:音楽"


def test_a_modifying_clause_alone_keeps_its_topic(interpreter, states):
    assert _input(interpreter, states, "おでんが美味しい季節だね") == "意図:メニュー"
