"""The cloud's voice function with the real speech model, against moto: the `current` table's stream names
a speak's line, the function renders it into the bucket and onto the stage, and that write's own stream
record pushes the audio to a subscribed page; a retried batch stores nothing twice."""
import pytest

from butai_tools.voice import cloud as voice_function
from butai_tools.voice.engine import engine
from butai_tools.voice.render import BucketSentences, Renderer
from butai_tools.voice.worker import VoiceWorker
from chalicelib import aws
from chalicelib.push import stream
from chalicelib.stage.models import SpeakRequest
from chalicelib.stage.voices import SENTENCE_PREFIX
from tests.functional.test_push_cloud import cloud, sent, stream_records, ws_message  # noqa: F401

pytestmark = pytest.mark.voice


def test_the_voice_function_renders_what_the_stream_names_and_the_push_sends_it(services, aws_settings, cloud):  # noqa: F811
    push, _ = cloud
    stages = services.stage
    stages.voice_on = True            # BUTAI_VOICE=1 on the API's function: lines are named, not rendered there
    created = stages.create_stage("cloud-voice")
    ws_message("conn-voice", {"action": "subscribe", "stage": created.stage_id, "key": created.player_key})
    mark = stream_records(aws_settings)[-1]["dynamodb"]["SequenceNumber"]
    line = stages.speak(created.stage_id, created.agent_key, SpeakRequest(text="はじめまして。"))
    records = stream_records(aws_settings, after=mark)
    assert [job.entry for _, job in voice_function.jobs_of(records)] == [line.id]

    s3 = aws.client("s3", aws_settings)
    worker = VoiceWorker(stages, s3, aws_settings.bucket, Renderer(engine(), BucketSentences(s3, aws_settings.bucket)))
    assert voice_function.handle({"Records": records}, worker) == {"batchItemFailures": []}
    [entry] = [e for e in stages.get_stage(created.stage_id, created.player_key).log if e.id == line.id]
    assert entry.audio.startswith("/audio/") and entry.audio.endswith(".mp3")
    stored = s3.get_object(Bucket=aws_settings.bucket, Key=entry.audio.lstrip("/"))
    assert stored["ContentType"] == "audio/mpeg" and stored["ContentLength"] > 1000
    kept = s3.list_objects_v2(Bucket=aws_settings.bucket, Prefix=SENTENCE_PREFIX)["KeyCount"]
    assert kept == 1

    voiced = stream_records(aws_settings, after=records[-1]["dynamodb"]["SequenceNumber"])
    assert voice_function.jobs_of(voiced) == []          # the function's own write names nothing new
    assert stream.handle({"Records": voiced}, push) == {"batchItemFailures": []}
    assert sent("conn-voice")[-1]["lines"] == [{"id": line.id, "audio": entry.audio}]

    # Lambda retries a batch: the line is rendered from the kept sentence, nothing new is stored.
    assert voice_function.handle({"Records": records}, worker) == {"batchItemFailures": []}
    assert stages.store.get_stage(created.stage_id).voiced.count(line.id) == 1
