"""The stage's own voice without the speech model: voices and their keys, what speak and a turn mark for the
voice worker, what its outcome changes, the page's version, the authored lines a scenario holds."""
import json

import pytest
from pydantic import ValidationError

from butai_tools.voice.lines import authored_lines
from chalicelib.scenario import ScenarioError, load_scenario, load_scenario_text
from chalicelib.stage.catalog import CharacterCatalog
from chalicelib.stage.models import SpeakRequest
from chalicelib.stage.service import StageService, etag
from chalicelib.stage.voices import PENDING, RenderedLines, jobs_from_json, spec_of, voiced_from_json
from chalicelib.voices import DEFAULT_VOICE, VOICES, VoiceSpec, fixed_parts, sentences
from tests.conftest import HIYORI, ROOT
from tests.memory_store import MemoryStageStore

NEZUMI = {**HIYORI, "voice": {"pitch": 1.1, "kokoro": "jf_nezumi", "speed": 1.1}}


@pytest.fixture
def handed():
    return []


@pytest.fixture
def voiced_service(handed):
    catalog = CharacterCatalog(lambda c: NEZUMI if c == "hiyori" else None)
    return StageService(MemoryStageStore(), catalog, voice_on=True, voice_jobs=handed.extend)


def test_a_line_in_a_voice_has_one_address_whoever_renders_it():
    spec = VoiceSpec("jf_tebukuro", 1.1)
    assert spec.key("こんばんは。") == VoiceSpec("jf_tebukuro", 1.1).key(" こんばんは。 ")
    assert len({spec.key("こんばんは。"), VoiceSpec("jf_tebukuro", 1.0).key("こんばんは。"),
                VoiceSpec("jf_alpha", 1.1).key("こんばんは。"), spec.key("こんにちは。")}) == 4
    with pytest.raises(ValueError, match="jf_alpha"):
        VoiceSpec("jf_nope")
    with pytest.raises(ValueError, match="speed"):
        VoiceSpec(DEFAULT_VOICE, 3.0)


def test_a_template_is_rendered_ahead_as_its_sentences_without_a_slot():
    assert sentences("はい、{total}円ね。ありがとう！　また来てね") == ["はい、{total}円ね。", "ありがとう！", "また来てね"]
    assert fixed_parts("はい、{total}円ね。ありがとう！　また来てね") == ["ありがとう！", "また来てね"]
    assert fixed_parts("{item}は置いてないのよ。") == []


def test_a_manifest_names_its_voice_and_a_broken_one_names_none():
    assert spec_of({"kokoro": "jm_kumo", "speed": 0.9}) == VoiceSpec("jm_kumo", 0.9)
    assert spec_of({"pitch": 1.2}) is None
    assert spec_of({"kokoro": "jf_nope"}) is None and spec_of({"kokoro": "jf_alpha", "speed": "fast"}) is None


def test_speak_names_a_voice_that_does_not_exist_and_says_which_there_are():
    with pytest.raises(ValidationError) as info:
        SpeakRequest(text="はい", voice="jf_nope")
    [error] = info.value.errors()
    assert error["loc"] == ("voice",) and "jf_alpha" in error["msg"]
    assert SpeakRequest(text="はい", voice="jm_kumo").voice == "jm_kumo"


def test_a_scenario_character_s_voice_is_checked_where_it_is_written():
    data = json.loads((ROOT / "scenarios/chinoike.json").read_text(encoding="utf-8"))
    data["characters"][0]["voice"] = {"kokoro": "jf_nope"}
    with pytest.raises(ScenarioError, match=r"voice\.kokoro.*jf_alpha"):
        load_scenario_text(json.dumps(data, ensure_ascii=False))
    data["characters"][0]["voice"] = {"kokoro": "jf_gongitsune", "speed": 0.95}
    compiled = load_scenario_text(json.dumps(data, ensure_ascii=False))
    voice = compiled.characters[data["characters"][0]["id"]].voice
    assert (voice.kokoro, voice.speed) == ("jf_gongitsune", 0.95)
    schema = json.loads((ROOT / "scenarios/schema.json").read_text(encoding="utf-8"))
    assert schema["$defs"]["CharacterVoice"]["properties"]["kokoro"]["enum"] == list(VOICES)


def test_an_agent_line_shows_at_once_and_is_handed_to_the_worker_after_its_write(voiced_service, handed):
    created = voiced_service.create_stage("voice")
    result = voiced_service.speak(created.stage_id, created.agent_key, SpeakRequest(text="少し待ってね。"))
    assert result.audio is None and result.audio_status == PENDING
    [job] = handed
    assert (job.entry, job.text, job.voice, job.speed) == (result.id, "少し待ってね。", "jf_nezumi", 1.1)
    stored = voiced_service.store.get_stage(created.stage_id)
    assert jobs_from_json(stored.voice_wanted) == [job]
    [entry] = voiced_service.get_stage(created.stage_id, created.player_key).log
    assert entry.audio_status == PENDING and entry.audio is None
    # A line's own voice replaces the character's, keeping its speed.
    voiced_service.speak(created.stage_id, created.agent_key, SpeakRequest(text="低い声で。", voice="jm_kumo"))
    assert (handed[-1].voice, handed[-1].speed) == ("jm_kumo", 1.1)


def test_an_agent_s_own_audio_wins_and_nothing_is_rendered(voiced_service, handed):
    created = voiced_service.create_stage("own")
    result = voiced_service.speak(created.stage_id, created.agent_key,
                                  SpeakRequest(text="録音です。", audio="/audio/abc.mp3", voice="jm_kumo"))
    assert result.audio == "/audio/abc.mp3" and result.audio_status is None and handed == []


def test_a_stage_without_a_voice_worker_marks_nothing(service, handed):
    created = service.create_stage("silent")
    result = service.speak(created.stage_id, created.agent_key, SpeakRequest(text="こんにちは"))
    assert result.audio_status is None and not service.store.get_stage(created.stage_id).voice_wanted


def test_the_worker_s_audio_reaches_the_entry_the_current_line_and_the_page_s_version(voiced_service, handed):
    created = voiced_service.create_stage("arrive")
    first = voiced_service.speak(created.stage_id, created.agent_key, SpeakRequest(text="一つ目。"))
    before = voiced_service.get_stage(created.stage_id, created.player_key)
    assert voiced_service.voiced(handed[0], "audio/aaa.mp3", ms=812.0) is True
    after = voiced_service.get_stage(created.stage_id, created.player_key)
    assert after.log[0].audio == "/audio/aaa.mp3" and after.log[0].audio_status is None
    assert after.current.audio == "/audio/aaa.mp3"
    # What a GET shows changed: a poll with the old ETag gets the new view, with the same log version.
    assert after.version != before.version and after.version.startswith(first.version)
    assert voiced_service.get_stage(created.stage_id, created.player_key, etag(before.version)).log[0].audio
    assert voiced_service.get_stage(created.stage_id, created.player_key, etag(after.version)).version == after.version
    # The same outcome again (a retried job) changes nothing.
    assert voiced_service.voiced(handed[0], "audio/bbb.mp3") is False
    assert voiced_service.get_stage(created.stage_id, created.player_key).log[0].audio == "/audio/aaa.mp3"


def test_audio_for_an_older_line_does_not_touch_the_newer_current_line(voiced_service, handed):
    created = voiced_service.create_stage("older")
    voiced_service.speak(created.stage_id, created.agent_key, SpeakRequest(text="一つ目。"))
    voiced_service.speak(created.stage_id, created.agent_key, SpeakRequest(text="二つ目。"))
    assert voiced_service.voiced(handed[0], "audio/one.mp3")
    view = voiced_service.get_stage(created.stage_id, created.player_key)
    assert [e.audio for e in view.log] == ["/audio/one.mp3", None] and view.current.audio is None
    assert [v.entry for v in voiced_from_json(voiced_service.store.get_stage(created.stage_id).voiced)] == \
        [handed[0].entry]


def test_a_line_that_cannot_be_rendered_still_shows_marked_failed(voiced_service, handed):
    created = voiced_service.create_stage("fails")
    voiced_service.speak(created.stage_id, created.agent_key, SpeakRequest(text="……"))
    assert voiced_service.voiced(handed[0], None, error="Unrenderable: nothing to say") is True
    [entry] = voiced_service.get_stage(created.stage_id, created.player_key).log
    assert entry.text == "……" and entry.audio is None and entry.audio_status == "failed"


def test_lines_rendered_ahead_are_looked_up_once_per_process():
    reads = []
    spec = VoiceSpec("jf_alpha", 1.0)
    lines = RenderedLines(lambda key: reads.append(key) or {"lines": {spec.key("いらっしゃい。"): "audio/x.mp3"}})
    assert lines.audio_for("scenarios/a-1.json", spec, "いらっしゃい。") == "audio/x.mp3"
    assert lines.audio_for("scenarios/a-1.json", spec, "またね。") is None
    assert lines.audio_for("scenarios/a-1.json", VoiceSpec("jm_kumo"), "いらっしゃい。") is None
    assert reads == ["scenarios/a-1.json"]


def test_every_kind_of_authored_line_is_found_with_who_says_it():
    compiled = load_scenario(ROOT / "scenarios/chinoike.json")
    found = authored_lines(compiled)
    kinds = {line.where.rsplit(": ", 1)[-1] for line in found}
    assert {"Line", "ReplyLine", "PlaceLine", "EndingLine", "SpokenLine", "Fallback"} <= kinds
    where = " ".join(line.where for line in found)
    for part in ("reactions", "knowledge", "menu", "arrival", "ending", "fallbacks", "replies"):
        assert part in where, part
    assert all(line.character in compiled.characters for line in found)
    scripted = {line.text: line.character for line in found if line.where.endswith(": Line")}
    for scene in compiled.scenario.scenes:
        for line in scene.lines:
            assert scripted[line.text] == line.speaker
    templates = [line for line in found if line.template]
    assert templates and all("{" not in part for line in templates for part in line.to_render())
    assert not any("{" in line.text for line in found if not line.template)
