"""The app's voice, one per Runtime: the recogniser and the server's voices, with the limits
every way in shares (the chat's mic, a room guest's recording, the counter)."""

from __future__ import annotations

import asyncio
import logging

from hymt_chat.errors import HymtError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.speech_server import SPEECH_SERVED_NAME
from hymt_chat.speech.audio import RATE, Samples, decode
from hymt_chat.speech.errors import AudioTooLongError, SpeechUnavailableError
from hymt_chat.speech.listening import Utterances
from hymt_chat.speech.recognizer import (
    EmbeddedRecognizer,
    Recognizer,
    RemoteRecognizer,
    Transcript,
)
from hymt_chat.speech.voices import Sound, Voices

__all__ = ["Speech"]

log = logging.getLogger("hymt_chat.speech")
# Recordings waiting for the recogniser, app-wide: it hears one at a time, so a longer line is
# minutes of waiting for whoever is last; more are refused at once (voice is busy, type).
_WAITING_MAX = 8


class Speech:
    def __init__(self, settings: Settings, recognizer: Recognizer | None = None) -> None:
        self.settings = settings
        self.enabled = settings.speech
        self.recognizer: Recognizer = recognizer or (
            RemoteRecognizer(settings.speech_url,
                             settings.speech_served_model or SPEECH_SERVED_NAME,
                             settings.speech_api_key)
            if settings.speech_url else
            EmbeddedRecognizer(settings.speech_model, settings.cache_dir,
                               threads=settings.speech_threads))
        self.voices = Voices(settings.piper_voices)
        self.problem: str | None = None if self.enabled else "voice is turned off (HYMT_SPEECH)"
        self._loading: asyncio.Future[None] | None = None
        self._waiting = 0

    async def ready(self) -> str | None:
        """None when speech can be heard, else why not (said once per failure in the log)."""
        if self.problem is not None:
            return self.problem
        if self._loading is None:
            self._loading = asyncio.ensure_future(
                asyncio.get_running_loop().run_in_executor(None, self.recognizer.load))
        try:
            await asyncio.shield(self._loading)
        except SpeechUnavailableError as err:
            self.problem = str(err)
            log.warning("voice unavailable: %s", err)
        return self.problem

    def utterances(self, rate: int) -> Utterances:
        return Utterances(rate, pause=self.settings.speech_pause_seconds,
                          longest=self.settings.speech_utterance_seconds)

    async def hear(self, samples: Samples, hint: str | None = None) -> Transcript:
        """What was said: the transcript in one of the 38, or an InputError's sentence."""
        if len(samples) > self.settings.speech_max_seconds * RATE:
            raise AudioTooLongError.of(self.settings.speech_max_seconds)
        if (problem := await self.ready()) is not None:
            raise SpeechUnavailableError(problem).saying("voice_unavailable")
        if self._waiting >= _WAITING_MAX:
            raise SpeechUnavailableError("the recogniser is busy").saying("voice_unavailable")
        self._waiting += 1
        try:
            return await self.recognizer.transcribe(samples, hint)
        except HymtError as err:
            if err.said is None:  # a failure without a sentence of its own: the page's one
                err.saying("voice_unavailable")
            raise
        except Exception as err:  # the engine failed on this one: typing still works
            log.exception("the speech recogniser failed")
            raise SpeechUnavailableError(f"the speech recogniser failed: {err}").saying(
                "voice_unavailable") from err
        finally:
            self._waiting -= 1

    async def hear_file(self, data: bytes, hint: str | None = None) -> Transcript:
        """A whole recording (a room guest's, an upload) of any common format."""
        samples = await asyncio.get_running_loop().run_in_executor(
            None, lambda: decode(data, max_bytes=int(self.settings.speech_max_mb * 1_048_576),
                                 max_seconds=self.settings.speech_max_seconds))
        return await self.hear(samples, hint)

    def voice_for(self, code: str) -> str | None:
        return self.voices.voice_for(code) if self.enabled else None

    async def speak(self, text: str, code: str) -> Sound | None:
        return await self.voices.speak(text, code) if self.enabled else None

    async def aclose(self) -> None:
        await self.recognizer.aclose()
        self.voices.close()
