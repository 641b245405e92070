"""Text to speech on the server, for browsers with no voice of their own (Debian's Chromium,
a kiosk's usual browser, has none): a Piper voice where one is installed for the language,
espeak-ng otherwise. The answer is WAV bytes, played by the page's audio element.
"""

from __future__ import annotations

import asyncio
import io
import logging
import shutil
import subprocess
import sys
import tempfile
import wave
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Sound", "Voices"]

log = logging.getLogger("hymt_chat.speech")
_MAX_CHARS = 2_000  # read aloud: a long answer is cut at a sentence near here
# Our codes as espeak-ng's voices where the names differ (Mandarin for both Chinese scripts).
_ESPEAK_NAMES = {"zh": "cmn", "zh-Hant": "cmn", "en": "en-us", "fr": "fr-fr", "pt": "pt-br",
                 "yue": "yue", "vi": "vi"}


@dataclass(frozen=True, slots=True)
class Sound:
    wav: bytes
    voice: str  # what spoke: "piper en_US-joe-medium" or "espeak-ng es"
    seconds: float

    @property
    def program(self) -> str:
        """The voice's program as a reader sees it named ("Piper", "espeak-ng"): the same in
        every language, unlike its file or voice code."""
        return "Piper" if self.voice.startswith("piper") else "espeak-ng"


def _wav_seconds(data: bytes) -> float:
    with wave.open(io.BytesIO(data)) as read:
        return float(read.getnframes()) / float(read.getframerate() or 1)


def _shortened(text: str) -> str:
    if len(text) <= _MAX_CHARS:
        return text
    cut = max(text.rfind(mark, 0, _MAX_CHARS) for mark in (". ", "。", "! ", "? ", "\n"))
    return text[: cut + 1 if cut > _MAX_CHARS // 2 else _MAX_CHARS]


class Voices:
    """Which voice speaks each of the 38, and the speaking (off the event loop)."""

    def __init__(self, piper_folder: Path | None, espeak: str | None = None) -> None:
        self._espeak = espeak if espeak is not None else shutil.which("espeak-ng")
        self._espeak_languages = self._list_espeak()
        self._piper = self._list_piper(piper_folder)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="voices")

    def _list_espeak(self) -> frozenset[str]:
        if self._espeak is None:
            return frozenset()
        try:
            listing = subprocess.run([self._espeak, "--voices"], capture_output=True,
                                     text=True, timeout=30, check=True).stdout
        except (OSError, subprocess.SubprocessError):
            log.warning("espeak-ng would not list its voices: no server voice from it")
            return frozenset()
        return frozenset(line.split()[1] for line in listing.splitlines()[1:]
                         if len(line.split()) > 1)

    @staticmethod
    def _list_piper(folder: Path | None) -> dict[str, Path]:
        """Piper voices by language: ``en_US-joe-medium.onnx`` speaks English."""
        if folder is None or not folder.is_dir():
            return {}
        found: dict[str, Path] = {}
        for model in sorted(folder.glob("*.onnx")):
            if not model.with_suffix(".onnx.json").is_file():
                continue
            base = model.name.split("-", 1)[0].split("_", 1)[0].lower()
            code = "zh" if base == "zh" else base
            found.setdefault(code, model)
        return found

    def voice_for(self, code: str) -> str | None:
        """The voice that reads *code*, or None: no server voice for that language."""
        if code in self._piper:
            return f"piper {self._piper[code].stem}"
        name = _ESPEAK_NAMES.get(code, code)
        if name in self._espeak_languages:
            return f"espeak-ng {name}"
        return None

    def _wav(self, code: str, text: str) -> bytes:
        """Each voice is its own program (Piper: GPL-3.0; espeak-ng), never linked into the
        app: the text on stdin (a stranger's, never on a command line), WAV to a file (its
        header is written last, which a pipe cannot take back)."""
        with tempfile.TemporaryDirectory(prefix="hymt-voice-") as folder:
            out = Path(folder) / "answer.wav"
            if code in self._piper:
                command = [sys.executable, "-m", "piper", "-m", str(self._piper[code]),
                           "-f", str(out)]
            else:
                assert self._espeak is not None
                command = [self._espeak, "-v", _ESPEAK_NAMES.get(code, code), "-w", str(out)]
            subprocess.run(command, input=text.encode(), capture_output=True, timeout=120,
                           check=True)
            return out.read_bytes()

    def _speak(self, text: str, code: str) -> Sound | None:
        voice = self.voice_for(code)
        if voice is None or not text.strip():
            return None
        text = _shortened(text)
        try:
            wav = self._wav(code, text)
            seconds = _wav_seconds(wav)
        except Exception:  # a voice that fails leaves the text on screen: log it, say nothing
            log.exception("the server voice %s failed", voice)
            return None
        return Sound(wav, voice, seconds)

    async def speak(self, text: str, code: str) -> Sound | None:
        """*text* read in the language *code*, or None where no voice reads it."""
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, self._speak, text, code)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
