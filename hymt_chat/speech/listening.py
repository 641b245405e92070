"""A live microphone's stream cut into utterances: a voice activity detector on the sound's
energy ends each one after a pause, so a person talks and the page answers without a button.

The detector follows the room's noise floor (the quietest recent frames), so a fan or a street
behind a kiosk is not taken for a voice; Whisper's own VAD (Silero) then drops what is left of
noise inside an utterance. An utterance that runs past its limit is cut there: a monologue is
transcribed piece by piece, not refused.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from hymt_chat.speech.audio import RATE, Samples, from_pcm16

__all__ = ["Utterances"]

_FRAME = RATE // 50  # 20 ms
_ABOVE_FLOOR_DB = 12.0  # a voice stands this far over the noise floor
_QUIETEST_DB = -50.0  # and over this, whatever the floor
_FLOOR_FRAMES = 250  # the floor: the quietest frame of the last five seconds
_MIN_SPEECH = 0.25  # seconds of voice that make an utterance (a cough or a click does not)
_LEAD = 0.3  # seconds kept before the voice began (its first consonant)


def _db(frame: Samples) -> float:
    power = float(np.mean(frame.astype(np.float64) ** 2))
    return 10.0 * np.log10(power) if power > 1e-12 else -120.0


class Utterances:
    """Feed 16-bit PCM chunks; take back each utterance (16 kHz samples) when it ends."""

    def __init__(self, rate: int, *, pause: float = 0.8, longest: float = 30.0) -> None:
        self.rate = rate
        self._pause_frames = int(pause * 50)
        self._longest = int(longest * RATE)
        self._pending = np.zeros(0, dtype=np.float32)
        self._levels: deque[float] = deque(maxlen=_FLOOR_FRAMES)
        self._lead: deque[Samples] = deque(maxlen=int(_LEAD * 50))
        self._current: list[Samples] = []
        self._voiced = 0
        self._quiet = 0
        self.heard_any = False  # any voice at all since the start (for "nothing was heard")

    def _is_voice(self, level: float) -> bool:
        floor = min(self._levels) if self._levels else -120.0
        return level > _QUIETEST_DB and level > floor + _ABOVE_FLOOR_DB

    def feed(self, pcm16: bytes) -> list[Samples]:
        """The utterances that ended within this chunk (usually none)."""
        samples = np.concatenate([self._pending, from_pcm16(pcm16, self.rate)])
        whole = len(samples) // _FRAME * _FRAME
        self._pending = samples[whole:]
        done: list[Samples] = []
        for start in range(0, whole, _FRAME):
            frame = samples[start:start + _FRAME]
            level = _db(frame)
            voice = self._is_voice(level)
            self._levels.append(level)
            if not self._current:
                if voice:
                    self._current = [*self._lead, frame]
                    self._voiced, self._quiet = 1, 0
                else:
                    self._lead.append(frame)
                continue
            self._current.append(frame)
            self._voiced += voice
            self._quiet = 0 if voice else self._quiet + 1
            ended = (self._quiet >= self._pause_frames
                     or len(self._current) * _FRAME >= self._longest)
            if ended and (taken := self._take()) is not None:
                done.append(taken)
        return done

    def _take(self) -> Samples | None:
        current, voiced = self._current, self._voiced
        self._current, self._voiced, self._quiet = [], 0, 0
        self._lead.clear()
        if voiced < _MIN_SPEECH * 50:
            return None
        self.heard_any = True
        return np.concatenate(current)

    def flush(self) -> Samples | None:
        """The utterance under way when the mic stops."""
        return self._take() if self._current else None
