"""The kiosk's counter mode: one screen shared by two people across a counter, each side with
its own language. What one side writes is translated into the other side's language.

Like the kiosk, nothing is stored: a :class:`Counter` lives as long as its page's connection
and the page wipes itself after the kiosk's idle time; the translation memory is read, not
written (the kiosk's rule, :func:`~hymt_chat.modes.kiosk.kiosk_memory`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

from hymt_chat.engine.translator import Translator
from hymt_chat.errors import HymtError, InputError, RateLimitedError, short_reason
from hymt_chat.lang.languages import find_language
from hymt_chat.lang.names import language_name
from hymt_chat.modes.cost import Text, priced
from hymt_chat.modes.kiosk import kiosk_memory
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.warnings import warning_lines
from hymt_chat.service.ratelimit import Cost

__all__ = ["Counter", "Side"]

Side = Literal["a", "b"]
_OTHER: dict[Side, Side] = {"a": "b", "b": "a"}


class Counter:
    """Two sides, two languages, one translator."""

    def __init__(self, translator: Translator, *, user: str, a: str = "en", b: str = "zh",
                 charge: Callable[[Cost], Awaitable[None]] | None = None) -> None:
        self.translator = translator
        self.user = user  # the fair queue's key: this screen
        self.languages: dict[Side, str] = {"a": a, "b": b}
        self.charge = charge  # raises RateLimitedError past the allowance (the chat's)

    def set_language(self, side: Side, code: object) -> str:
        """A side picked its language (a value from the browser: checked, else kept)."""
        found = find_language(code) if isinstance(code, str) else None
        if found is not None:
            self.languages[side] = found.code
        return self.languages[side]

    async def say(self, side: Side, text: str) -> dict[str, Any]:
        """One side's words, translated for the other: the event both halves of the page show.
        A refusal (empty, too long, over the limit) is an ``error`` event for the writer."""
        source, target = self.languages[side], self.languages[_OTHER[side]]
        try:
            if self.charge is not None:
                await self.charge(await priced([Text(text)], self.translator.settings))
            with kiosk_memory(self.translator.settings):
                result = await self.translator.translate(text, target, source, user=self.user)
        except (InputError, RateLimitedError) as err:  # refused: nothing was sent
            key = "rate_limited" if isinstance(err, RateLimitedError) else "refused"
            return {"type": "error", "side": side, "key": key, "text": str(err)}
        except HymtError as err:  # delivered all the same, untranslated, with a note
            return self._message(side, text.strip(), None, source, target,
                                 f"Not translated ({short_reason(err)}): this is the original.")
        # Both sides chose the same language: the text is shown to the other as it is. What the
        # checks found stays beside the translation (flagged, never hidden), in the language of
        # the side that reads it.
        found = " ".join(warning_lines(result.warnings, PageText.of(target))) or None
        return self._message(side, text.strip(), result.text, source, target, found)

    @staticmethod
    def _message(side: Side, original: str, translation: str | None, source: str, target: str,
                 note: str | None) -> dict[str, Any]:
        return {"type": "message", "side": side, "original": original,
                "translation": translation, "source": source, "target": target,
                "source_name": language_name(source), "target_name": language_name(target),
                "note": note}
