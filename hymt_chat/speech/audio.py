"""Audio in, as the recogniser needs it: mono float32 samples at 16 kHz.

Whatever a browser or a phone sends (WebM/Opus, Ogg, MP4/AAC, WAV) is decoded by PyAV, the
FFmpeg binding that faster-whisper itself decodes with; raw 16-bit PCM from Chainlit's mic is
read directly. Limits are checked before the expensive step: bytes before decoding, seconds
while decoding, so a 100 MB upload or a ten-minute monologue costs nothing to refuse.
"""

from __future__ import annotations

import io
from typing import Any

import av
import numpy as np
import numpy.typing as npt

from hymt_chat.errors import HymtError
from hymt_chat.speech.errors import AudioTooBigError, AudioTooLongError, BadAudioError

__all__ = ["RATE", "Samples", "decode", "from_pcm16", "seconds", "to_wav"]

RATE = 16_000
Samples = npt.NDArray[np.float32]


def seconds(samples: Samples) -> float:
    return len(samples) / RATE


def from_pcm16(data: bytes, rate: int) -> Samples:
    """Little-endian 16-bit mono PCM at *rate* Hz (Chainlit's mic stream) at 16 kHz."""
    pcm = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2").astype(np.float32) / 32768.0
    return resample(pcm, rate)


def resample(samples: npt.NDArray[np.float32], rate: int) -> Samples:
    """Linear interpolation: enough for speech into Whisper, whose features stop at 8 kHz."""
    if rate == RATE or len(samples) == 0:
        return samples.astype(np.float32, copy=False)
    count = round(len(samples) * RATE / rate)
    positions = np.linspace(0, len(samples) - 1, count, dtype=np.float64)
    return np.interp(positions, np.arange(len(samples)), samples).astype(np.float32)


def decode(data: bytes, *, max_bytes: int, max_seconds: float) -> Samples:
    """A recording of any common container and codec, mixed to mono at 16 kHz."""
    if len(data) > max_bytes:
        raise AudioTooBigError.of(len(data), max_bytes)
    if not data:
        raise BadAudioError("the recording is empty").saying("voice_bad_audio")
    resampler = av.AudioResampler(format="s16", layout="mono", rate=RATE)
    parts: list[npt.NDArray[Any]] = []
    count = 0
    limit = int(max_seconds * RATE)
    try:
        with av.open(io.BytesIO(data), mode="r", metadata_errors="ignore") as container:
            if not container.streams.audio:
                raise BadAudioError("the file has no audio stream").saying("voice_bad_audio")
            for frame in container.decode(audio=0):
                for out in resampler.resample(frame):
                    block = out.to_ndarray().reshape(-1)
                    count += len(block)
                    if count > limit:
                        raise AudioTooLongError.of(max_seconds)
                    parts.append(block)
            for out in resampler.resample(None):
                parts.append(out.to_ndarray().reshape(-1))
    except HymtError:
        raise
    except (av.error.FFmpegError, ValueError, IndexError, EOFError) as err:
        raise BadAudioError(f"the recording could not be decoded: {err}").saying(
            "voice_bad_audio") from err
    if not parts:
        raise BadAudioError("the recording holds no sound").saying("voice_bad_audio")
    return (np.concatenate(parts).astype(np.float32) / 32768.0).astype(np.float32)


def to_wav(samples: Samples, rate: int = RATE) -> bytes:
    """16-bit mono WAV bytes (for a recogniser reached over HTTP)."""
    import wave

    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes()
    buf = io.BytesIO()
    with wave.open(buf, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(pcm)
    return buf.getvalue()
