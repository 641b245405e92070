"""The speech sidecar: `hymt-chat serve-speech`'s command line, its supervision, and the app's
remote recogniser against a double of vLLM's /v1/audio/transcriptions.

The server here is tests/support/whisper_double.py, as a thread or as the process the launch's
own ``python -m vllm.entrypoints.openai.api_server`` starts (a stand-in ``vllm`` package on
PYTHONPATH), so the command line that would start vLLM is the one supervised. A real Whisper
on vLLM needs a GPU and its weights.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import wave
from io import BytesIO
from pathlib import Path

import numpy as np
import pytest

from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.profiles import flags_to_args, parse_flags
from hymt_chat.sidecar.speech_server import (
    DEFAULT_SPEECH_MODEL,
    SPEECH_PROFILE,
    plan_speech,
    speech_launch,
)
from hymt_chat.sidecar.supervisor import Supervisor
from hymt_chat.sidecar.vllm_flags import installed_vllm
from hymt_chat.speech.audio import RATE, to_wav
from hymt_chat.speech.errors import NoSpeechError, SpeechUnavailableError, UnheardLanguageError
from hymt_chat.speech.recognizer import RemoteRecognizer
from hymt_chat.speech.service import Speech
from tests.support.ports import free_port
from tests.support.up_stack import wait_for
from tests.support.whisper_double import Heard, WhisperDouble, stand_in_vllm

ROOT = Path(__file__).resolve().parent.parent
ENTRY = [sys.executable, "-m", "hymt_chat.cli.main"]


def _samples(secs: float = 1.5) -> np.ndarray:
    t = np.arange(int(RATE * secs), dtype=np.float32) / RATE
    return (0.2 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def _split(line: str) -> tuple[dict[str, str], list[str]]:
    tokens = shlex.split(line)
    env = {}
    while "=" in tokens[0] and not tokens[0].startswith("/"):
        k, v = tokens.pop(0).split("=", 1)
        env[k] = v
    return env, tokens


def _until(condition, what: str) -> None:
    wait_for(condition, 60, what, every=0.1)  # a safety net, not a speed bound


# --- the command line --------------------------------------------------------------------------

@pytest.mark.parametrize("key", [None, "sekret-speech-key"])
def test_dry_run_prints_the_whisper_command_with_its_profile_and_no_key_in_argv(key):
    env = {**os.environ, "HYMT_SPEECH_API_KEY": key or "EMPTY"}
    result = subprocess.run([*ENTRY, "serve-speech", "--port", "8123", "--dry-run"],
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    [line] = result.stdout.strip().splitlines()
    line_env, argv = _split(line)
    assert argv[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    flags = dict(parse_flags(argv[3:]))
    for flag, value in SPEECH_PROFILE.flags:
        assert flags[flag] == value, flag
    assert flags["--model"] == DEFAULT_SPEECH_MODEL
    assert flags["--served-model-name"] == "whisper"  # the app's name when none is set
    assert flags["--port"] == "8123" and flags["--host"] == "127.0.0.1"
    assert "--api-key" not in flags and (key is None or key not in argv)
    assert line_env == ({"VLLM_API_KEY": key} if key else {})


def test_dry_run_takes_the_model_host_and_default_port():
    result = subprocess.run([*ENTRY, "serve-speech", "--model", "openai/whisper-small",
                             "--host", "0.0.0.0", "--dry-run"],
                            capture_output=True, text=True, timeout=60)
    flags = dict(parse_flags(_split(result.stdout)[1][3:]))
    assert (flags["--model"], flags["--host"], flags["--port"]) == (
        "openai/whisper-small", "0.0.0.0", "8011")


@pytest.mark.slow  # imports vLLM: a minute and more on a busy CPU
@pytest.mark.skipif(not installed_vllm(Settings().vllm_python),
                    reason="no vLLM in HYMT_VLLM_PYTHON's environment (make setup)")
def test_the_installed_vllms_own_parser_reads_the_profile_as_meant():
    argv = speech_launch(python="py", api_key="k").argv[3:]
    out = subprocess.run([str(Settings().vllm_python), str(ROOT / "tests/support/vllm_args.py")],
                         input=json.dumps([argv]), capture_output=True, text=True, timeout=600,
                         check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    [result] = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["ok"], result
    values = result["values"]
    assert (values["max_model_len"], values["gpu_memory_utilization"],
            values["max_num_seqs"]) == (448, 0.08, 16)
    assert values["served_model_name"] in ("whisper", ["whisper"])


def test_what_cannot_start_is_refused_before_anything_starts(tmp_path):
    missing = Settings(vllm_python=tmp_path / "nope" / "python", cache_dir=tmp_path)
    with pytest.raises(SidecarError, match="vLLM environment is missing"):
        plan_speech(missing)
    settings = Settings(vllm_python=Path(sys.executable), cache_dir=tmp_path)
    with pytest.raises(SidecarError, match="does not exist"):
        plan_speech(settings, model=str(tmp_path / "absent"), port=free_port())
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(SidecarError, match=f"Port {port} on 127.0.0.1 is already in use"):
            plan_speech(settings, port=port)


# --- supervision -------------------------------------------------------------------------------

def _servers(folder: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in folder.glob("server-*"))


async def test_the_supervisor_runs_restarts_and_stops_the_speech_server(tmp_path):
    port = free_port()
    spec = speech_launch(python=sys.executable, port=port, api_key="k")
    spec = dataclasses.replace(spec, env={**spec.env, **stand_in_vllm(tmp_path)})
    supervisor = Supervisor(spec, health_url=f"http://127.0.0.1:{port}/health",
                            log_path=tmp_path / "whisper.log", max_backoff=1.0)
    recognizer = RemoteRecognizer(f"http://127.0.0.1:{port}/v1", "whisper", "k")
    supervisor.start(timeout=60)
    try:
        [first] = _servers(tmp_path)
        argv = json.loads((tmp_path / f"server-{first}").read_text())
        assert argv == flags_to_args(parse_flags(spec.argv[3:]))  # the launch's own flags
        assert (await recognizer.transcribe(_samples())).language == "fr"
        os.kill(first, signal.SIGKILL)
        _until(lambda: supervisor.restarts == 1 and supervisor.state == "ready",
               "the supervisor restarts the killed server")
        [_, second] = _servers(tmp_path)
        assert (await recognizer.transcribe(_samples())).text == "Bonjour tout le monde."
    finally:
        supervisor.stop()
    _until(lambda: not Path(f"/proc/{second}").exists(), "stop() ends the server")


def test_serve_speech_prints_the_apps_settings_restarts_and_stops_on_sigterm(tmp_path):
    port = free_port()
    env = {**os.environ, **stand_in_vllm(tmp_path), "HYMT_VLLM_PYTHON": sys.executable,
           "HYMT_CACHE_DIR": str(tmp_path / "cache"), "HYMT_SPEECH_API_KEY": "EMPTY"}
    cli = subprocess.Popen([*ENTRY, "serve-speech", "--port", str(port)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert cli.stdout is not None
        said = [cli.stdout.readline().strip() for _ in range(2)]
        assert said == [f"HYMT_SPEECH_URL=http://127.0.0.1:{port}/v1",
                        "HYMT_SPEECH_SERVED_MODEL=whisper"]
        [first] = _servers(tmp_path)
        log = tmp_path / "cache" / "logs" / f"whisper-{port}.log"
        assert "starting vLLM (Whisper)" in log.read_text()
        os.kill(first, signal.SIGKILL)
        _until(lambda: len(_servers(tmp_path)) == 2 and "vLLM (Whisper) ready" in
               log.read_text().split("restarting it")[-1], "serve-speech restarts the server")
        cli.send_signal(signal.SIGTERM)
        assert cli.wait(timeout=30) == 0
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    stderr = cli.stderr.read() if cli.stderr else ""
    assert "restarts so far: 1" in stderr and "stopping the speech server" in stderr, stderr
    second = _servers(tmp_path)[-1]
    _until(lambda: not Path(f"/proc/{second}").exists(), "SIGTERM ends the server")


# --- the app's recogniser against vLLM's answer ------------------------------------------------

async def test_the_transcript_in_our_language_from_the_model_and_wav_it_was_sent():
    samples = _samples()
    with WhisperDouble() as double:
        heard = await RemoteRecognizer(double.base_url, "whisper").transcribe(samples)
    assert heard.text == "Bonjour tout le monde."  # vLLM's text keeps Whisper's leading space
    assert heard.language == "fr" and heard.seconds == pytest.approx(1.5)
    [request] = double.received
    assert request.fields["model"] == "whisper"
    assert request.fields["response_format"] == "verbose_json"
    assert "language" not in request.fields  # no hint: the model detects it
    assert (request.filename, request.content_type) == ("speech.wav", "audio/wav")
    assert request.audio == to_wav(samples)
    with wave.open(BytesIO(request.audio)) as wav:
        assert (wav.getnchannels(), wav.getframerate()) == (1, RATE)


async def test_a_hint_is_sent_as_whispers_code_and_kept_as_ours():
    with WhisperDouble(Heard((" 你好。",), "zh")) as double:
        recognizer = RemoteRecognizer(double.base_url, "whisper")
        heard = await recognizer.transcribe(_samples(), hint="zh-Hant")
        german = await recognizer.transcribe(_samples(), hint="de")
    assert [r.fields.get("language") for r in double.received] == ["zh", "de"]
    assert (heard.language, heard.probability, german.language) == ("zh-Hant", 1.0, "de")


async def test_several_segments_make_one_transcript():
    with WhisperDouble(Heard((" Guten Morgen.", " Wie geht es?"), "de")) as double:
        heard = await RemoteRecognizer(double.base_url, "whisper").transcribe(_samples())
    assert (heard.text, heard.language) == ("Guten Morgen. Wie geht es?", "de")


async def test_a_language_outside_the_38_is_refused():
    with WhisperDouble(Heard((" Habari ya asubuhi.",), "sw")) as double:
        with pytest.raises(UnheardLanguageError):
            await RemoteRecognizer(double.base_url, "whisper").transcribe(_samples())


async def test_nothing_heard_is_no_speech():
    with WhisperDouble(Heard((), "en")) as double:
        with pytest.raises(NoSpeechError):
            await RemoteRecognizer(double.base_url, "whisper").transcribe(_samples())


async def test_a_server_down_a_wrong_name_or_key_is_speech_unavailable():
    with pytest.raises(SpeechUnavailableError):
        await RemoteRecognizer(f"http://127.0.0.1:{free_port()}/v1", "whisper").transcribe(
            _samples())
    with WhisperDouble(api_key="k") as double:
        with pytest.raises(SpeechUnavailableError, match="does not exist"):
            await RemoteRecognizer(double.base_url, "whisper-x", "k").transcribe(_samples())
        with pytest.raises(SpeechUnavailableError, match="401"):
            await RemoteRecognizer(double.base_url, "whisper", "wrong").transcribe(_samples())
        assert (await RemoteRecognizer(double.base_url, "whisper", "k").transcribe(
            _samples())).language == "fr"
    assert double.received[-1].authorization == "Bearer k"


async def test_speech_with_a_speech_url_hears_through_the_server(tmp_path):
    with WhisperDouble(Heard((" Good morning.",), "en"), served_name="whisper-turbo") as double:
        speech = Speech(Settings(speech_url=double.base_url, speech_served_model="whisper-turbo",
                                 cache_dir=tmp_path))
        assert isinstance(speech.recognizer, RemoteRecognizer)
        heard = await speech.hear(_samples())
        await speech.aclose()
    assert (heard.text, heard.language) == ("Good morning.", "en")
    assert double.received[0].fields["model"] == "whisper-turbo"
