"""Why a recording was not turned into text, each said in the page's language."""

from __future__ import annotations

from typing import Self

from hymt_chat.errors import HymtError, InputError

__all__ = ["AudioTooBigError", "AudioTooLongError", "BadAudioError", "NoSpeechError",
           "SpeechUnavailableError", "UnclearSpeechError", "UnheardLanguageError"]


class BadAudioError(InputError):
    """Not audio, or a codec nobody can decode."""


class AudioTooBigError(InputError):
    @classmethod
    def of(cls, size: int, limit: int) -> Self:
        mb = round(size / 1_048_576, 1)
        return cls(f"the recording is {mb} MB; the limit is {limit // 1_048_576} MB").saying(
            "voice_too_big", size=mb, limit=limit // 1_048_576)


class AudioTooLongError(InputError):
    @classmethod
    def of(cls, limit: float) -> Self:
        return cls(f"the recording is longer than {limit:.0f} s").saying(
            "voice_too_long", limit=int(limit))


class NoSpeechError(InputError):
    """Silence, or only noise: nothing to transcribe."""


class UnclearSpeechError(InputError):
    """Speech-like sound the model could not make out with any confidence."""


class UnheardLanguageError(InputError):
    """Speech in a language that is not one of the 38."""


class SpeechUnavailableError(HymtError):
    """No recogniser (a model that is not there, an engine that crashed or is off)."""
