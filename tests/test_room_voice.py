"""Speech in on the visitors' pages, over the wire against the real app: a room guest's
recording, a counter side's and the desk's spoken first message are heard by the real Whisper
model (base, on the CPU) and go on as typed text would; the model is the ``EN:`` stand-in of
``tests/support/tabs.py``. A recording that gives no words (silence, bytes that are not sound,
one over the size) is said to the speaker alone, in the page's words, and the conversation goes
on. The browser's own recorder is ``tests/test_room_voice_browser.py``'s."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import re
import wave
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import av
import httpx
import numpy as np
import pytest

from hymt_chat.room import voice
from hymt_chat.service.auth import hash_password
from hymt_chat.settings import Settings
from hymt_chat.speech.errors import (
    AudioTooLongError,
    BadAudioError,
    NoSpeechError,
    SpeechUnavailableError,
    UnclearSpeechError,
    UnheardLanguageError,
)
from hymt_chat.speech.service import Speech
from tests.support.speech_files import model_dir, spoken_wav
from tests.support.tabs import Tab, app, open_room, room_events, room_ws_url

AGENT = "Support agent"
GUEST = "e" * 32
SAID = "Could you please send me a photo of the package?"
WAIT = 120  # s: the model hears on loaded cores; every wait ends on an event


def _webm(wav: Path) -> bytes:
    """*wav* as Chromium's MediaRecorder sends it: Opus in WebM."""
    with wave.open(str(wav)) as read:
        rate = read.getframerate()
        pcm = np.frombuffer(read.readframes(read.getnframes()), dtype="<i2")
    out_buf = io.BytesIO()
    with av.open(out_buf, "w", format="webm") as out:
        stream = out.add_stream("libopus", rate=48_000)
        stream.layout = "mono"
        frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = rate
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            out.mux(packet)
    return out_buf.getvalue()


def _silence(dest: Path, seconds: float = 3.0) -> bytes:
    with wave.open(str(dest), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16_000)
        out.writeframes(b"\0\0" * int(16_000 * seconds))
    return dest.read_bytes()


def _frame(data: bytes, mime: str, **more: str) -> dict[str, str]:
    return {"type": "voice", "audio": base64.b64encode(data).decode(), "mime": mime, **more}


@pytest.fixture(scope="module")
def spoken(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _webm(spoken_wav(SAID, "en-us", tmp_path_factory.mktemp("said") / "said.wav"))


@pytest.fixture(scope="module")
def voice_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with app(tmp_path_factory.mktemp("voice-room"), HYMT_SPEECH_MODEL=str(model_dir())) as (
            url, _):
        yield url


async def _typed_goes_through(ws: aiohttp.ClientWebSocketResponse, agent: Tab,
                              text: str) -> None:
    await ws.send_json({"type": "say", "text": text})
    got = (await room_events(ws, "message", WAIT, tab=agent))[-1]["message"]
    assert got["who"] == "guest" and got["original"] == text
    await agent.wait(f"EN:{text}")


async def test_a_guest_speaks_and_the_agent_reads_it_translated(voice_app, spoken, tmp_path):
    async with Tab(voice_app, profile=AGENT) as agent, aiohttp.ClientSession() as http:
        await agent.send("/agent Spanish")  # the customer speaks English: the agent reads Spanish
        await agent.wait("Spanish")
        token = await open_room(agent)
        page = httpx.get(f"{voice_app}/room/{token}", headers={"Accept-Language": "en"},
                         timeout=30)
        config = re.search(r'<script[^>]* id="room-config"[^>]*>(.*?)</script>', page.text)
        assert config and json.loads(config.group(1))["voice"] is True
        assert 'src="/room/voice.js"' in page.text
        script = httpx.get(f"{voice_app}/room/voice.js", timeout=30)
        assert script.status_code == 200 and "MediaRecorder" in script.text
        assert script.headers["content-type"].startswith("text/javascript")
        async with http.ws_connect(room_ws_url(voice_app, token), max_msg_size=0) as ws:
            await ws.send_json({"type": "hello", "guest": GUEST, "language": "en"})
            await room_events(ws, "welcome")
            await ws.send_json({"type": "listening"})  # the mic opened: the model loads now
            await ws.send_json(_frame(spoken, "audio/webm;codecs=opus", id="voice-0001",
                                      language="en"))
            got = await room_events(ws, "message", WAIT, tab=agent)
            assert not [e for e in got if e["type"] == "error"], got
            heard = got[-1]["message"]
            # The guest sees their own words; the agent reads them translated.
            assert heard["who"] == "guest" and heard["original"] == SAID
            assert heard["translation"] == f"EN:{SAID}" and heard["ref"] == "voice-0001"
            await agent.wait(f"EN:{SAID}", timeout=WAIT)
            # The same recording again (a page that sent it twice): taken once.
            await ws.send_json(_frame(spoken, "audio/webm", id="voice-0001"))

            refusals = {
                "voice_no_speech": _frame(_silence(tmp_path / "quiet.wav"), "audio/wav"),
                "voice_refused": _frame(os.urandom(20_000), "audio/webm"),
            }
            not_base64 = {"type": "voice", "audio": "this is not base64!", "mime": "audio/webm"}
            over = {"type": "voice", "audio": "A" * (voice.VOICE_FRAME_CHARS + 4),
                    "mime": "audio/webm"}
            for number, (key, frame) in enumerate(
                    [*refusals.items(), ("voice_refused", not_base64), ("voice_refused", over)]):
                await ws.send_json(frame)
                refused = (await room_events(ws, "error", WAIT, tab=agent))[-1]
                assert refused["key"] == key, refused
                assert "text" not in refused  # the page words it; no server detail leaks
                # The room goes on: a typed message still goes through, both ways.
                await _typed_goes_through(ws, agent, f"Still here, number {number}.")
            async with http.ws_connect(room_ws_url(voice_app, token)) as again:  # a reload
                await again.send_json({"type": "hello", "guest": GUEST, "resume": True})
                history = (await room_events(again, "welcome"))[-1]["history"]
            assert [m["original"] for m in history].count(SAID) == 1


async def test_each_counter_side_speaks_its_own_language(voice_app, spoken, tmp_path):
    async with aiohttp.ClientSession() as http, \
            http.ws_connect(voice_app.replace("http://", "ws://") + "/counter/ws",
                            max_msg_size=0) as ws:
        await ws.send_json({"type": "hello", "a": "en", "b": "es"})
        await ws.send_json({"type": "listening", "side": "a"})
        await ws.send_json({"side": "a", **_frame(spoken, "audio/webm;codecs=opus")})
        message = json.loads((await asyncio.wait_for(ws.receive(), WAIT)).data)
        assert message["type"] == "message" and message["side"] == "a", message
        assert message["original"] == SAID and message["translation"] == f"EN:{SAID}"
        assert (message["source"], message["target"]) == ("en", "es")
        await ws.send_json({"side": "b", **_frame(_silence(tmp_path / "q.wav"), "audio/wav")})
        refused = json.loads((await asyncio.wait_for(ws.receive(), WAIT)).data)
        assert refused == {**refused, "type": "error", "side": "b", "key": "voice_no_speech"}
        await ws.send_json({"type": "say", "side": "b", "text": "Gracias."})
        typed = json.loads((await asyncio.wait_for(ws.receive(), WAIT)).data)
        assert typed["type"] == "message" and typed["translation"] == "EN:Gracias."


def test_a_visitor_speaks_the_desks_first_message(spoken, tmp_path):
    """The desk's start page with a recording instead of text: the conversation opens with the
    words heard; silence opens none and says why."""
    agents = f"alice:{hash_password('correct horse battery', n=2**10)}"
    # The desk's agents read Spanish (the default target): the visitor speaks English.
    with app(tmp_path, HYMT_SPEECH_MODEL=str(model_dir()), HYMT_AGENTS=agents,
             CHAINLIT_AUTH_SECRET="s" * 64, HYMT_DEFAULT_TARGET="es") as (url, _):
        page = httpx.get(f"{url}/desk", timeout=30)
        assert page.status_code == 200 and '"voice": true' in page.text
        assert '"recording": {"max_bytes": 4194304, "longest_ms": 60000}' in page.text
        quiet = httpx.post(f"{url}/desk/start", timeout=WAIT, json={
            "guest": "f" * 32, "language": "en",
            **_frame(_silence(tmp_path / "q.wav"), "audio/wav")})
        assert quiet.status_code == 422 and quiet.json()["key"] == "voice_no_speech"
        started = httpx.post(f"{url}/desk/start", timeout=WAIT, json={
            "guest": "f" * 32, "language": "en", **_frame(spoken, "audio/webm")})
        assert started.status_code == 200, started.text
        token = started.json()["token"]

        async def first_message() -> dict:
            async with aiohttp.ClientSession() as http:
                async with http.ws_connect(room_ws_url(url, token)) as ws:
                    await ws.send_json({"type": "hello", "guest": "f" * 32})
                    return (await room_events(ws, "welcome"))[-1]["history"][0]

        said = asyncio.run(first_message())
        assert said["who"] == "guest" and said["original"] == SAID
        assert said["translation"] == f"EN:{SAID}" and said["target"] == "es"
        huge = httpx.post(f"{url}/desk/start", timeout=30, content=b"{" + b" " * (16 << 20))
        assert huge.status_code == 400  # read no further than a recording's size


# --- without the model --------------------------------------------------------------------


@pytest.mark.parametrize(("err", "key"), [
    (NoSpeechError("x"), "voice_no_speech"), (UnclearSpeechError("x"), "voice_unclear"),
    (UnheardLanguageError("x"), "voice_language"), (BadAudioError("x"), "voice_refused"),
    (AudioTooLongError.of(120), "voice_refused"), (voice.VoiceRefusedError("x"), "voice_refused"),
    (SpeechUnavailableError("x"), "voice_unavailable")])
def test_each_refusal_is_a_guest_sentence(err, key):
    from hymt_chat.words.source import GUEST as WORDS

    assert voice.problem_key(err) == key and key in WORDS


async def test_voice_turned_off_hides_the_mic_and_refuses_a_recording(tmp_path):
    off = Speech(Settings(cache_dir=tmp_path / "c", speech=False))
    assert not voice.voice_on(off) and not voice.voice_on(None)
    for speech in (off, None):
        with pytest.raises(SpeechUnavailableError) as refused:
            await voice.hear_frame(speech, {"audio": ""}, None)
        assert voice.problem_key(refused.value) == "voice_unavailable"
    on = Speech(Settings(cache_dir=tmp_path / "c", speech_model=str(tmp_path / "no-model")))
    assert voice.voice_on(on)  # shown until the model fails to load
    assert await on.ready() is not None and not voice.voice_on(on)


def test_a_page_records_no_more_than_the_server_takes(tmp_path):
    """The pages' recorder stops at the server's caps (``recording`` in their config): a
    shorter HYMT_SPEECH_MAX_SECONDS or smaller HYMT_SPEECH_MAX_MB stops it sooner, and a
    socket's own cap and the minute hold when the settings allow more."""
    assert voice.recording_limits(None) == {"max_bytes": voice.MAX_RECORDING_BYTES,
                                            "longest_ms": 60_000}
    roomy = Speech(Settings(cache_dir=tmp_path, speech_max_mb=100, speech_max_seconds=600))
    assert voice.recording_limits(roomy) == voice.recording_limits(None)
    tight = Speech(Settings(cache_dir=tmp_path, speech_max_mb=1, speech_max_seconds=20))
    assert voice.recording_limits(tight) == {"max_bytes": 1 << 20, "longest_ms": 20_000}
    script = voice.script()
    assert "limits.max_bytes" in script and "limits.longest_ms" in script
