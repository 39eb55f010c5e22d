"""`butai audio upload`: regular files only (no symbolic link is followed), typed by their content."""
import io
import os
import wave

import pytest

from chalicelib.stage import audio


class Bucket:
    def __init__(self):
        self.objects = {}

    def put_object(self, Bucket, Key, Body, ContentType, CacheControl):  # noqa: N803 - boto3's names
        self.objects[Key] = (Body, ContentType)


def wav_bytes() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\0\0" * 800)
    return out.getvalue()


SIGNATURES = {
    "mp3": b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" * 8,
    "m4a": b"\x00\x00\x00\x20ftypM4A \x00\x00\x00\x00" + b"\0" * 16,
    "ogg": b"OggS\x00\x02" + b"\0" * 22 + b"\x01vorbis" + b"\0" * 16,
    "opus": b"OggS\x00\x02" + b"\0" * 22 + b"OpusHead" + b"\0" * 16,
    "webm": b"\x1aE\xdf\xa3" + b"\0" * 28,
    "aac": b"\xff\xf1\x50\x80" + b"\0" * 28,
}


@pytest.mark.parametrize("extension", ["mp3", "m4a", "ogg", "opus", "webm", "aac", "wav"])
def test_audio_of_each_kind_is_uploaded_with_its_type(tmp_path, extension):
    path = tmp_path / f"voice.{extension}"
    path.write_bytes(wav_bytes() if extension == "wav" else SIGNATURES[extension])
    bucket = Bucket()
    key = audio.upload_audio(bucket, "b", path)
    assert key.startswith("audio/") and key.endswith(f".{extension}")
    assert bucket.objects[key][1] == audio.CONTENT_TYPES[extension]


@pytest.mark.parametrize("content, name, reason", [
    (b"<html><script>alert(1)</script></html>", "page.mp3", "not audio"),
    (b"#!/bin/sh\necho hi\n", "voice.wav", "not audio"),
    (b"\x89PNG\r\n\x1a\n" + b"\0" * 32, "image.ogg", "not audio"),
])
def test_a_file_whose_content_is_not_audio_is_refused_whatever_its_name(tmp_path, content, name, reason):
    path = tmp_path / name
    path.write_bytes(content)
    bucket = Bucket()
    with pytest.raises(ValueError, match=reason):
        audio.upload_audio(bucket, "b", path)
    assert bucket.objects == {}


def test_audio_named_as_another_kind_is_refused(tmp_path):
    path = tmp_path / "voice.mp3"
    path.write_bytes(wav_bytes())
    with pytest.raises(ValueError, match="its content is wav, not mp3"):
        audio.upload_audio(Bucket(), "b", path)


def test_a_symbolic_link_is_not_followed(tmp_path):
    secret = tmp_path / "local.json"
    secret.write_text('{"agent_key": "bka_secret"}')
    link = tmp_path / "voice.mp3"
    os.symlink(secret, link)
    bucket = Bucket()
    with pytest.raises(ValueError, match="symbolic link"):
        audio.upload_audio(bucket, "b", link)
    # Even a link to real audio: the file itself must be given.
    real = tmp_path / "real.wav"
    real.write_bytes(wav_bytes())
    os.symlink(real, tmp_path / "linked.wav")
    with pytest.raises(ValueError, match="symbolic link"):
        audio.upload_audio(bucket, "b", tmp_path / "linked.wav")
    assert bucket.objects == {}


def test_a_fifo_or_a_folder_is_not_a_file(tmp_path):
    fifo = tmp_path / "pipe.mp3"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        audio.upload_audio(Bucket(), "b", fifo)
    folder = tmp_path / "dir.mp3"
    folder.mkdir()
    with pytest.raises((ValueError, IsADirectoryError)):
        audio.upload_audio(Bucket(), "b", folder)


def test_a_file_over_the_limit_is_refused_without_reading_it_all(tmp_path, monkeypatch):
    monkeypatch.setattr(audio, "MAX_UPLOAD_BYTES", 1000)
    path = tmp_path / "long.wav"
    path.write_bytes(wav_bytes())
    with pytest.raises(ValueError, match="larger than the limit"):
        audio.upload_audio(Bucket(), "b", path)
