"""Speech to text: Whisper, in-process on the CPU (faster-whisper) or on a vLLM server that
serves a Whisper model (its OpenAI-compatible ``/v1/audio/transcriptions``, reached through
the official ``openai`` client, as the translation model is).

Both answer a :class:`Transcript` whose language is one of the 38, or raise a sentence the
page can say: silence, noise, unclear speech, a language outside the 38.
"""

from __future__ import annotations

import asyncio
import logging
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from hymt_chat.lang.languages import find_language
from hymt_chat.speech.audio import Samples, seconds, to_wav
from hymt_chat.speech.errors import (
    NoSpeechError,
    SpeechUnavailableError,
    UnclearSpeechError,
    UnheardLanguageError,
)
from hymt_chat.speech.model_files import fetch_command, model_folder

__all__ = ["EmbeddedRecognizer", "Recognizer", "RemoteRecognizer", "Transcript", "our_language"]

log = logging.getLogger("hymt_chat.speech")
# Below this average log-probability per token the words are guesses: Whisper's own -1.0 only
# asks for another decoding at a higher temperature (espeak's French comes out near -1.1 and
# mostly right); no_speech_prob above 0.6 is its own silence threshold.
_UNCLEAR_LOGPROB = -1.5
_NO_SPEECH = 0.6


@dataclass(frozen=True, slots=True)
class Transcript:
    text: str
    language: str  # one of the 38 (hymt_chat.lang.languages code)
    probability: float  # of the language, as the model detected it (1.0 when given)
    seconds: float  # of speech heard


class Recognizer(Protocol):
    name: str

    async def transcribe(self, samples: Samples, hint: str | None = None) -> Transcript: ...

    def load(self) -> None:
        """Make the model ready (or raise SpeechUnavailableError with its sentence)."""

    async def aclose(self) -> None: ...


def our_language(code: str) -> str:
    """Whisper's language (a code, or a name in vLLM's verbose answer) as one of the 38."""
    found = find_language(code)
    if found is None:
        raise UnheardLanguageError(f"speech in a language outside the 38 ({code})").saying(
            "voice_language")
    return found.code


def _whisper_code(code: str | None) -> str | None:
    """Our code as Whisper's (zh-Hant is Chinese to it; it has no Uyghur)."""
    if code is None:
        return None
    base = {"zh-Hant": "zh"}.get(code, code)
    return None if base in {"ug"} else base


class EmbeddedRecognizer:
    """faster-whisper in this process: one model, loaded once, used by one thread at a time
    (CTranslate2 spreads one call over the cores; two at once only share them)."""

    def __init__(self, model: str, cache_dir: Path, *, threads: int = 0) -> None:
        self.name = model
        self._cache_dir = cache_dir
        self._threads = threads or (os.cpu_count() or 2)
        self._model: Any = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="whisper")

    def load(self) -> None:
        if self._model is not None:
            return
        folder = model_folder(self.name, self._cache_dir)
        if folder is None:
            raise SpeechUnavailableError(
                f"the speech model '{self.name}' is not on this machine; fetch it with: "
                f"{fetch_command(self.name)}")
        try:
            from faster_whisper import WhisperModel

            self._model = WhisperModel(str(folder), device="cpu", compute_type="int8",
                                       cpu_threads=self._threads)
        except Exception as err:  # a corrupt or foreign folder: say so once, keep typing
            raise SpeechUnavailableError(
                f"the speech model in {folder} could not be loaded ({err}); fetch it again "
                f"with: {fetch_command(self.name)}") from err
        log.info("speech model %s loaded from %s", self.name, folder)

    def _run(self, samples: Samples, hint: str | None) -> Transcript:
        self.load()
        language = _whisper_code(hint)
        if language is not None and self._model.hf_tokenizer.token_to_id(
                f"<|{language}|>") is None:  # Cantonese before large-v3: heard as Chinese
            language = "zh" if language == "yue" else None
        segments, info = self._model.transcribe(
            samples, language=language, beam_size=5, vad_filter=True,
            condition_on_previous_text=False)
        kept = list(segments)
        heard = info.duration_after_vad if info.duration_after_vad is not None else 0.0
        if not kept or heard <= 0:
            raise NoSpeechError("no speech was heard").saying("voice_no_speech")
        words = [s for s in kept if s.no_speech_prob < _NO_SPEECH]
        text = " ".join(s.text.strip() for s in words).strip()
        if not text:
            raise NoSpeechError("no speech was heard").saying("voice_no_speech")
        logprob = sum(s.avg_logprob for s in words) / len(words)
        if logprob < _UNCLEAR_LOGPROB:
            raise UnclearSpeechError(f"speech too unclear (avg log-probability {logprob:.2f})"
                                     ).saying("voice_unclear")
        language = hint if hint is not None else self._language(info)
        return Transcript(text, language, 1.0 if hint else float(info.language_probability),
                          float(heard))

    @staticmethod
    def _language(info: Any) -> str:
        """The detected language, if it is one of the 38 and more likely than all the others
        together (a Swedish sentence came out as English at 0.30, Swedish and Norwegian close
        behind: then it is not one of ours, whatever the top guess)."""
        code = our_language(info.language)
        outside = sum(p for lang, p in info.all_language_probs or ()
                      if find_language(lang) is None)
        if outside > info.language_probability:
            raise UnheardLanguageError(
                f"speech more likely outside the 38 ({outside:.2f}) than {code} "
                f"({info.language_probability:.2f})").saying("voice_language")
        return code

    async def transcribe(self, samples: Samples, hint: str | None = None) -> Transcript:
        return await asyncio.get_running_loop().run_in_executor(
            self._pool, self._run, samples, hint)

    async def aclose(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._model = None


class RemoteRecognizer:
    """A Whisper model on a vLLM server (``vllm serve openai/whisper-large-v3-turbo``)."""

    def __init__(self, base_url: str, model: str, api_key: str = "EMPTY",
                 timeout: float = 60.0) -> None:
        from openai import AsyncOpenAI

        self.name = model
        self._client = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout,
                                   max_retries=0)

    def load(self) -> None:
        """Nothing to load here: the server holds the model (its health is the sidecar's)."""

    async def transcribe(self, samples: Samples, hint: str | None = None) -> Transcript:
        from openai import OpenAIError

        if seconds(samples) <= 0:
            raise NoSpeechError("no speech was heard").saying("voice_no_speech")
        kwargs: dict[str, Any] = {}
        if (code := _whisper_code(hint)) is not None:
            kwargs["language"] = code
        try:
            answer = await self._client.audio.transcriptions.create(
                model=self.name, file=("speech.wav", to_wav(samples), "audio/wav"),
                response_format="verbose_json", **kwargs)
        except OpenAIError as err:
            raise SpeechUnavailableError(f"the speech server failed: {err}").saying(
                "voice_unavailable") from err
        # vLLM joins its segments with a space and each keeps Whisper's own leading one.
        text = " ".join((answer.text or "").split())
        if not text:
            raise NoSpeechError("no speech was heard").saying("voice_no_speech")
        language = hint if hint is not None else our_language(str(answer.language or ""))
        return Transcript(text, language, 1.0, float(answer.duration or seconds(samples)))

    async def aclose(self) -> None:
        await self._client.close()
