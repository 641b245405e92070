"""Real speech for the voice tests: the Whisper base model from its PyPI packages (joined once
per machine under the cache, loaded once per test process), and sentences spoken by Debian's
espeak-ng, with the silence around them that a person leaves."""

from __future__ import annotations

import functools
import subprocess
import wave
from pathlib import Path

import numpy as np

from hymt_chat.settings import Settings
from hymt_chat.speech.model_files import fetch

__all__ = ["microphone_args", "model_dir", "spoken_wav", "with_silence"]


@functools.cache
def model_dir() -> Path:
    """Whisper base, multilingual (the test extra installs its two halves from PyPI)."""
    return fetch("base", Settings().cache_dir)


def spoken_wav(text: str, voice: str, dest: Path, *, before: float = 0.5,
               after: float = 1.5, rate: int = 48_000) -> Path:
    """*text* read by espeak-ng's *voice* into *dest*: 16-bit mono at *rate* (what Chromium's
    fake microphone takes), with *before* and *after* seconds of silence."""
    raw = dest.with_suffix(".espeak.wav")
    subprocess.run(["espeak-ng", "-v", voice, "-w", str(raw)], input=text.encode(), check=True,
                   capture_output=True, timeout=60)
    with wave.open(str(raw)) as read:
        source_rate = read.getframerate()
        pcm = np.frombuffer(read.readframes(read.getnframes()), dtype="<i2")
    raw.unlink()
    samples = pcm.astype(np.float64)
    count = round(len(samples) * rate / source_rate)
    resampled = np.interp(np.linspace(0, len(samples) - 1, count), np.arange(len(samples)),
                          samples)
    return with_silence(resampled.astype("<i2"), rate, dest, before=before, after=after)


def with_silence(pcm: np.ndarray, rate: int, dest: Path, *, before: float,
                 after: float) -> Path:
    quiet = np.zeros(int(rate * before), dtype="<i2"), np.zeros(int(rate * after), dtype="<i2")
    with wave.open(str(dest), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(np.concatenate([quiet[0], pcm, quiet[1]]).astype("<i2").tobytes())
    return dest


def microphone_args(wav: Path) -> list[str]:
    """Chromium's flags for a fake microphone that plays *wav* (looped) and is allowed without
    asking (to add to tests.support.browser.CHROMIUM_ARGS at launch)."""
    return ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-audio-capture={wav}"]
