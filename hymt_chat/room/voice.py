"""A recording sent by a guest page, the desk's start page or a counter side, as the words said.

The page records one utterance (``voice.js``: it ends it itself after a pause) and sends it
whole, in base64, beside its typed messages: ``{"type": "voice", "audio": <base64>, "mime":
"audio/webm;codecs=opus"}``. What was said then goes the way typed text goes; a recording that
is refused is said on the page as one of the guest words ``voice_*`` (:func:`problem_key`), and
the conversation goes on.

Speech out: a received message's Listen button reads it in the browser's own voice of its
language, else asks the server by the message's id (``{"type": "speak", "ref": …}``); the
server reads only a message it sent there, one at a time per socket, and answers
``{"type": "sound", "ref": …, "audio": <base64 WAV>, "mime": "audio/wav"}`` (:func:`sound`).
"""

from __future__ import annotations

import base64
import binascii
import functools
from importlib import resources
from typing import Any

from hymt_chat.errors import HymtError, InputError
from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.speech.errors import (
    NoSpeechError,
    SpeechUnavailableError,
    UnclearSpeechError,
    UnheardLanguageError,
)
from hymt_chat.speech.recognizer import Transcript
from hymt_chat.speech.service import Speech

__all__ = ["LONGEST_RECORDING_SECONDS", "MAX_RECORDING_BYTES", "VOICE_FRAME_CHARS",
           "VoiceRefusedError", "hear_frame", "problem_key", "recording_limits", "script",
           "server_voices", "sound", "voice_on"]

# A minute of Opus is about 250 kB: 4 MiB leaves room for a browser that records AAC or a
# higher bitrate, and its base64 stays under the socket's frame cap (web.frame_cap, 8 MB), so an
# over-size recording is answered with a sentence, not a closed socket.
MAX_RECORDING_BYTES = 4 << 20
VOICE_FRAME_CHARS = (MAX_RECORDING_BYTES * 4) // 3 + 4
# A page stops recording after a minute: a longer turn is better said, and answered, in parts.
LONGEST_RECORDING_SECONDS = 60.0


class VoiceRefusedError(InputError):
    """A voice frame that is not a recording we take (no base64, or over the size)."""


def voice_on(speech: Speech | None) -> bool:
    """Whether a page shows its mic: voice is on and has not failed so far (its model loads at
    the first recording; a failure then is said once and the page hides the mic)."""
    return speech is not None and speech.enabled and speech.problem is None


def recording_limits(speech: Speech | None) -> dict[str, int]:
    """What a page records at most (its config's ``recording``): the server's caps
    (HYMT_SPEECH_MAX_MB, HYMT_SPEECH_MAX_SECONDS) within a socket's, so the page stops in time
    rather than sending a recording that would be refused."""
    limit_bytes, limit_seconds = MAX_RECORDING_BYTES, LONGEST_RECORDING_SECONDS
    if speech is not None:
        limit_bytes = min(limit_bytes, int(speech.settings.speech_max_mb * 1_048_576))
        limit_seconds = min(limit_seconds, speech.settings.speech_max_seconds)
    return {"max_bytes": limit_bytes, "longest_ms": int(limit_seconds * 1000)}


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


def server_voices(speech: Speech | None) -> list[str]:
    """The languages the server reads aloud: a page shows Listen for them even where the
    browser has no voice of its own."""
    if speech is None or not speech.enabled:
        return []
    return [lang.code for lang in LANGUAGES if speech.voice_for(lang.code) is not None]


async def sound(speech: Speech | None, text: str, code: str, ref: object) -> dict[str, Any]:
    """A message read aloud, as the frame that carries it; an ``error`` frame (with the
    ``ref``) where no server voice reads *code* or the voice failed: the text stays on screen."""
    spoken = await speech.speak(text, code) if speech is not None else None
    if spoken is None:
        return {"type": "error", "key": "listen_unavailable", "ref": ref,
                "text": f"no server voice reads {code!r} now"}
    return {"type": "sound", "ref": ref, "mime": "audio/wav",
            "audio": base64.b64encode(spoken.wav).decode("ascii")}


@functools.cache
def script() -> str:
    """The pages' recorder (``/room/voice.js``)."""
    return resources.files("hymt_chat.room").joinpath("voice.js").read_text("utf-8")
