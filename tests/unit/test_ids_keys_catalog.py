import time

import pytest

from chalicelib import ids
from chalicelib.stage import face_images as ex
from chalicelib.stage import keys
from chalicelib.stage.catalog import CharacterCatalog


def test_ids_are_time_ordered_and_unique():
    made = [ids.new_id() for _ in range(5000)]
    assert made == sorted(made) and len(set(made)) == len(made)
    now = int(time.time() * 1000)
    assert abs(ids.id_time_ms(ids.new_id()) - now) < 1000
    # A clock that steps back never makes an id sort before an earlier one.
    assert ids.new_id(now_ms=now - 60_000) > made[-1]


def test_iso_time():
    assert ids.iso_from_ms(1_700_000_000_123) == "2023-11-14T22:13:20.123Z"


def test_keys_have_at_least_128_random_bits_and_distinct_prefixes():
    agent, player = keys.new_key(keys.AGENT_PREFIX), keys.new_key(keys.PLAYER_PREFIX)
    assert agent.startswith("bka_") and player.startswith("bkp_")
    assert len(agent) - 4 >= 32  # 24 bytes -> 32 base64 characters = 192 bits
    assert keys.hash_key(agent) != agent and len(keys.hash_key(agent)) == 64
    assert keys.same_hash(keys.hash_key(agent), keys.hash_key(agent))
    assert not keys.same_hash(keys.hash_key(agent), keys.hash_key(player))
    assert not keys.same_hash(None, keys.hash_key(player))


@pytest.mark.parametrize("header,token", [
    ("Bearer abc", "abc"), ("Bearer bka_A-b_9", "bka_A-b_9"), ("bearer  abc ", None), ("bearer abc", None),
    ("Bearer  abc", None), ("Bearer abc ", None), ("Bearer abc\x0b", None), ("Bearer abc\xa0", None),
    ("Bearer a+c", None), ("Basic abc", None), ("Bearer", None), ("Bearer ", None), (None, None), ("", None)])
def test_bearer_token(header, token):
    assert keys.bearer_token(header) == token


@pytest.mark.parametrize("key,ok", [("neutral", True), ("smile_2", True), ("Smile", False), ("", False),
                                    ("2smile", False), ("a" * 33, False), ("a-b", False)])
def test_expression_key_rules(key, ok):
    assert ex.is_valid_key(key) is ok


def test_catalog_resolves_known_keys_and_falls_back_and_caches():
    loads = []

    def load(character):
        loads.append(character)
        return {"name": "テスト", "expressions": {"neutral": "neutral.png", "smile": "smile.webp"}}

    now = [0.0]
    catalog = CharacterCatalog(load, ttl=10, clock=lambda: now[0])
    smile = catalog.resolve("c1", "smile")
    assert (smile.expression, smile.image_key, smile.fallback_key) == (
        "smile", "characters/c1/smile.webp", "characters/c1/neutral.png")
    other = catalog.resolve("c1", "angry")
    assert (other.expression, other.asked, other.image_key) == ("neutral", "angry", "characters/c1/neutral.png")
    assert loads == ["c1"]
    now[0] = 11
    catalog.resolve("c1", "smile")
    assert loads == ["c1", "c1"]


def test_public_url_encodes_japanese_ids():
    assert ex.public_url("", "characters/赤尾妙子/smile.svg") == \
        "/characters/%E8%B5%A4%E5%B0%BE%E5%A6%99%E5%AD%90/smile.svg"
