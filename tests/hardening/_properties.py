"""The machinery of the property tests (test_properties.py, test_properties_polling.py): strategies that
draw whole requests, an oracle written from docs/stage.md that says which problems a request has, and the
checks made on each answer.  See test_properties.py for what is checked."""
from __future__ import annotations

import json
import os
import re
import time
import unicodedata
import urllib.parse
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from chalice.app import _matches_content_type
from chalice.local import RouteMatcher
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import strategies as st

from tests.conftest import OUTPUT
from tests.hardening._support import StageState, body_text, diff, error_of, header, is_butai_error

EXAMPLES = int(os.environ.get("BUTAI_HARDENING_EXAMPLES", "1000"))
# No shrinking: every request changes the stages, so a failing request is reported as it was drawn (with the
# notes: method, path, headers, body, expected problems, answer) rather than replayed on a different state.
RUN = settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True,
               phases=[Phase.explicit, Phase.generate],
               suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                      HealthCheck.data_too_large, HealthCheck.filter_too_much,
                                      HealthCheck.large_base_example])

BODY_MAX = 16 * 1024
ROLE = {"speak": "agent", "reply": "player", "fetch_replies": "agent", "get_stage": "either", "debug": "agent",
        "openapi": None}
ROUTE_OF = {"/stages/{stage_id}/speak": "speak", "/stages/{stage_id}/reply": "reply",
            "/stages/{stage_id}/fetch_replies": "fetch_replies", "/stages/{stage_id}": "get_stage",
            "/stages/{stage_id}/debug": "debug", "/openapi.json": "openapi"}
PATHS = {route: path for path, route in ROUTE_OF.items()}
METHOD = {"speak": "POST", "reply": "POST", "fetch_replies": "POST", "get_stage": "GET", "debug": "GET",
          "openapi": "GET"}
REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]+")
KEY_CODES = {"missing_key", "wrong_key", "agent_key_required", "player_key_required", "stage_not_found"}
# docs/stage.md: an uploaded voice on the own origin, /audio/<name>.<audio extension>, with an optional query
AUDIO_PATH = re.compile(r"/audio/[A-Za-z0-9._-]+\.(mp3|m4a|aac|ogg|oga|opus|wav|webm)(\?[!$-&(-;=?-\[\]-~]*)?")

# What each test saw, written to test-output/hardening/ for the report.
SEEN: dict[str, Counter] = defaultdict(Counter)
UNROUTED: dict[str, Counter] = defaultdict(Counter)


# ============================================================== strategies (symbolic, resolved in the test)


def hidden(c: str) -> bool:
    """docs/stage.md: controls, invisible format characters, surrogates, private-use characters of the BMP."""
    category = unicodedata.category(c)
    return category in ("Cc", "Cf", "Cs") or (category == "Co" and ord(c) <= 0xFFFF)


def not_space(c: str) -> bool:
    return not hidden(c) and unicodedata.category(c) not in ("Zs", "Zl", "Zp")


def visible(text: str) -> bool:
    """What docs/stage.md calls not blank: something that shows — besides spaces, hidden characters, the
    Hangul fillers (U+115F, U+1160, U+3164, U+FFA0), the Braille blank (U+2800) and combining marks (an
    unassigned code point counts as visible)."""
    return any(not_space(c) and c not in "\u115f\u1160\u2800\u3164\uffa0"
               and not unicodedata.category(c).startswith("M") for c in text)


def id_ok(value) -> bool:
    """`to` / `move` as docs/stage.md writes them: no hidden character, no surrounding space."""
    return (isinstance(value, str) and bool(value) and not any(hidden(c) for c in value)
            and not_space(value[0]) and not_space(value[-1]))

# Characters that break naive code: NUL and other controls, line and paragraph separators, BOM, zero-width
# and bidi marks, combining marks, full-width forms, CJK, emoji with ZWJ, and lone surrogates.
NASTY = ["\x00", "\x01", "\x1b", "\x7f", "\t", "\n", "\r", "\u0085", "\u2028", "\u2029", "\ufeff", "\u200b",
         "\u200d", "\u202e", "\u0301", "\u3000", "Ａ", "＃", "「", "」", "あ", "漢", "ﾅ", "😀", "👩‍👩‍👧", "𠮷",
         "\\", "\"", "'", "<", ">", "&", "%", "/", "..", "{", "}", "$", "e\u0301", "\ud800", "\udfff"]
nasty_text = st.lists(st.one_of(st.sampled_from(NASTY), st.characters()), max_size=30).map("".join)
plain_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=1, max_size=60)
visible_text = plain_text.filter(lambda s: visible(s))
# Long strings by repetition: cheap to draw, any length around the limits.
long_text = st.builds(lambda unit, n: unit * n, st.sampled_from(["a", "あ", "😀", " ", "\x00", "e\u0301", "«»"]),
                      st.sampled_from([63, 64, 65, 127, 128, 129, 999, 1000, 1001, 1999, 2000, 2001, 4000, 9000]))
any_string = st.one_of(nasty_text, plain_text, long_text)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), any_string)
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(any_string, inner, max_size=4)), max_leaves=12)


def field_values(maximum: int, *, pattern: bool = False):
    """Values for a string field: valid ones and every way to break it."""
    good = st.one_of(plain_text.filter(lambda s: len(s) <= maximum and visible(s)),
                     st.from_regex(REQUEST_ID, fullmatch=True).filter(lambda s: len(s) <= maximum))
    if pattern:
        good = st.one_of(st.from_regex(REQUEST_ID, fullmatch=True).filter(lambda s: len(s) <= maximum),
                         st.sampled_from(["r-1", "r-2", "retry.3:x"]))   # a small pool: reuse happens
    return st.one_of(good, good, good, st.just(""), st.just(" "), st.just("abc\n"), long_text, nasty_text,
                     json_scalars, st.lists(json_scalars, max_size=2), st.just({"x": 1}))


speak_bodies = st.fixed_dictionaries(
    {"text": st.one_of(visible_text, visible_text, long_text, nasty_text, json_scalars)},
    optional={"expression": st.one_of(st.sampled_from(["smile", "neutral", "troubled", "angry", "Smile", "",
                                                        "../../etc/passwd", "smile\x00"]), field_values(64)),
              "speaker": st.one_of(st.none(), field_values(64)),
              "request_id": st.one_of(st.none(), field_values(128, pattern=True)),
              "audio": st.one_of(st.none(), st.sampled_from(["/audio/a.mp3", "//evil.example/a.mp3", "",
                                                             "https://evil.example/a.mp3", "javascript:x",
                                                             "/a b.mp3"]), field_values(2048)),
              "expresion": st.just("smile"), "": json_scalars, "extra": json_values})
reply_bodies = st.fixed_dictionaries(
    {"text": st.one_of(visible_text, visible_text, long_text, nasty_text, json_scalars)},
    optional={"to": st.one_of(st.none(), st.sampled_from(["神楽坂葵", "赤尾妙子", "nobody"]), field_values(64)),
              "move": st.one_of(st.none(), st.sampled_from(["控え室", "店内", "屋上", " 控え室", "\t控え室", "控え室\x00", "控え室\u200b"]), field_values(64)),
              "txt": st.just("x"), "extra": json_values})
fetch_bodies = st.fixed_dictionaries(
    {}, optional={"request_id": st.one_of(st.none(), field_values(128, pattern=True)),
                  "requestId": st.just("r-1"), "text": visible_text, "extra": json_values})
FIELDS = {"speak": speak_bodies, "reply": reply_bodies, "fetch_replies": fetch_bodies}


def _encode(value, ascii_only: bool) -> bytes:
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")


def padded(value: dict, size: int) -> bytes:
    """`value` as JSON of exactly `size` bytes (spaces before the closing brace): valid but for its size."""
    raw = json.dumps(value, ensure_ascii=False).encode("utf-8")
    return raw[:-1] + b" " * max(0, size - len(raw)) + b"}"


# Valid JSON objects of 16 KiB ± 3 bytes: only the size can be wrong.
at_the_limit = st.integers(BODY_MAX - 3, BODY_MAX + 3).map(lambda n: ("raw", padded({"text": "境界"}, n)))


def bodies(route: str):
    """(kind, bytes) — what goes on the wire."""
    shaped = FIELDS[route].map(lambda d: ("json", d))      # the route's fields, each valid or broken
    wire = st.one_of(
        shaped, shaped, shaped, shaped,
        json_values.map(lambda v: ("json", v)),
        st.dictionaries(any_string, json_values, max_size=5).map(lambda d: ("json", d)),
        st.sampled_from([b"", b" ", b"\n\t", b"null", b"[]", b"{}", b"[1,2]", b"\"text\"", b"{not json",
                         b"{\"text\": \"x\",}", b"{'text': 'x'}", b"{\"text\": \"x\"} trailing", b"\xff\xfe\x00",
                         b"{\"text\": \"\\ud800\"}", b"{\"text\": \"\\udfff\\ud800\"}", b"{\"\\ud800\": 1}",
                         b"{\"text\": NaN}", b"{\"text\": \"x\", \"text\": 1}", b"\x00" * 10,
                         b"[" * 50 + b"]" * 50, b"[" * 5000, b"{\"text\": " + b"[" * 5000]).map(lambda b: ("raw", b)),
        st.binary(max_size=64).map(lambda b: ("raw", b)),
        nasty_text.map(lambda s: ("raw", s.encode("utf-8", "surrogatepass"))),
        st.integers(BODY_MAX - 40, BODY_MAX + 40).map(lambda n: ("raw", _encode({"text": "x" * n}, True)[:n])),
        st.integers(BODY_MAX - 20, BODY_MAX + 4000).map(lambda n: ("json", {"text": "x", "pad": "y" * n})),
        at_the_limit,
    )
    return st.tuples(wire, st.booleans()).map(
        lambda pair: pair[0] if pair[0][0] == "raw" else ("json", _encode_any(pair[0][1], pair[1])))


def _encode_any(value, prefer_ascii: bool) -> bytes:
    try:
        return _encode(value, prefer_ascii)
    except UnicodeEncodeError:      # lone surrogates: only JSON's \\u escapes can carry them
        return _encode(value, True)


LITERAL_SEGMENTS = ["", "..", ".", "%2F", "%2F..", "..%2F..%2Fopenapi.json", "%2e%2e", "%00", "%20", "~", "*", "%",
                    "%zz", "s_0000000000000000", "null", "undefined", "{stage_id}", "openapi.json", "%E3%81%82",
                    "%ED%A0%80", "%C0%AF", "s_%0Ax", "%3Fx%3D1", "%23frag", "\u3042", "+", "a;b", "'", "\""]
segments = st.one_of(
    st.sampled_from([("self",)] * 12 + [("other",)] * 3 + [("upper",), ("self+", "%00"), ("self+", "%20"),
                                                            ("self+", "x"), ("self+", "%2F"), ("self+", "/..")]
                    + [("lit", s) for s in LITERAL_SEGMENTS]),
    st.tuples(st.just("text"), st.text(min_size=1, max_size=40)),
    # Long ids around DynamoDB's 2048-byte key limit.
    st.tuples(st.just("long"), st.sampled_from(["x", "あ", "%2F", "😀", "."]),
              st.sampled_from([300, 700, 2047, 2048, 2049, 5000])),
)
FORMS = ["exact"] * 14 + ["trailing_slash", "extra", "case", "double_slash", "dot", "prefix", "no_stage",
                          "dotdot", "method"]
# (OPTIONS is left out: chalice's test client cannot build its body-less preflight answer; over sockets the
# local run answers it 200 with no body.)
OTHER_METHODS = ["PUT", "DELETE", "PATCH", "HEAD", "POST", "GET"]
paths = st.tuples(segments, st.sampled_from(FORMS), st.sampled_from(OTHER_METHODS))

AUTH_FORMATS = [  # (template, expected): how the right key is written and whether it counts (only exactly)
    ("Bearer {k}", "key"), ("bearer {k}", "none"), ("BEARER {k}", "none"), ("Bearer   {k}  ", "none"),
    ("  Bearer {k}", "none"), ("Bearer {k}\t", "none"), ("Bearer {k} extra", "none"), ("Basic {k}", "none"),
    ("{k}", "none"), ("Bearer", "none"), ("Bearer ", "none"), ("Token {k}", "none"), ("Bearer\t{k}", "none"),
    ("Bearer {k}{k}", "other"), ("Bearer {k}x", "other"), ("Bearer x{k}", "other"), ("", "none"),
    ("Bearer \"{k}\"", "none"), ("Bearer {k},Bearer {k}", "none"), ("Bearer=\"{k}\"", "none"),
    ("Bearer {k}\x0b", "none"), ("Bearer {k}\x0c", "none"), ("Bearer {k}\x1c", "none"), ("Bearer {k}\x1f", "none"),
    ("Bearer {k}\x85", "none"), ("Bearer {k}\xa0", "none"), ("Bearer  {k}", "none"),
]
auths = st.one_of(
    st.sampled_from([("key", "right")] * 10 + [("key", "other_role"), ("key", "other_agent"),
                                               ("key", "other_player"), ("absent",), ("swapped_prefix",),
                                               ("truncated",), ("upper",)]),
    st.tuples(st.just("format"), st.sampled_from(AUTH_FORMATS)),
    st.tuples(st.just("garbage"), st.text(max_size=60)),             # lone surrogates included
    st.tuples(st.just("garbage_bearer"), st.text(max_size=60)),
    st.tuples(st.just("huge"), st.sampled_from([1000, 8000, 20000])),
)
CONTENT_TYPES = [None] * 3 + ["application/json"] * 8 + [
    "application/json; charset=utf-8", "Application/JSON", " application/json ", "application/json;",
    "application/json;charset=latin-1", "text/plain", "text/json", "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x", "application/jsonx", "application/ld+json", "application", "", "*/*",
    "json", "application/octet-stream", "image/png", "application/json, text/plain"]
content_types = st.one_of(st.sampled_from(CONTENT_TYPES), st.sampled_from(CONTENT_TYPES), st.sampled_from(CONTENT_TYPES),
                          st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30))
HEADER_NAMES = ["Authorization", "authorization", "AUTHORIZATION", "aUtHoRiZaTiOn"]
extra_headers = st.dictionaries(
    st.sampled_from(["X-Forwarded-For", "Origin", "Cookie", "X-Api-Key", "Accept", "Accept-Encoding", "Host",
                     "X-Amz-Date", "Content-Length", "Transfer-Encoding", "X-Http-Method-Override"]),
    st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=30), max_size=3)
INM = ["current", "current", "weak", "list", "stale", "*", "garbage", "unquoted", None, None]
if_none_match = st.one_of(st.sampled_from(INM), st.tuples(st.just("text"), plain_text))
LIMITS = [None, None, None, "1", "5", "50", "0", "51", "-1", "", "abc", " 5", "5 ", "+5", "٥", "5_0", "1e2",
          "0x10", "99999999999999999999999", "1.5", "%00", "５"]
limits = st.one_of(st.sampled_from(LIMITS), st.integers(-100, 200).map(str), st.tuples(st.just("text"), plain_text))
queries = st.one_of(st.none(), st.none(), st.dictionaries(st.sampled_from(["x", "limit", "stage_id", "key", "a b"]),
                                                          plain_text, max_size=2))


# Valid parts: a request made only of these must succeed.
valid_text = st.one_of(visible_text, nasty_text.filter(lambda t: visible(t) and not has_surrogate(t)),
                       st.builds(lambda unit, n: unit * n, st.sampled_from(["a", "あ", "😀", "e\u0301", "\x00"]),
                                 st.sampled_from([1, 999, 1000, 1999, 2000])))
valid_bodies = {
    "speak": st.fixed_dictionaries(
        {"text": valid_text},
        optional={"expression": st.one_of(st.sampled_from(["smile", "neutral", "troubled", "angry", "", "Smile",
                                                            "auto"]),
                                          plain_text.filter(lambda t: len(t) <= 64)),
                  "audio": st.one_of(st.none(), st.sampled_from(["/audio/0123abcd.mp3", "/audio/v.ogg?x=1"])),
                  "speaker": st.one_of(st.none(), plain_text.filter(lambda t: len(t) <= 64)),
                  "request_id": st.one_of(st.none(), st.sampled_from(["r-1", "r-2", "retry.3:x"]),
                                          st.from_regex(REQUEST_ID, fullmatch=True).filter(lambda t: len(t) <= 128))}),
    "reply": st.fixed_dictionaries(
        {"text": valid_text.filter(lambda t: len(t) <= 1000)},
        optional={"to": st.one_of(st.none(), st.sampled_from(["神楽坂葵", "赤尾妙子", "nobody"])),
                  "move": st.one_of(st.none(), st.sampled_from(["控え室", "店内", "屋上"]))}),
    "fetch_replies": st.fixed_dictionaries(
        {}, optional={"request_id": st.one_of(st.none(), st.sampled_from(["f-1", "f-2", "fetch.3:x"]),
                                              st.from_regex(REQUEST_ID, fullmatch=True).filter(lambda t: len(t) <= 128))}),
}
VALID = {
    "path": st.tuples(st.just(("self",)), st.sampled_from(["exact"] * 5 + ["trailing_slash"]), st.just("GET")),
    "auth": st.one_of(st.just(("key", "right")),
                      st.tuples(st.just("format"), st.sampled_from([f for f in AUTH_FORMATS if f[1] == "key"]))),
    "content_type": st.sampled_from([None, "application/json", "application/json; charset=utf-8",
                                     "Application/JSON", ""]),
    "query": st.none(),
    "limit": st.one_of(st.none(), st.integers(1, 50).map(str)),
}


def has_surrogate(value) -> bool:
    if isinstance(value, str):
        return any("\ud800" <= ch <= "\udfff" for ch in value)
    if isinstance(value, dict):
        return any(has_surrogate(k) or has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_surrogate(v) for v in value)
    return False


@st.composite
def requests(draw, route: str):
    """A third of the requests are valid throughout, a third break one part, a third break anything."""
    full = {"path": paths, "auth": auths, "content_type": content_types, "query": queries, "limit": limits,
            "body": bodies(route) if route in FIELDS
            else st.one_of(st.none(), st.none(), st.none(), bodies("speak"))}   # ignored by the GET routes
    valid = dict(VALID)
    if route in FIELDS:
        encoded = st.tuples(valid_bodies[route], st.booleans()).map(
            lambda pair: ("json", _encode_any(pair[0], pair[1])))
        valid["body"] = encoded if route == "fetch_replies" else st.one_of(encoded, encoded, encoded, at_the_limit)
    else:
        valid["body"] = full["body"]
    if route == "fetch_replies":      # the body is optional there
        valid["body"] = st.one_of(st.none(), st.sampled_from([("raw", b""), ("raw", b" \n")]), valid["body"])
        full["body"] = st.one_of(st.none(), full["body"])
    mode = draw(st.sampled_from(["valid", "one", "any"]))
    broken = set(full) if mode == "any" else {draw(st.sampled_from(sorted(full)))} if mode == "one" else set()
    drawn = {part: draw(full[part] if part in broken else valid[part]) for part in full}
    drawn["mode"] = mode
    drawn["role"] = draw(st.sampled_from(["agent", "player"]))
    drawn["header_name"] = draw(st.sampled_from(HEADER_NAMES))
    drawn["extra"] = draw(extra_headers)
    if route == "get_stage":
        drawn["inm"] = draw(if_none_match)
    if route == "fetch_replies":
        drawn["seed"] = draw(st.sampled_from([0, 0, 0, 1, 1, 2]))
    return drawn


# ============================================================== the world and the oracle

@dataclass
class World:
    client: object
    services: object
    state: StageState
    target: object          # CreatedStage the route is aimed at
    other: object           # the other stage (its keys must do nothing here)
    matcher: RouteMatcher
    routes: dict
    scenario: object = None  # the scenario stage of the two (debug answers only there)
    request_ids: dict = field(default_factory=dict)   # speak: (stage, request_id) -> (fingerprint, first answer)
    fetch_ids: dict = field(default_factory=dict)     # fetch_replies: (stage, request_id) -> the ids it claimed
    count: int = 0
    name: str = ""           # the test's name in the summaries
    last: dict | None = None   # the state after the previous request (the next one's "before")

    def snapshot(self) -> dict:
        if self.last is None:
            self.last = self.state(*[s.stage_id for s in self.stages])
        return self.last

    def keep_small(self) -> None:
        """Every so often, drop the stages' history (not their `current` item): see StageState.clear_history."""
        if self.count % 40 == 0:
            for stage in self.stages:
                self.state.clear_history(stage.stage_id)
            self.request_ids.clear()
            self.fetch_ids.clear()
            self.last = None

    @property
    def scenario_id(self) -> str:
        return self.scenario.stage_id

    @property
    def stages(self):
        return (self.target, self.other)

    @property
    def keys(self):
        return {s.agent_key for s in self.stages} | {s.player_key for s in self.stages}


def make_world(moto_app, target, other, scenario) -> World:
    from app import app
    return World(moto_app.client, moto_app.services, moto_app.state, target, other, RouteMatcher(list(app.routes)),
                 app.routes, scenario)


def bearer(value: str | None) -> str | None:
    """The key in an Authorization value, as docs/stage.md defines it: exactly `Bearer <key>`, the key of
    letters, digits, `-` and `_`."""
    # Read as the WAF's PCRE reads the same pattern (`$` also before one final line break, which then stays
    # in the key and makes it a wrong one).
    return value[len("Bearer "):] if re.match(r"^Bearer [A-Za-z0-9_-]+$", value or "") else None


def text_ok(value, maximum: int, *, blank_ok: bool = False, minimum: int = 1) -> bool:
    return (type(value) is str and not has_surrogate(value) and minimum <= len(value) <= maximum
            and (blank_ok or visible(value)))


def field_problems(route: str, obj: dict) -> set[str]:
    """Fields of a speak/reply object that docs/stage.md and models.py's descriptions reject."""
    bad: set[str] = set()
    if route == "speak":
        known = {"text", "expression", "speaker", "request_id", "audio"}
        if "text" not in obj or not text_ok(obj["text"], 2000):
            bad.add("text")
        if obj.get("expression") is not None and not text_ok(obj["expression"], 64, blank_ok=True, minimum=0):
            bad.add("expression")
        # audio: a path on the stage's own origin (no origins are listed here); see stage/audio.py
        if obj.get("audio") is not None and not (text_ok(obj["audio"], 2048) and AUDIO_PATH.fullmatch(obj["audio"])):
            bad.add("audio")
        if obj.get("speaker") is not None and not text_ok(obj["speaker"], 64, blank_ok=True):
            bad.add("speaker")
    elif route == "reply":
        known = {"text", "to", "move"}
        if "text" not in obj or not text_ok(obj["text"], 1000):
            bad.add("text")
        for name in ("to", "move"):
            if obj.get(name) is not None and not (text_ok(obj[name], 64, blank_ok=True) and id_ok(obj[name])):
                bad.add(name)
    else:
        known = {"request_id"}
    if route in ("speak", "fetch_replies"):
        rid = obj.get("request_id")
        if rid is not None and not (text_ok(rid, 128, blank_ok=True) and REQUEST_ID.fullmatch(rid)):
            bad.add("request_id")
    for key in obj:
        if has_surrogate(key):
            bad.add("body")          # a key JSON cannot give as text: pydantic cannot name it
        elif key not in known:
            bad.add(key or "body")
    return bad


def fingerprint(obj: dict) -> str:
    parts = [obj["text"], obj.get("expression") or "auto", obj.get("speaker")]
    if obj.get("audio") is not None:
        parts.append(obj["audio"])
    return json.dumps(parts, ensure_ascii=False)


_NOT_JSON = object()


@dataclass
class Expect:
    route: str | None                      # None: no route matches (Chalice answers)
    stage: object = None                   # the CreatedStage the path names, if any
    problems: set = field(default_factory=set)   # {(code, field)}
    lenient: bool = False                  # an ambiguous input: success is acceptable too
    body: object = None                    # the parsed body object, for the success checks
    not_modified: bool | None = None       # get_stage: whether 304 is the answer (None: either)
    chalice: bool = False                  # Chalice itself refuses it before butai's code runs
    replay: tuple | None = None            # speak: (first response) when the same request_id comes again


def expect(world: World, method: str, path: str, headers: dict, raw: bytes | None) -> Expect:
    try:
        match = world.matcher.match_route(path)
    except ValueError:
        return Expect(None)
    if method not in world.routes[match.route]:
        return Expect(None)
    route = ROUTE_OF[match.route]
    out = Expect(route)
    lowered = {k.lower(): v for k, v in headers.items()}
    # Routes without content_types=["*/*"] (the GET ones) get Chalice's own content-type check first:
    # test_get_with_a_content_type_gets_butais_answer.
    entry = world.routes[match.route][method]
    if entry.content_types and not _matches_content_type(lowered.get("content-type", "application/json"),
                                                         entry.content_types):
        out.chalice = True
        return out
    if route == "openapi":
        return out
    stage_id = match.captured["stage_id"]
    stage = next((s for s in world.stages if s.stage_id == stage_id), None)
    out.stage = stage
    token = bearer(lowered.get("authorization"))
    role = ROLE[route]
    if token is None:
        out.problems.add(("missing_key", "Authorization"))
    elif stage is None:
        out.problems.add(("stage_not_found", "stage_id"))
    elif token == stage.agent_key and role == "player":
        out.problems.add(("player_key_required", "Authorization"))
    elif token == stage.player_key and role == "agent":
        out.problems.add(("agent_key_required", "Authorization"))
    elif token not in (stage.agent_key, stage.player_key):
        out.problems.add(("wrong_key", "Authorization"))
    if route == "debug":
        query = match.query_params.get("limit")
        value = query[-1] if query else None
        if value is not None:
            if re.fullmatch(r"[0-9]+", value, re.ASCII):
                if not 1 <= int(value) <= 50:
                    out.problems.add(("invalid_request", "limit"))
            else:
                try:
                    lenient = 1 <= int(value) <= 50       # Python's int(): " 5", "+5", "٥", "5_0"
                except ValueError:
                    lenient = False
                out.problems.add(("invalid_request", "limit"))
                out.lenient = out.lenient or lenient
        if stage is not None and stage.stage_id != world.scenario_id:
            out.problems.add(("not_a_scenario_stage", "stage_id"))
    body = raw or b""
    if route in FIELDS and len(body) > BODY_MAX:
        out.problems.add(("payload_too_large", "body"))
    if route == "fetch_replies" and not body.strip():
        out.body = {}                       # no body: a plain fetch
    elif route in FIELDS:
        content_type = lowered.get("content-type")
        if content_type and content_type.split(";")[0].strip().lower() != "application/json":
            out.problems.add(("unsupported_media_type", "Content-Type"))
        not_object = {("invalid_request", "body"), ("invalid_json", "body")}
        obj = _NOT_JSON
        if body.strip():
            try:
                obj = json.loads(body)
            except (ValueError, UnicodeDecodeError, RecursionError):
                pass
        if not isinstance(obj, dict):
            out.problems |= not_object
        else:
            bad = field_problems(route, obj)
            out.problems |= {("invalid_request", name) for name in bad}
            out.body = obj
            if route == "speak" and not bad and obj.get("request_id") is not None and stage is not None:
                seen = world.request_ids.get((stage.stage_id, obj["request_id"]))
                if seen is not None and seen[0] != fingerprint(obj):
                    out.problems.add(("request_id_reused", "request_id"))
                elif seen is not None:
                    out.replay = seen[1]
    if route == "get_stage":
        out.not_modified = False
    return out


# ============================================================== building and sending one request

def build(world: World, route: str, drawn: dict) -> tuple[str, str, dict, bytes | None, bool]:
    target, other = world.target, world.other
    (seg, form, other_method) = drawn["path"]
    kind = seg[0]
    if kind == "self":
        segment = target.stage_id
    elif kind == "other":
        segment = other.stage_id
    elif kind == "upper":
        segment = target.stage_id.upper()
    elif kind == "self+":
        segment = target.stage_id + seg[1]
    elif kind == "lit":
        segment = urllib.parse.quote(seg[1], safe="%.~*+;'\"{}") if not seg[1].isascii() else seg[1]
    elif kind == "text":
        segment = urllib.parse.quote(seg[1], safe="", errors="surrogatepass")
    else:
        segment = urllib.parse.quote(seg[1] * seg[2], safe="%")[:seg[2]]
    template = PATHS[route]
    method = METHOD[route]
    path = template.replace("{stage_id}", segment)
    if form == "trailing_slash":
        path += "/"
    elif form == "extra":
        path += "/nope"
    elif form == "case":
        path = path.replace("/stages/", "/STAGES/").replace("openapi", "OpenAPI")
    elif form == "double_slash":
        path = "/" + path
    elif form == "dot":
        path = path.replace("/stages/", "/stages/./").replace("/openapi", "/./openapi")
    elif form == "prefix":
        path = "/api" + path
    elif form == "no_stage":
        path = path.replace("/stages/" + segment, "/stages") if route != "openapi" else "/openapi"
    elif form == "dotdot":
        path = path + "/.." if route != "get_stage" else path + "/../" + segment
    elif form == "method":
        method = other_method
    query = dict(drawn["query"] or {})
    if route == "debug" and drawn["limit"] is not None:
        limit = drawn["limit"]
        query["limit"] = limit[1] if isinstance(limit, tuple) else limit
    if query:
        path += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote, errors="surrogatepass")

    # Authorization, resolved against the stages
    role = ROLE[route] if ROLE[route] in ("agent", "player") else drawn["role"]
    right = target.agent_key if role == "agent" else target.player_key
    wrong_role = target.player_key if role == "agent" else target.agent_key
    auth = drawn["auth"]
    value: str | None
    if auth[0] == "key":
        value = "Bearer " + {"right": right, "other_role": wrong_role, "other_agent": other.agent_key,
                             "other_player": other.player_key}[auth[1]]
    elif auth[0] == "absent":
        value = None
    elif auth[0] == "swapped_prefix":
        value = "Bearer " + ("bkp_" if right.startswith("bka_") else "bka_") + right[4:]
    elif auth[0] == "truncated":
        value = "Bearer " + right[:-1]
    elif auth[0] == "upper":
        value = "Bearer " + right.upper()
    elif auth[0] == "format":
        value = auth[1][0].replace("{k}", right)
    elif auth[0] == "garbage":
        value = auth[1]
    elif auth[0] == "garbage_bearer":
        value = "Bearer " + auth[1]
    else:
        value = "Bearer " + "k" * auth[1]
    headers = dict(drawn["extra"])
    headers.pop("Content-Length", None)
    if value is not None:
        headers[drawn["header_name"]] = value
    if drawn["content_type"] is not None:
        headers["Content-Type"] = drawn["content_type"]
    inm = drawn.get("inm")
    if inm is not None:
        version = StageState.version(world.snapshot(), target.stage_id) or "none"
        headers["If-None-Match"] = {
            "current": f'"{version}"', "weak": f'W/"{version}"', "list": f'"x", "{version}" , "y"',
            "stale": '"01ARZ3NDEKTSV4RRFFQ69G5FAV"', "*": "*", "garbage": "\x00\"", "unquoted": version,
        }.get(inm, inm[1] if isinstance(inm, tuple) else None)
    body = drawn["body"]
    raw = body[1] if body is not None else None
    routed = True
    try:
        world.matcher.match_route(path)
    except ValueError:
        routed = False
    if not routed:
        # Chalice's router copies a present Authorization header into its answer with .encode("ascii"):
        # non-ASCII there raises inside chalice (test_unknown_path_with_non_ascii_authorization).
        headers = {k: (v.encode("ascii", "replace").decode() if k.lower() == "authorization" else v)
                   for k, v in headers.items()}
    return method, path, headers, raw, routed


def seed_replies(world: World, n: int) -> None:
    from chalicelib.stage.models import ReplyRequest
    for i in range(n):
        world.services.stage.reply(world.target.stage_id, world.target.player_key, ReplyRequest(text=f"seed {i}"))


def run_one(world: World, route: str, drawn: dict) -> None:
    world.count += 1
    world.keep_small()
    if drawn.get("seed"):
        seed_replies(world, drawn["seed"])
        world.last = None
    method, path, headers, raw, _ = build(world, route, drawn)
    exp = expect(world, method, path, headers, raw)
    ids = [s.stage_id for s in world.stages]
    before = world.snapshot()
    if route == "get_stage" and exp.route == "get_stage" and "If-None-Match" in headers:
        version = StageState.version(before, exp.stage.stage_id) if exp.stage else None
        tags = {p.strip().removeprefix("W/") for p in headers["If-None-Match"].split(",")}
        exp.not_modified = None if "*" in tags else (version is not None and f'"{version}"' in tags)
    note(f"{method} {path[:200]!r} headers={ {k: v[:80] for k, v in headers.items()} } body={(raw or b'')[:200]!r}")
    note(f"expected problems: {sorted(exp.problems)} lenient={exp.lenient}")
    sent_ms = int(time.time() * 1000)
    response = world.client.http.request(method, path, headers=headers, body=raw if raw is not None else b"")
    answered_ms = int(time.time() * 1000)
    after = world.last = world.state(*ids)
    status = response.status_code
    note(f"answer: {status} {body_text(response)[:300]!r}")
    SEEN[world.name][f"{status}{'' if exp.route and not exp.chalice else ' (chalice)'}"] += 1
    assert status < 500, f"{status} {body_text(response)[:300]}"

    if exp.route is None or exp.chalice:   # Chalice answered, not butai: record what, check nothing changed
        kind = "butai JSON" if is_butai_error(response) else "not butai's shape"
        what = "content type" if exp.chalice else "router"
        UNROUTED[world.name][f"{what}: {method} -> {status} {kind}: {body_text(response)[:90]}"] += 1
        # OPTIONS is answered by chalice's CORS preflight (200, no body); everything else is a 4xx
        assert 400 <= status < 500 or (method == "OPTIONS" and status == 200 and not response.body), status
        assert after == before, diff(before, after)
        return

    text = body_text(response)
    for key in world.keys:
        assert key not in text, "an answer echoes a stage key"

    if exp.problems and not (exp.lenient and status < 400):
        err = error_of(response)
        reported = (err["code"], err.get("field"))
        assert reported in exp.problems, f"reported {reported}, expected one of {sorted(exp.problems)}"
        # The key comes first: a request without the right key learns nothing about its body.
        key_problems = {p for p in exp.problems if p[0] in KEY_CODES}
        assert not key_problems or reported in key_problems, f"reported {reported} before {sorted(key_problems)}"
        assert after == before, diff(before, after)
        return

    # a valid request: the route's success, and only what it should change
    stage_id = exp.stage.stage_id if exp.stage else None
    others = [i for i in ids if i != stage_id]
    assert {k: v for k, v in after.items() if k[1] in others} == {k: v for k, v in before.items() if k[1] in others}
    body = response.json_body if status != 304 else None
    if exp.route == "speak":
        assert status == 200, text[:300]
        assert set(body) == {"id", "expression", "asked_expression", "expression_source", "expression_scores",
                             "audio", "audio_status", "image_url", "version", "created_at"}
        # no expression (or auto): the stage judged one among the character's keys
        assert body["asked_expression"] == (exp.body.get("expression") or "auto")
        assert body["expression_source"] == ("auto" if body["asked_expression"] == "auto" else "agent")
        if exp.replay is not None:
            assert body == exp.replay and after == before
        else:
            assert StageState.events(after, stage_id) == StageState.events(before, stage_id) + 1
            assert StageState.version(after, stage_id) == body["version"]
            if exp.body.get("request_id") is not None:
                world.request_ids[(stage_id, exp.body["request_id"])] = (fingerprint(exp.body), body)
    elif exp.route == "reply":
        assert status == 202, text[:300]
        assert StageState.events(after, stage_id) >= StageState.events(before, stage_id) + 1
        if exp.stage is world.scenario:
            assert isinstance(body["view"], dict) and body["id"] not in StageState.unread(after, stage_id)
        else:
            assert body["view"] is None
            assert StageState.unread(after, stage_id) == StageState.unread(before, stage_id) | {body["id"]}
    elif exp.route == "fetch_replies":
        assert status == 200, text[:300]
        got = [r["id"] for r in body]
        assert all(set(r) == {"id", "text", "created_at", "deliveries", "lease_expires_at"} for r in body)
        assert len(got) == len(set(got))
        rid = exp.body.get("request_id")
        held = set() if rid is None else StageState.held_by(before, stage_id, f"req:{rid}")
        if held:
            # a retry of an earlier fetch: the replies it still holds again (lease renewed), nothing new
            assert set(got) == held, (got, held)
            assert StageState.without_leases(after) == StageState.without_leases(before), diff(before, after)
        else:
            # every reply no lease held; one whose lease ended while the request ran may go either way
            certain = StageState.claimable(before, stage_id, sent_ms)
            assert certain <= set(got) <= StageState.claimable(before, stage_id, answered_ms), (got, certain)
            assert StageState.claimable(after, stage_id, sent_ms) == set()
            if rid is not None and got:
                world.fetch_ids[(stage_id, rid)] = set(got)
    elif exp.route == "get_stage":
        assert after == before, diff(before, after)
        version = StageState.version(before, stage_id)
        if status == 304:
            assert exp.not_modified in (True, None) and header(response, "ETag") == f'"{version}"'
        else:
            assert status == 200 and exp.not_modified in (False, None), (status, exp.not_modified)
            assert body["version"] == version and header(response, "ETag") == f'"{version}"'
    elif exp.route == "debug":
        assert after == before, diff(before, after)
        assert status == 200 and isinstance(body["turns"], list), text[:300]
    elif exp.route == "openapi":
        assert after == before, diff(before, after)
        assert status == 200 and body["openapi"].startswith("3.")


def write_summary(world: World) -> None:
    folder = OUTPUT / "hardening"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"properties-{world.name}.json").write_text(json.dumps({
        "test": world.name, "requests": world.count, "answers": dict(SEEN[world.name]),
        "chalice_answers": dict(UNROUTED[world.name]),
    }, ensure_ascii=False, indent=2), encoding="utf-8")


def property_test(route: str, target_fixture: str, examples: int = EXAMPLES, name: str | None = None):
    """One test: `examples` requests aimed at `route` on the stage `target_fixture`, the other stage of the
    two standing by (its keys and its id are drawn too)."""
    other_fixture = "scenario_stage" if target_fixture == "agent_stage" else "agent_stage"

    @settings(RUN, max_examples=examples)
    @given(drawn=requests(route))
    def inner(world, drawn):
        run_one(world, route, drawn)

    def test(moto_app, request):
        target = request.getfixturevalue(target_fixture)
        other = request.getfixturevalue(other_fixture)
        scenario = target if target_fixture == "scenario_stage" else other
        world = make_world(moto_app, target, other, scenario)
        world.name = name or route
        inner(world)
        write_summary(world)
        assert world.count >= examples
    return test
