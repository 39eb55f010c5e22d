"""Small scenarios built to use every feature of the format: each effect kind, each condition kind (with
alternatives and groups), each kind of line (scripted, replies, arrival, parting, reactions, knowledge, menu,
ending), and a generator of random ones.  The tests play them through the director (tests/functional on
moto, tests/scenario through `butai lint`'s walk)."""
from __future__ import annotations

import random
from typing import Any


def every_feature() -> dict[str, Any]:
    """Two places (部屋 ⇄ 庭), two characters (甲 in 部屋, 乙 in both), a menu, a question whose yes sets a
    flag, knowledge that stops holding, and two endings at 部屋 chosen by a flag."""
    return {
        "title": "全部の機能",
        "start": {"place": "部屋"},
        "characters": [
            {"id": "甲", "name": "甲", "aliases": ["甲さん"], "expressions": ["neutral", "smile", "troubled"],
             "fallbacks": [{"id": "甲-1", "text": "ふうん。", "expression": "neutral"}],
             "reactions": [{"act": "挨拶", "lines": [{"text": "やあ、こんばんは。", "expression": "smile"},
                                                    {"text": "また会ったね。"}]},
                           {"act": "感謝", "lines": [{"text": "どういたしまして。", "expression": "smile"}]}],
             "knowledge": [
                 {"info": "天気は雨", "condition": "意図:天気", "words": ["天気", "雨"], "until": "フラグ:晴れた",
                  "lines": [{"text": "今日は雨だね。", "expression": "troubled"}], "repeatable": True},
                 {"info": "もう晴れた", "condition": "意図:天気 + フラグ:晴れた", "words": ["天気", "晴れ"],
                  "lines": [{"text": "すっかり晴れたね。", "expression": "smile"}], "repeatable": True},
                 {"info": "花は赤と白がある", "condition": "意図:花 | なし", "words": ["花"],
                  "lines": [{"text": "花なら庭にあるよ。"}]},
                 {"info": "赤い花にする", "condition": "意図:花", "choice": "飾る花", "words": ["赤", "薔薇"],
                  "lines": [{"text": "赤い薔薇ね、いいね。", "expression": "smile"}]},
                 {"info": "白い花にする", "condition": "意図:花", "choice": "飾る花", "words": ["白", "百合"],
                  "lines": [{"text": "白い百合か、上品だ。"}]}],
             "menu": {"items": [
                 {"id": "お茶", "words": ["茶"], "kind": "drink", "price": 100, "flag": "一服",
                  "lines": [{"text": "はい、お茶。", "expression": "smile"}]},
                 {"id": "番茶", "kind": "drink", "price": 80, "lines": [{"text": "番茶だね。"}]},
                 {"id": "肩もみ", "kind": "service", "price": 500, "lines": [{"text": "肩もみ、いくよ。"}]},
                 {"id": "手ぬぐい", "kind": "goods", "price": 300, "lines": [{"text": "手ぬぐい一本。"}]}],
                 "bill": [{"text": "{total}円だよ。"}], "missing": [{"text": "それは置いてないな。"}],
                 "paid": [{"text": "まいど。"}]}},
            {"id": "乙", "name": "乙", "expressions": ["neutral", "angry", "smile"],
             "fallbacks": [{"id": "乙-1", "text": "へえ。"}],
             "reactions": [{"act": "挨拶", "lines": [{"text": "どうも。"}]}]},
        ],
        "places": [
            {"id": "部屋", "aliases": ["居間"], "people": ["甲", "乙"], "responder": "甲", "exits": ["庭"],
             "enter_phrases": ["家に入る"], "leave_phrases": ["家を出る"],
             "endings": [
                 {"id": "約束の夜", "condition": "フラグ:約束 | フラグ:一服 + 済:R1",
                  "lines": [{"speaker": "甲", "text": "約束、忘れないでね。", "expression": "smile"},
                            {"speaker": "乙", "text": "お茶、おいしかったでしょ。", "condition": "フラグ:一服"}],
                  "title": "約束の夜", "text": "約束をして帰った。"}],
             "ending": {"lines": [{"speaker": "甲", "text": "またおいで。"}], "title": "ふつうの夜",
                        "text": "何事もなく帰った。"}},
            {"id": "庭", "people": ["乙"], "exits": ["部屋"], "enter_phrases": ["庭に出る"],
             "leave_phrases": ["縁側に上がる"],
             "arrival": {"lines": [{"speaker": "乙", "text": "また庭に来たの？", "expression": "smile"}]}},
        ],
        "intents": [
            {"id": "天気", "description": "天気について", "examples": ["今日の天気はどう？"], "words": ["天気", "雨", "晴れ"]},
            {"id": "花", "description": "花について", "examples": ["花を飾ろう"], "words": ["花", "薔薇", "百合"]},
            {"id": "約束", "description": "また会う約束", "examples": ["また来る約束をしよう"], "words": ["約束"]},
        ],
        "scenes": [
            {"place": "部屋", "lines": [
                {"id": "S1", "speaker": "甲", "condition": "開始", "effects": ["表情:甲:smile", "フラグ:来た"],
                 "text": "いらっしゃい。"},
                {"id": "S2", "speaker": "乙", "condition": "直後:S1", "text": "どうぞ、座って。"},
                {"id": "R1", "speaker": "甲", "condition": "意図:天気 + フラグ:来た", "effects": ["フラグ:晴れた"],
                 "text": "そういえば、雨がやんだよ。"},
                {"id": "R2", "speaker": "甲", "condition": "(意図:花 | 意図:天気) + 済:R1 + 未:R2",
                 "effects": ["表情:乙:angry"], "text": "乙の花壇、見た？"},
                {"id": "R3", "speaker": "乙", "condition": "直後:R2", "text": "見なくていいから。"},
                {"id": "Q1", "speaker": "甲", "condition": "意図:約束 + 未:Q1", "text": "また来週も来てくれる？",
                 "replies": {"yes": [{"text": "よかった、待ってるね。", "expression": "smile",
                                      "effects": ["フラグ:約束", "表情:乙:smile"]}],
                             "no": [{"text": "そっか、残念。", "expression": "troubled", "effects": ["フラグ:断った"]}],
                             "other": [{"text": "考えておいてね。"}]}},
                {"id": "P1", "speaker": "乙", "condition": "入力 + フラグ:約束 + 未:P1", "text": "来週は鍋にしよう。"},
                {"id": "P2", "speaker": "乙", "condition": "入力 + フラグ:断った + 未:P2", "text": "忙しいんだね。"},
                {"id": "N1", "speaker": "甲", "condition": "なし + 済:S1 + 未:N1 + 未:R1", "text": "外は雨だよ。"},
                {"id": "M1", "speaker": "甲", "condition": "移動:庭 + 未:M1", "text": "庭は足元に気をつけて。"},
                {"id": "L1", "speaker": "甲", "condition": "離脱 + 未:L1", "text": "もう帰るの？"},
            ]},
            {"place": "庭", "lines": [
                {"id": "G1", "speaker": "乙", "condition": "到着 + 未:G1", "text": "ここが花壇。",
                 "effects": ["表情:乙:smile"]},
                {"id": "G2", "speaker": "乙", "condition": "意図:花 + 済:G1 | 意図:天気 + フラグ:晴れた + 未:G2",
                 "text": "晴れると花がきれいなの。"},
                {"id": "G3", "speaker": "乙", "condition": "移動:部屋 + 未:G3", "text": "戻ろうか。"},
            ]},
        ],
    }


# ---------------------------------------------------------------- random scenarios

_STATE_TERMS = ("済:{line}", "未:{line}", "フラグ:{flag}")


def random_scenario(seed: int) -> dict[str, Any]:
    """A random scenario that loads: 2–3 places in a ring, 2–3 characters, 3 intents, lines with random
    conditions (inputs, 入力, 到着, chains, story terms, alternatives, groups) and effects (faces, flags),
    replies with effects, knowledge with until, a menu, endings with conditions."""
    rng = random.Random(seed)
    places = [f"場{i}" for i in range(rng.randint(2, 3))]
    people = [f"人{i}" for i in range(rng.randint(2, 3))]
    intents = ["話題甲", "話題乙", "話題丙"]
    flags = ["旗A", "旗B"]
    faces = ["neutral", "smile", "angry"]
    lines_by_place: dict[str, list[dict[str, Any]]] = {p: [] for p in places}
    all_ids: list[str] = []
    for p_index, place in enumerate(places):
        for n in range(rng.randint(4, 8)):
            all_ids.append(f"{place}-{n}")
    present = {place: [people[(i + k) % len(people)] for k in range(1 + (i % 2))] for i, place in enumerate(places)}

    def story_term() -> str:
        return rng.choice(_STATE_TERMS).format(line=rng.choice(all_ids), flag=rng.choice(flags))

    def trigger(place: str, previous: str | None) -> str:
        exits = [p for p in places if p != place]
        kinds = ["intent", "intent", "input", "none", "move", "leave", "arrive"] + (["after"] if previous else [])
        kind = rng.choice(kinds)
        if kind == "intent":
            return f"意図:{rng.choice(intents)}"
        if kind == "input":
            return "入力"
        if kind == "none":
            return "なし"
        if kind == "move":
            return f"移動:{rng.choice(exits)}"
        if kind == "leave":
            return "離脱"
        if kind == "arrive":
            return "到着"
        return f"直後:{previous}"

    for place in places:
        previous = None
        count = sum(1 for i in all_ids if i.startswith(place + "-"))
        for n in range(count):
            line_id = f"{place}-{n}"
            speaker = rng.choice(present[place])
            parts = [trigger(place, previous)]
            for _ in range(rng.randint(0, 2)):
                parts.append(story_term())
            condition = " + ".join(parts)
            if rng.random() < 0.3 and not condition.startswith("直後"):
                condition = f"{condition} | {trigger(place, None)} + ({story_term()} | {story_term()})"
            if place == places[0] and n == 0:
                condition = "開始"
            line: dict[str, Any] = {"id": line_id, "speaker": speaker, "condition": condition,
                                    "text": f"{line_id}の台詞" + ("、どう思う？" if rng.random() < 0.3 else "。")}
            effects = []
            if rng.random() < 0.4:
                effects.append(f"表情:{rng.choice(present[place])}:{rng.choice(faces)}")
            if rng.random() < 0.4:
                effects.append(f"フラグ:{rng.choice(flags)}")
            if effects:
                line["effects"] = effects
            if line["text"].endswith("？") and rng.random() < 0.7:
                line["replies"] = {"yes": [{"text": "そうこなくちゃ。", "effects": [f"フラグ:{rng.choice(flags)}"]}],
                                   "no": [{"text": "そっか。", "expression": rng.choice(faces)}]}
            if rng.random() < 0.15:
                line["repeatable"] = True
            lines_by_place[place].append(line)
            previous = line_id
    characters = []
    for person in people:
        characters.append({
            "id": person, "name": person, "expressions": faces,
            "fallbacks": [{"id": f"{person}-拒", "text": "ふむ。"}],
            "reactions": [{"act": "挨拶", "lines": [{"text": "こんばんは。"}, {"text": "やあ。"}]}],
            "knowledge": [{"info": f"{person}の考え", "condition": f"意図:{rng.choice(intents)}",
                           "words": ["考え"], "until": story_term() if rng.random() < 0.5 else "",
                           "lines": [{"text": f"{person}はこう思う。"}]}],
            # (every flag is set by something: the menu's two items set one each)
            **({"menu": {"items": [{"id": "茶", "kind": "drink", "price": 100, "flag": flags[0],
                                    "lines": [{"text": "はい、茶。"}]},
                                   {"id": "団子", "kind": "food", "price": 150, "flag": flags[1],
                                    "lines": [{"text": "団子ね。"}]}],
                         "bill": [{"text": "{total}円。"}]}} if person == people[0] else {}),
        })
    place_models = []
    for i, place in enumerate(places):
        model: dict[str, Any] = {"id": place, "people": present[place],
                                 "exits": [p for p in places if p != place]}
        if i == 0:
            model["endings"] = [{"id": f"終{seed}", "condition": f"フラグ:{rng.choice(flags)}",
                                 "lines": [{"speaker": present[place][0], "text": "また。",
                                            "condition": story_term()}], "title": "旗の終わり"}]
            model["ending"] = {"lines": [{"speaker": present[place][0], "text": "さよなら。"}], "title": "終わり"}
        if rng.random() < 0.5:
            model["arrival"] = {"lines": [{"speaker": present[place][0], "text": "いらっしゃい。"}]}
        place_models.append(model)
    return {"title": f"乱数{seed}", "start": {"place": places[0]}, "characters": characters, "places": place_models,
            "intents": [{"id": i, "description": i, "examples": [f"{i}の話"], "words": [i]} for i in intents],
            "scenes": [{"place": p, "lines": lines_by_place[p]} for p in places]}
