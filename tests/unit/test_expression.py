"""The expression judge, the speak rules around it, and a line's audio."""
import json

import pytest

from butai_tools import cli
from butai_tools.page_policy import content_security_policy
from chalicelib.config import Settings, parse_origins
from chalicelib.context import build_models
from chalicelib.errors import ValidationFailed
from chalicelib.expression import ExpressionChoice, LexiconJudge, build_judge, contradicts
from chalicelib.stage.audio import check_audio_url
from chalicelib.stage.catalog import CharacterCatalog
from chalicelib.stage.models import SpeakRequest
from chalicelib.stage.service import StageService
from tests.conftest import ROOT
from tests.memory_store import MemoryStageStore

HIYORI = ("neutral", "smile", "troubled", "surprised", "embarrassed", "determined")
MAMA = ("neutral", "smile", "troubled", "surprised", "angry")
judge = LexiconJudge()


def face(text, keys=HIYORI):
    return judge.judge(text, ExpressionChoice.of(keys)).expression


@pytest.mark.parametrize("text,expected", [
    ("嬉しい！ありがとう！", "smile"),
    ("えっ、まさか！", "surprised"),
    ("ごめんね、遅くなって。", "troubled"),
    ("恥ずかしいから見ないで……", "embarrassed"),
    ("任せてください、必ずやります！", "determined"),
    ("明日は九時に集合です。", "neutral"),
])
def test_the_basic_feelings(text, expected):
    assert face(text) == expected


def test_negation_turns_or_removes_a_feeling():
    assert face("全然嬉しくない。") == "troubled"             # denied joy
    assert face("心配しないで、大丈夫だから。") == "smile"      # denied worry: reassurance
    assert face("別に怒ってないよ。", MAMA) == "neutral"       # denied anger: nothing
    assert face("ふざけないで！", MAMA) == "angry"             # a negative order is still angry
    assert face("楽しくなかったら言ってね。") == "neutral"     # a hypothetical


def test_questions_are_not_feelings():
    assert face("楽しい？") == "neutral"
    assert face("本当に？") == "surprised"


def test_never_a_smile_on_an_apology():
    for text in ("ごめんね、ありがとう！", "すみません、楽しかったです", "申し訳ない、最高の席はもう埋まってて"):
        judged = judge.judge(text, ExpressionChoice.of(HIYORI))
        assert judged.expression != "smile" and "veto:smile" in judged.cues


def test_only_the_characters_own_keys_and_neutral_when_unsure():
    # hiyori has no angry face: an angry line is not forced onto another feeling.
    assert face("いい加減にして！", HIYORI) == "neutral"
    assert face("いい加減にして！", MAMA) == "angry"
    only_neutral = judge.judge("嬉しい！", ExpressionChoice.of(["neutral"]))
    assert only_neutral.expression == "neutral" and set(only_neutral.scores) == {"neutral"}
    scores = judge.judge("嬉しい！", ExpressionChoice.of(MAMA)).scores
    assert set(scores) == set(MAMA) and sum(scores.values()) == pytest.approx(1.0)
    # A key named after its family (happy for smile) is judged; an unknown one only offered.
    assert face("嬉しい！", ("neutral", "happy", "sleepy")) == "happy"
    assert face("", HIYORI) == "neutral"


def test_contradiction_is_a_turned_around_feeling():
    assert contradicts("smile", "troubled") and contradicts("angry", "smile") and contradicts("sad", "happy")
    assert not contradicts("surprised", "smile") and not contradicts("neutral", "angry")


def judge_from(environ: dict):
    """The judge the services build from settings read from `environ`."""
    return build_models(Settings.from_env(environ)).judge()


def test_configured_like_the_classifier():
    assert judge_from({}).name == "lexicon"
    assert judge_from({"BUTAI_EXPRESSION_JUDGE": "lexicon"}).name == "lexicon"
    model = judge_from({"BUTAI_EXPRESSION_JUDGE": "openai", "BUTAI_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                            "BUTAI_EXPRESSION_TIMEOUT": "0.5"})
    assert model.name == "openai" and model.chooser.timeout == 0.5
    with pytest.raises(ValueError):
        build_judge("nonsense")


def test_eval_expression_meets_its_targets(capsys):
    assert cli.main(["eval-expression", "--json", "--min-accuracy", "0.8", "--max-unsafe", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert len(report["cases"]) >= 120 and set(report["characters"]) == {"hiyori", "赤尾妙子", "神楽坂葵"}
    assert report["splits"]["heldout"]["accuracy"] >= 0.80 and report["splits"]["heldout"]["unsafe"] == 0
    assert report["unsafe"] == 0
    assert cli.main(["bench", "expression", "--rounds", "1", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["judgments"] == len(report["cases"]) and figures["p50_ms"] > 0


def test_the_data_set_keys_are_the_shipped_characters_keys():
    data = json.loads((ROOT / "scenarios/eval/expression.json").read_text(encoding="utf-8"))
    for character, keys in data["characters"].items():
        manifest = json.loads((ROOT / "static/characters" / character / "manifest.json").read_text(encoding="utf-8"))
        assert set(keys) == set(manifest["expressions"])


# ---------------------------------------------------------------- speak

@pytest.fixture
def stage_and_service():
    manifest = json.loads((ROOT / "static/characters/赤尾妙子/manifest.json").read_text(encoding="utf-8"))
    catalog = CharacterCatalog(lambda c: manifest if c == "赤尾妙子" else None)
    store = MemoryStageStore()
    service = StageService(store, catalog, own_origins=("https://stage.example",),
                           audio_origins=("https://voice.example",))
    return service, service.create_stage("unit", "赤尾妙子"), store


def test_speak_without_expression_is_judged_among_the_characters_keys(stage_and_service):
    service, stage, store = stage_and_service
    result = service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="いい加減にしなさい！"))
    assert (result.expression, result.asked_expression, result.expression_source) == ("angry", "auto", "auto")
    assert set(result.expression_scores) == {"neutral", "smile", "troubled", "surprised", "angry"}
    assert result.image_url.endswith("/angry.svg")
    auto = service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="えっ、まさか！", expression="auto"))
    assert (auto.expression, auto.expression_source) == ("surprised", "auto")
    # The judged face never lacks an image: ママ has no embarrassed.
    shy = service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="恥ずかしいねえ、照れるよ"))
    assert shy.expression in {"neutral", "smile", "troubled", "surprised", "angry"}
    view = service.get_stage(stage.stage_id, stage.agent_key)
    assert view.log[0].expression_source == "auto" and view.log[0].expression_scores["angry"] > 0.5
    assert view.current.expression_source == "auto"
    assert store.calls.count("speak") == 3            # still one write per line


def test_an_explicit_expression_is_obeyed(stage_and_service):
    service, stage, _ = stage_and_service
    result = service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="いい加減にしなさい！",
                                                                         expression="smile"))
    assert (result.expression, result.expression_source, result.expression_scores) == ("smile", "agent", None)


@pytest.mark.parametrize("url", ["/audio/abc.mp3", "https://voice.example/a.ogg", "https://stage.example/audio/x.wav",
                                 "/audio/a.mp3?v=2", "https://voice.example/tts?text=x"])
def test_audio_on_the_own_or_a_listed_origin(stage_and_service, url):
    service, stage, _ = stage_and_service
    result = service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="どうぞ", audio=url))
    assert result.audio == url
    assert service.get_stage(stage.stage_id, stage.agent_key).current.audio == url


@pytest.mark.parametrize("url", ["http://voice.example/a.ogg", "https://evil.example/a.ogg", "//evil.example/a.ogg",
                                 "javascript:alert(1)", "audio/a.mp3", "/a b.mp3", "https://u:p@voice.example/a",
                                 "data:audio/wav;base64,AAAA",
                                 # the own origin's other paths are no voice: only uploaded audio files
                                 "/x.mp3", "/index.html", "/app.js", "/stages/s_0123456789abcdef", "/audio/",
                                 "/audio/a.mp3#t=1", "/audio/a.exe", "/audio/../app.js", "/audio/sub/a.mp3",
                                 "/characters/hiyori/smile.svg", "https://stage.example/app.js",
                                 "https://stage.example/audio/a.txt",
                                 # matched whole: a final line break is no part of a voice's path
                                 "/audio/a.mp3\n", "https://stage.example/audio/a.mp3\n", "/audio/a.mp3?v=2\n",
                                 "https://voice.example/a.ogg\n"])
def test_other_audio_is_a_400_naming_the_field_and_writes_nothing(stage_and_service, url):
    service, stage, store = stage_and_service
    with pytest.raises(ValidationFailed) as err:
        service.speak(stage.stage_id, stage.agent_key, SpeakRequest(text="どうぞ", audio=url))
    assert err.value.field == "audio"
    assert "speak" not in store.calls


def test_audio_origins_and_the_page_policy():
    assert parse_origins("https://a.example, https://b.example:8443/") == ("https://a.example",
                                                                          "https://b.example:8443")
    with pytest.raises(ValueError):
        parse_origins("http://plain.example")
    assert Settings.from_env({"BUTAI_AUDIO_ORIGINS": "https://a.example"}).audio_origins == ("https://a.example",)
    assert "media-src 'self';" in content_security_policy()
    assert "media-src 'self' https://a.example;" in content_security_policy(["https://a.example"])
    assert check_audio_url("/audio/x.mp3", (), ()) == "/audio/x.mp3"


def test_the_start_banner_names_the_judge(capsys):
    from butai_tools.local.runtime import print_banner
    from chalicelib.expression import describe
    print_banner({"api_url": "http://127.0.0.1:1", "stages": {}, "expression_judge": describe(judge_from({}))})
    assert "expression judge (lines sent without an expression): lexicon (embedded, no model)" in capsys.readouterr().out
    model = judge_from({"BUTAI_EXPRESSION_JUDGE": "openai", "BUTAI_OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert describe(model) == "openai at http://127.0.0.1:9/v1, falling back to lexicon"
