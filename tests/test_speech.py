"""The voice's core on the real Whisper model (base, from its PyPI packages; loaded once per
test process): what it hears, what it refuses and how the refusal is said, the live
microphone's utterances, and a session that is spoken to.

Test speech is Debian's espeak-ng (tests/support/speech_files.py); word error rates are the
benchmark's (benchmarks/speech.py, docs/results/speech.md), not asserted here beyond "the
words came through"."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import wave
from collections.abc import Iterator
from pathlib import Path

import jiwer
import numpy as np
import pytest

from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.session import Services
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.settings import Settings
from hymt_chat.speech.audio import RATE, decode
from hymt_chat.speech.errors import (
    AudioTooBigError,
    AudioTooLongError,
    BadAudioError,
    NoSpeechError,
    SpeechUnavailableError,
    UnheardLanguageError,
)
from hymt_chat.speech.listening import Utterances
from hymt_chat.speech.service import Speech
from tests.support.sessions import RecordingScreen, services
from tests.support.speech_files import model_dir, spoken_wav
from tests.support.stub_model import StubModel

SENTENCE = "Could you please send me a photo of the broken package?"


@pytest.fixture(scope="session")
def speech() -> Iterator[Speech]:
    """One recogniser for the whole run: the model loads once (about a second, 140 MB)."""
    heard = Speech(Settings(speech_model=str(model_dir()), speech_threads=1))
    yield heard
    asyncio.run(heard.aclose())


@pytest.fixture(scope="session")
def sentence_wav(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    folder = tmp_path_factory.mktemp("said")
    return spoken_wav(SENTENCE, "en-us", folder / "en.wav", rate=RATE).read_bytes()


def _wav(samples: np.ndarray, rate: int = RATE) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())
    return buf.getvalue()


def _pcm16(wav: bytes) -> tuple[bytes, int]:
    with wave.open(io.BytesIO(wav)) as read:
        return read.readframes(read.getnframes()), read.getframerate()


async def test_an_english_sentence_is_heard_as_english(speech, sentence_wav):
    heard = await speech.hear_file(sentence_wav)
    assert heard.language == "en"
    assert jiwer.wer(jiwer.ToLowerCase()(SENTENCE).strip("?"),
                     heard.text.lower().strip("?.")) < 0.2, heard.text


async def test_the_speakers_language_given_is_the_transcripts(speech, sentence_wav):
    assert (await speech.hear_file(sentence_wav, hint="en")).probability == 1.0


@pytest.mark.parametrize("samples", [
    np.zeros(RATE * 3, np.float32),  # silence
    (np.random.default_rng(7).standard_normal(RATE * 3) * 0.2).astype(np.float32),  # hiss
], ids=["silence", "noise"])
async def test_silence_and_noise_are_said_to_hold_no_speech(speech, samples):
    with pytest.raises(NoSpeechError) as caught:
        await speech.hear_file(_wav(samples))
    assert PageText.of("fr").error(caught.value).startswith("Aucune")  # the page's language
    assert "microphone" in PageText.of("en").error(caught.value)


async def test_a_language_outside_the_38_is_named_as_such(speech, tmp_path):
    finnish = spoken_wav("Hyvää huomenta. Voisitteko lähettää minulle kuvan rikkoutuneesta "
                         "paketista?", "fi", tmp_path / "fi.wav", rate=RATE)
    with pytest.raises(UnheardLanguageError) as caught:
        await speech.hear_file(finnish.read_bytes())
    assert "38" in PageText.of("en").error(caught.value)


async def test_a_ten_minute_recording_is_refused_without_decoding_it_whole(speech):
    ten_minutes = _wav(np.zeros(RATE * 600, np.float32))
    with pytest.raises(AudioTooLongError) as caught:
        await speech.hear_file(ten_minutes)
    assert "120" in PageText.of("en").error(caught.value)


async def test_a_100_mb_upload_is_refused_before_it_is_read(speech):
    with pytest.raises(AudioTooBigError) as caught:
        await speech.hear_file(b"\0" * (100 * 1_048_576))
    assert PageText.of("en").error(caught.value).startswith("The recording is 100 MB")


@pytest.mark.parametrize("data", [
    b"",
    b"%PDF-1.7 not a sound at all" * 50,
    b"OggS\x00\x02" + bytes(range(256)) * 4,  # an Ogg page header, then garbage
    b"\x89PNG\r\n\x1a\n" + bytes(200),
], ids=["empty", "pdf", "corrupt-ogg", "png"])
async def test_what_is_not_sound_is_refused_in_one_sentence(speech, data):
    with pytest.raises(BadAudioError) as caught:
        await speech.hear_file(data)
    assert PageText.of("de").error(caught.value) != str(caught.value)  # said in German


def test_a_compressed_recording_decodes(sentence_wav, tmp_path):
    """Phones send WebM/Opus or MP4/AAC: PyAV decodes what FFmpeg does (Opus here)."""
    import av

    samples = decode(sentence_wav, max_bytes=10**8, max_seconds=60)
    out = tmp_path / "said.webm"
    with av.open(str(out), "w") as container:
        stream = container.add_stream("libopus", rate=48000)
        stream.layout = "mono"  # type: ignore[union-attr]
        frame = av.AudioFrame.from_ndarray((samples * 32767).astype("<i2")[None, :],
                                           format="s16", layout="mono")
        frame.sample_rate = RATE
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48000)
        for part in resampler.resample(frame):
            for packet in stream.encode(part):  # type: ignore[union-attr]
                container.mux(packet)
        for packet in stream.encode(None):  # type: ignore[union-attr]
            container.mux(packet)
    again = decode(out.read_bytes(), max_bytes=10**8, max_seconds=60)
    assert abs(len(again) - len(samples)) < RATE // 2


async def test_a_missing_model_is_one_sentence_with_the_command_that_fetches_it(tmp_path):
    missing = Speech(Settings(speech_model="small", cache_dir=tmp_path))
    problem = await missing.ready()
    assert problem is not None and "hymt-chat voice fetch small" in problem
    with pytest.raises(SpeechUnavailableError) as caught:
        await missing.hear(np.ones(RATE, np.float32))
    assert PageText.of("en").error(caught.value) == (
        "Voice is unavailable right now; typing works as usual.")
    await missing.aclose()


# --- the live microphone --------------------------------------------------------------------

def _tone(seconds: float, level: float = 0.3, rate: int = 24_000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * 220 * t) * level * 32767).astype("<i2").tobytes()


def _quiet(seconds: float, rate: int = 24_000) -> bytes:
    noise = np.random.default_rng(3).standard_normal(int(seconds * rate)) * 0.002
    return (noise * 32767).astype("<i2").tobytes()


def test_a_pause_ends_an_utterance_and_a_click_makes_none():
    ears = Utterances(24_000, pause=0.8)
    assert ears.feed(_quiet(1.0) + _tone(0.05) + _quiet(1.0)) == []  # a click: too short
    got = ears.feed(_tone(1.5) + _quiet(0.5))
    assert got == []  # still within the pause
    got = ears.feed(_quiet(0.5))
    assert len(got) == 1 and 1.5 < len(got[0]) / RATE < 3.0
    assert ears.flush() is None


def test_a_monologue_is_cut_into_pieces_not_refused():
    """Ten minutes of syllables (a quarter second of voice, a tenth of quiet) with no pause
    long enough to end an utterance."""
    ears = Utterances(24_000, pause=0.8, longest=30)
    syllables = (_tone(0.25) + _quiet(0.1)) * int(600 / 0.35)
    pieces = [len(p) / RATE for p in ears.feed(syllables)]
    last = ears.flush()
    assert len(pieces) == 19 and all(29 < p <= 30.1 for p in pieces)
    assert last is not None and 29 < len(last) / RATE <= 30.1


def test_a_steady_noise_behind_the_speaker_is_not_a_voice():
    ears = Utterances(24_000, pause=0.8)
    fan = (np.random.default_rng(5).standard_normal(24_000 * 6) * 0.05 * 32767).astype("<i2")
    assert ears.feed(fan.tobytes()) == [] and not ears.heard_any


# --- a session spoken to --------------------------------------------------------------------

@pytest.fixture
def stub() -> Iterator[StubModel]:
    with StubModel() as model:
        yield model


def _spoken_to(stub: StubModel, tmp_path: Path, speech: Speech) -> tuple[TranslatorSession,
                                                                         RecordingScreen]:
    base: Services = services(stub, tmp_path)
    screen = RecordingScreen()
    session = TranslatorSession(dataclasses.replace(base, speech=speech), screen,
                                session_id="s1", user_key="addr:1")
    return session, screen


async def test_what_is_said_is_shown_then_translated_from_its_language(stub, tmp_path, speech,
                                                                       sentence_wav):
    session, screen = _spoken_to(stub, tmp_path, speech)
    await session.start()
    await session.settings_changed({"source": "auto", "target": "fr"})
    pcm, rate = _pcm16(sentence_wav)
    assert await session.audio_start(rate)
    for start in range(0, len(pcm), 8192):  # as Chainlit's recorder sends it
        await session.audio_chunk(pcm[start:start + 8192])
    await session.audio_end()
    await session.settled()
    if session.hearing is not None:
        await session.hearing
    await session.settled()
    assert len(screen.spoken) == 1 and "photo" in screen.spoken[0]
    assert "into French" in stub.prompts[-1]
    assert "English → French" in screen.last().markdown  # the language it was said in


async def test_a_microphone_that_hears_nothing_says_so_and_typing_goes_on(stub, tmp_path, speech):
    session, screen = _spoken_to(stub, tmp_path, speech)
    await session.start()
    assert await session.audio_start(24_000)
    await session.audio_chunk(_quiet(2.0))
    await session.audio_end()
    assert screen.last().markdown.startswith("No speech was heard")
    await session.message("Bonjour tout le monde, comment allez-vous aujourd'hui ?", None)
    assert "French → English" in screen.last().markdown


async def test_without_a_speech_model_the_microphone_says_one_line_and_typing_works(stub,
                                                                                   tmp_path):
    session, screen = _spoken_to(stub, tmp_path, Speech(Settings(speech_model="missing",
                                                                 cache_dir=tmp_path)))
    await session.start()
    assert await session.audio_start(24_000) is False
    assert screen.last().markdown.replace("\\", "") == (
        "Voice is unavailable right now; typing works as usual.")
    await session.message("Bonjour tout le monde, comment allez-vous aujourd'hui ?", None)
    assert "French → English" in screen.last().markdown


async def test_an_answer_offers_listen_and_listen_sends_the_servers_reading(stub, tmp_path,
                                                                          speech):
    session, screen = _spoken_to(stub, tmp_path, speech)
    await session.start()
    await session.settings_changed({"source": "auto", "target": "es"})
    await session.message("Good morning, everyone. The train leaves at nine.", None)
    answer = screen.last()
    listen = [b for b in answer.buttons if b.name == "listen"]
    assert len(listen) == 1 and set(listen[0].payload) == {"key"}  # never the text itself
    # A payload the browser made up is not read aloud: the server reads only what it said.
    await session.button("listen", {"text": "Anything at all", "target": "es"}, "Listen",
                         _nothing)
    assert screen.last().sound is None and "expired" in screen.last().markdown
    await session.button("listen", listen[0].payload, listen[0].label, _nothing)
    sound = screen.last().sound
    assert sound is not None and sound.mime == "audio/wav" and screen.last().play
    with wave.open(io.BytesIO(sound.content)) as read:
        assert read.getnframes() / read.getframerate() > 0.5


async def test_no_listen_where_no_server_voice_reads_the_language(stub, tmp_path, speech):
    session, screen = _spoken_to(stub, tmp_path, speech)
    await session.start()
    await session.settings_changed({"source": "auto", "target": "km"})
    await session.message("Good morning, everyone. The train leaves at nine.", None)
    assert [b for b in screen.last().buttons if b.name == "listen"] == []


async def _nothing() -> None:
    """A button's remove(): Listen stays (it may be pressed again)."""
