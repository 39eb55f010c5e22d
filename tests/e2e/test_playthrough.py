"""A 46-turn free-Japanese visit to the reference scenario, played over HTTP on
the local runtime with the embedded default (lexical classifier, no generation
model), as a player would: greetings, topics, small talk, rudeness, orders,
hedged moves, the back room and back, goodbye, 「もう一度」.

Each turn states what answer would fit it (the input it should be read as,
and which kind of authored line should answer).  The test reports the share
of turns answered by a generic fallback, unsafe moves (a move or an ending
the turn did not ask for) and the turns whose answer fits, and writes them to
test-output/playthrough.json (the figures in docs/performance.md)."""
import json

from tests.conftest import ROOT, call
from tests.scenario_stages import new_scenario_stage

# (text, what fits): "input" the expected input (str or tuple of acceptable ones), "answer" the kind of
# authored answer ("knowledge", "reaction:<act>", "fallback"), "lines" scripted line ids that must fire,
# "place" where the player must be afterwards, "ending"/"restart" for the end of the visit.
TURNS = [
    ("こんばんは", {"input": "なし", "answer": "reaction:挨拶", "lines": ["A03", "A04"]}),
    ("流す曲を変えてみたら？", {"input": "意図:音楽", "lines": ["O1", "O2"]}),
    ("葵ちゃんの映画音楽もいいと思うよ", {"input": "意図:音楽", "answer": "knowledge"}),
    ("ママ、きれいだね", {"answer": "reaction:称賛"}),
    ("あの赤いドア、目立つね", {"input": "意図:赤いドア", "answer": "knowledge"}),
    ("あのドアって何で赤いの？", {"input": "意図:赤いドア", "answer": "knowledge"}),
    ("看板のネオン、切れてたよ", {"input": "意図:店名と看板", "answer": "knowledge", "says": "ネオン"}),
    ("店の名前の由来は？", {"input": "意図:店名と看板", "answer": "knowledge", "says": "先代"}),
    ("ありがとう", {"answer": "reaction:感謝"}),
    ("おすすめの料理は何？", {"input": "意図:メニュー", "lines": ["M1", "M2"]}),
    ("ナポリタン、おいしそう", {"input": "意図:メニュー", "answer": "knowledge"}),
    ("ビールください", {"answer": "order", "says": "ビール"}),
    ("ママはいつからこの店やってるの？", {"answer": ("reaction:本人", "knowledge"), "says": "三十年"}),
    ("SNSに写真を載せてみたら？", {"input": "意図:宣伝の写真", "answer": "knowledge"}),
    # to the one who answered last (葵, on the photos), who takes it badly
    ("ばーか", {"answer": "reaction:暴言", "speaker": "神楽坂葵", "face": ("神楽坂葵", "angry")}),
    ("ごめん、言いすぎた", {"answer": "reaction:謝罪"}),
    ("いい店ってどんな店だと思う？", {"input": "意図:いい店とは", "answer": "knowledge"}),
    ("今のままがいちばんだよ", {"input": "意図:今のままでいい", "answer": "knowledge"}),
    ("葵ちゃん、趣味は何？", {"answer": ("reaction:本人", "knowledge"), "speaker": "神楽坂葵"}),
    ("宇宙人っていると思う？", {"answer": "reaction:質問"}),
    ("そうだね", {"answer": "reaction:同意"}),
    ("控え室に行こうかと思ったけど、やっぱやめとく", {"input": "なし", "place": "店内"}),
    ("前に借りたお金のこと、ちゃんと話したい", {"input": "意図:二人の先の話", "lines": ["F1"]}),
    ("うん、行こ", {"input": "移動:控え室", "lines": ["B01"], "place": "控え室"}),
    ("写真、見せてよ", {"input": "意図:宣伝の写真", "lines": ["B03", "B04"]}),
    ("これ、すごくいいね", {"answer": "reaction:称賛", "speaker": "神楽坂葵"}),
    ("前に借りたお金、いつ返せばいい？", {"input": "意図:二人の先の話", "lines": ["B02"]}),
    ("ありがとう、葵", {"answer": "reaction:感謝", "speaker": "神楽坂葵"}),
    # what she said of her days off when asked about her hobby: said again, not made up anew
    ("休みの日は何してるの？", {"answer": ("reaction:本人", "recall"), "speaker": "神楽坂葵", "says": "休みの日"}),
    ("映画のサントラを流したいんだよね？", {"input": "意図:音楽", "answer": "knowledge", "speaker": "神楽坂葵"}),
    ("赤いドアってやっぱり怖いかな", {"input": "意図:赤いドア", "answer": ("knowledge", "recall"), "speaker": "神楽坂葵",
                                 "says": "怖い"}),
    ("店に戻ろうかと思ったけど、まだいる", {"input": "なし", "place": "控え室"}),
    ("ママのところ戻ろ", {"input": "移動:店内", "place": "店内", "arrival": True}),
    ("ただいま", {"answer": "reaction:挨拶"}),
    ("おでんは冬だけにしたら？", {"input": "意図:メニュー", "answer": "knowledge"}),
    ("水割りひとつ", {"answer": "order", "says": "水割り"}),
    ("控え室には行かないよ", {"input": "なし", "place": "店内"}),
    ("今日は楽しかった", {"input": "なし"}),
    ("ママの若い頃の話、聞かせて", {"answer": ("reaction:本人", "knowledge")}),
    ("葵ちゃんかわいいね", {"answer": "reaction:称賛", "speaker": "神楽坂葵"}),
    ("何も変えなくていいと思う", {"input": "意図:今のままでいい", "answer": "knowledge"}),
    ("まあね", {"input": "なし"}),
    ("お会計お願いします", {"answer": ("reaction:注文", "menu"), "says": "円"}),
    ("ごちそうさまでした、また来ます", {"input": "離脱", "ending": True}),
    ("もう一度", {"restart": True}),
    ("こんばんは", {"answer": "reaction:挨拶", "lines": ["A03", "A04"]}),
]
MOVING = ("移動:", "離脱")


def _as_tuple(value):
    return value if isinstance(value, tuple) else (value,)


def judge(expect: dict, turn: dict, view: dict) -> tuple[bool, list[str]]:
    """Whether the answer fits what the turn asked for, and why not."""
    why = []
    talk = turn.get("free_talk") or {}
    if "input" in expect and turn["input"] not in _as_tuple(expect["input"]):
        why.append(f"read as {turn['input']}")
    if "lines" in expect and not set(expect["lines"]) <= set(turn["lines"]):
        why.append(f"lines {turn['lines']}")
    if "answer" in expect:
        kind = talk.get("source")
        label = f"reaction:{talk.get('act')}" if kind == "reaction" else kind
        if label not in _as_tuple(expect["answer"]):
            why.append(f"answered by {label}")
    if "speaker" in expect and talk.get("speaker") != expect["speaker"]:
        why.append(f"spoken by {talk.get('speaker')}")
    if "says" in expect and expect["says"] not in (talk.get("text") or ""):
        why.append(f"said {talk.get('text')!r}")
    if "face" in expect:
        character, face = expect["face"]
        faces = {c["id"]: c["expression"] for c in view["scene"]["characters"]}
        if faces.get(character) != face:
            why.append(f"{character} looks {faces.get(character)}")
    if "place" in expect and view["scene"]["place"] != expect["place"]:
        why.append(f"at {view['scene']['place']}")
    if expect.get("ending") and not view["scene"].get("ending"):
        why.append("no ending card")
    if expect.get("restart") and (view["scene"].get("ending") or not turn.get("restart")):
        why.append("not restarted")
    return not why, why


def test_a_long_free_japanese_visit(local_runtime):
    api = local_runtime.info["api_url"]
    stage = new_scenario_stage(local_runtime, "playthrough")
    rows, fallback_turns, unsafe, fits = [], 0, 0, 0
    for number, (text, expect) in enumerate(TURNS, 1):
        status, _, answer = call(api, "POST", f"/stages/{stage['stage_id']}/reply", stage["player_key"],
                                 {"text": text})
        assert status == 202, answer
        view = answer["view"]
        status, _, debug = call(api, "GET", f"/stages/{stage['stage_id']}/debug?limit=1", stage["agent_key"])
        turn = debug["turns"][-1]
        assert turn["text"] == text
        talk = turn.get("free_talk") or {}
        fallback = talk.get("source") == "fallback"
        fallback_turns += fallback
        asked_to_move = str(expect.get("input", "")).startswith(MOVING) or expect.get("restart")
        moved = turn.get("restart") or turn["input"].startswith(MOVING)
        bad_move = bool(moved and not asked_to_move)
        unsafe += bad_move
        ok, why = judge(expect, turn, view)
        if expect.get("arrival"):
            ok = ok and view["log"][-1]["role"] == "character" and view["log"][-1]["character"] == "赤尾妙子"
        fits += ok
        rows.append({"turn": number, "text": text, "input": turn["input"], "lines": turn["lines"],
                     "answer": None if not talk else {k: talk.get(k) for k in ("source", "act", "speaker", "text")},
                     "place": view["scene"]["place"], "fallback": fallback, "unsafe": bad_move, "fits": ok,
                     "why": why})
    total = len(TURNS)
    figures = {"turns": total, "fallback_turns": fallback_turns, "fallback_share": round(fallback_turns / total, 3),
               "unsafe_moves": unsafe, "fitting_turns": fits, "fitting_share": round(fits / total, 3)}
    out = ROOT / "test-output"
    out.mkdir(exist_ok=True)
    (out / "playthrough.json").write_text(json.dumps({**figures, "rows": rows}, ensure_ascii=False, indent=1),
                                          encoding="utf-8")
    misfits = [(r["turn"], r["text"], r["why"]) for r in rows if not r["fits"]]
    assert total >= 40
    assert unsafe == 0, [r for r in rows if r["unsafe"]]
    assert figures["fallback_share"] <= 0.15, figures
    assert fits >= total - 1, misfits      # deterministic (no model): a second misfit is a regression
