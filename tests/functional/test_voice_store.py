"""The stage's own voice against moto: a scenario's lines rendered ahead carry their audio from the first
write, the others are marked and named to the voice worker, its outcome is one transaction on DynamoDB, the
turn's debug record keeps each line's voice, and the cloud's stream sends the audio to subscribed pages."""
import json

from chalicelib import aws
from chalicelib.push import stream
from chalicelib.stage.models import ReplyRequest, SpeakRequest
from chalicelib.stage.voices import PENDING, index_key, jobs_from_json
from chalicelib.voices import VoiceSpec
from tests.conftest import ROOT
from tests.functional.test_push_cloud import cloud, sent, stream_records, ws_message  # noqa: F401

SCENARIO = ROOT / "scenarios/chinoike.json"


def put_index(settings, scenario_key, lines):
    aws.client("s3", settings).put_object(Bucket=settings.bucket, Key=index_key(scenario_key),
                                          Body=json.dumps({"lines": lines}).encode())


def test_start_lines_rendered_ahead_carry_their_audio_and_the_others_wait_for_the_worker(services, aws_settings):
    director, stages = services.director, services.stage
    handed = []
    stages.voice_on, stages.voice_jobs = True, handed.extend
    key = director.library.put(SCENARIO)
    compiled = director.library.get(key).compiled
    start = [line for line in compiled.scene(compiled.start_place).lines if "開始" in str(line.condition)]
    first = start[0]
    spec = stages.voice_spec(first.speaker)
    put_index(aws_settings, key, {spec.key(first.text): "audio/first.mp3"})
    created = director.create("voiced", key)
    view = stages.get_stage(created.stage_id, created.player_key)
    said = [e for e in view.log if e.role == "character"]
    assert said[0].text == first.text and said[0].audio == "/audio/first.mp3" and said[0].audio_status is None
    assert all(e.audio is None and e.audio_status == PENDING for e in said[1:])
    assert [j.entry for j in handed] == [e.id for e in said[1:]]
    assert jobs_from_json(stages.store.get_stage(created.stage_id).voice_wanted) == handed

    # A turn: its lines rendered after the write, each line's voice in the turn's debug record.
    handed.clear()
    accepted = director.reply(created.stage_id, created.player_key, ReplyRequest(text="こんばんは"))
    [turn] = director.debug(created.stage_id, created.agent_key)
    assert turn.id == accepted.id and [v.entry for v in turn.voices] == [j.entry for j in handed]
    assert all(v.pending and v.source == "rendered" for v in turn.voices)
    job = handed[0]
    assert all(j.turn == accepted.id for j in handed)

    # The worker's outcome: one transaction on the entry and the stage item; the record says how it went.
    assert stages.voiced(job, "audio/said.mp3", ms=1234.5) is True
    assert stages.voiced(handed[1], None, error="Unrenderable: nothing to say") is True
    [turn] = director.debug(created.stage_id, created.agent_key)
    voices = {v.entry: v for v in turn.voices}
    assert voices[job.entry].audio == "/audio/said.mp3" and voices[job.entry].ms == 1234.5
    assert not voices[job.entry].pending and voices[handed[1].entry].source == "failed"
    assert voices[handed[1].entry].error.startswith("Unrenderable")
    log = {e.id: e for e in stages.get_stage(created.stage_id, created.player_key).log}
    assert log[job.entry].audio == "/audio/said.mp3" and log[handed[1].entry].audio_status == "failed"
    assert stages.voiced(job, "audio/again.mp3") is False        # told once


def test_an_agent_line_voiced_after_its_write_reaches_a_page_through_the_stream(services, aws_settings, cloud):  # noqa: F811
    push, _ = cloud
    stages = services.stage
    handed = []
    stages.voice_on, stages.voice_jobs = True, handed.extend
    created = stages.create_stage("cloud-voice")
    ws_message("conn-v", {"action": "subscribe", "stage": created.stage_id, "key": created.player_key})
    mark = stream_records(aws_settings)[-1]["dynamodb"]["SequenceNumber"]
    line = stages.speak(created.stage_id, created.agent_key, SpeakRequest(text="すぐ行くね。"))
    records = stream_records(aws_settings, after=mark)
    # What the cloud's voice function reads: the write's jobs, on the stream's new image.
    new = records[-1]["dynamodb"]["NewImage"]
    assert [j.entry for j in jobs_from_json(new["voice_wanted"]["S"])] == [line.id]
    assert stream.handle({"Records": records}, push) == {"batchItemFailures": []}
    [view] = [m for m in sent("conn-v") if m["type"] == "view"]
    assert view["view"]["log"][-1]["audio_status"] == PENDING

    mark = records[-1]["dynamodb"]["SequenceNumber"]
    assert stages.voiced(handed[0], "audio/soon.mp3")
    records = stream_records(aws_settings, after=mark)
    assert stream.handle({"Records": records}, push) == {"batchItemFailures": []}
    audio = sent("conn-v")[-1]
    assert audio == {"type": "audio", "stage": created.stage_id,
                     "version": stages.get_stage(created.stage_id, created.player_key).version,
                     "lines": [{"id": line.id, "audio": "/audio/soon.mp3"}]}
    # The same records again (Lambda retries a batch) send the same message, which the page applies once.
    assert stream.handle({"Records": records}, push) == {"batchItemFailures": []}
    assert sent("conn-v")[-1] == audio


def test_speak_s_voice_that_does_not_exist_is_a_400_naming_it(client, stage):
    r = client.http.post(f"/stages/{stage.stage_id}/speak", body=json.dumps({"text": "はい", "voice": "jf_nope"}),
                         headers={"Authorization": f"Bearer {stage.agent_key}", "Content-Type": "application/json"})
    assert r.status_code == 400
    assert r.json_body["error"]["field"] == "voice" and "jf_alpha" in r.json_body["error"]["message"]
    # Without the key, the key's answer comes first, whatever the body.
    r = client.http.post(f"/stages/{stage.stage_id}/speak", body=json.dumps({"text": "はい", "voice": "jf_nope"}),
                         headers={"Authorization": "Bearer bka_wrong", "Content-Type": "application/json"})
    assert r.status_code == 401


def test_the_character_s_manifest_voice_is_the_default_and_the_scenario_s_comes_first(services):
    # The shipped characters name their voices in their manifests (static/characters/*/manifest.json).
    assert services.stage.voice_spec("赤尾妙子") == VoiceSpec("jf_nezumi", 0.92)
    assert services.stage.voice_spec("hiyori") == VoiceSpec("jf_alpha", 1.0)
    assert services.stage.voice_spec("nobody") == VoiceSpec()
    assert services.stage.voice_spec("赤尾妙子", authored=VoiceSpec("jf_gongitsune", 0.9)) == \
        VoiceSpec("jf_gongitsune", 0.9)
