"""A recording sent by a guest page, the desk's start page or a counter side, as the words said.

The page records one utterance (``voice.js``: it ends it itself after a pause) and sends it
whole, in base64, beside its typed messages: ``{"type": "voice", "audio": <base64>, "mime":
"audio/webm;codecs=opus"}``. What was said then goes the way typed text goes; a recording that
is refused is said on the page as one of the guest words ``voice_*`` (:func:`problem_key`), and
the conversation goes on.
"""

from __future__ import annotations

import base64
import binascii
import functools
from importlib import resources
from typing import Any

from hymt_chat.errors import HymtError, InputError
from hymt_chat.speech.errors import (
    NoSpeechError,
    SpeechUnavailableError,
    UnclearSpeechError,
    UnheardLanguageError,
)
from hymt_chat.speech.recognizer import Transcript
from hymt_chat.speech.service import Speech

__all__ = ["MAX_RECORDING_BYTES", "VOICE_FRAME_CHARS", "VoiceRefusedError", "hear_frame",
           "problem_key", "script", "voice_on"]

# A minute of Opus is about 250 kB: 4 MiB leaves room for a browser that records AAC or a
# higher bitrate, and its base64 stays under the socket's frame cap (web.frame_cap, 8 MB), so an
# over-size recording is answered with a sentence, not a closed socket.
MAX_RECORDING_BYTES = 4 << 20
VOICE_FRAME_CHARS = (MAX_RECORDING_BYTES * 4) // 3 + 4


class VoiceRefusedError(InputError):
    """A voice frame that is not a recording we take (no base64, or over the size)."""


def voice_on(speech: Speech | None) -> bool:
    """Whether a page shows its mic: voice is on and has not failed so far (its model loads at
    the first recording; a failure then is said once and the page hides the mic)."""
    return speech is not None and speech.enabled and speech.problem is None


def problem_key(err: HymtError) -> str:
    """The guest word that says why a recording was not taken."""
    if isinstance(err, NoSpeechError):
        return "voice_no_speech"
    if isinstance(err, UnclearSpeechError):
        return "voice_unclear"
    if isinstance(err, UnheardLanguageError):
        return "voice_language"
    if isinstance(err, SpeechUnavailableError):
        return "voice_unavailable"
    return "voice_refused"  # not sound, too long, too large


async def hear_frame(speech: Speech | None, frame: dict[str, Any],
                     hint: str | None) -> Transcript:
    """What a voice frame's recording says (*hint*: the speaker's language, if known). Raises
    an InputError or SpeechUnavailableError, each with a :func:`problem_key`."""
    if speech is None or not speech.enabled:
        raise SpeechUnavailableError("voice is turned off (HYMT_SPEECH)")
    audio = frame.get("audio")
    if not isinstance(audio, str):
        raise VoiceRefusedError("Send a recording as its bytes in base64.")
    if len(audio) > VOICE_FRAME_CHARS:
        raise VoiceRefusedError(
            f"The recording is over {MAX_RECORDING_BYTES >> 20} MB: speak in shorter parts.")
    try:
        data = base64.b64decode(audio, validate=True)
    except (binascii.Error, ValueError):
        raise VoiceRefusedError("The recording is not base64.") from None
    return await speech.hear_file(data, hint)


@functools.cache
def script() -> str:
    """The pages' recorder (``/room/voice.js``)."""
    return resources.files("hymt_chat.room").joinpath("voice.js").read_text("utf-8")
