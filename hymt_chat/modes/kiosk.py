"""Kiosk mode, without the UI: idle reset, the big language buttons, what the kiosk says.

A kiosk is used by strangers, one after the other: large type, a few big buttons for the most
asked-for languages, the translation read aloud by the browser (``public/kiosk.js``), and a
fresh empty session after ``kiosk_idle_seconds`` without input. Nothing is stored: the
translation memory is read (what agents corrected, teams imported and other pages translated
answers at once) but nothing a visitor typed is written to it (:func:`kiosk_memory`), unless
the operator sets ``HYMT_MEMORY_KIOSK=write``.

The browser resets the page itself (kiosk.js clicks "New chat" after the idle time, with a
countdown). The server keeps its own :class:`IdleTimer` as a backstop — a tab left open with the
script blocked still forgets — with a little grace (:func:`server_grace`) so that normally the
browser's reset comes first. The marker the app attaches to kiosk messages
(:func:`marker_props`, rendered by ``public/elements/HymtKiosk.jsx``) is how kiosk.js knows it
is on a kiosk and what to read aloud. Nothing here imports Chainlit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hymt_chat.engine.recall import MemoryUse, memory_use
from hymt_chat.lang.endonyms import endonym
from hymt_chat.lang.languages import LANGUAGES, get_language
from hymt_chat.modes.page_text import PageText

if TYPE_CHECKING:
    from hymt_chat.settings import Settings

__all__ = [
    "KIOSK_LANGUAGES",
    "KIOSK_PROFILE",
    "MARKER_ELEMENT",
    "IdleTimer",
    "KioskButton",
    "kiosk_buttons",
    "kiosk_memory",
    "marker_props",
    "more_buttons",
    "server_grace",
    "speech_lang",
    "watch_idle",
    "with_chinese",
]

def kiosk_memory(settings: Settings) -> AbstractContextManager[MemoryUse]:
    """The scope of a kiosk's (or its counter's) translations: HYMT_MEMORY_KIOSK's read, write
    or off (read: answers from the memory, stores nothing a visitor typed)."""
    mode = settings.memory_kiosk
    return memory_use(read=mode != "off", write=mode == "write")


KIOSK_PROFILE = "Kiosk"
MARKER_ELEMENT = "HymtKiosk"  # public/elements/HymtKiosk.jsx
MORE = "more"

# The big buttons: the languages most asked for at a public desk (UN languages plus the most
# spoken others among the 38), each under its own name so a stranger finds theirs.
KIOSK_LANGUAGES: tuple[tuple[str, str], ...] = (
    ("en", "English"),
    ("zh", "中文"),
    ("es", "Español"),
    ("ar", "العربية"),
    ("fr", "Français"),
    ("ru", "Русский"),
    ("ja", "日本語"),
    ("ko", "한국어"),
    ("de", "Deutsch"),
    ("pt", "Português"),
)

# BCP-47 tags browsers' speech voices use, where the table code alone does not pick the right
# voice (Chinese variants by region, Filipino's voices are "fil-PH").
_SPEECH_TAGS = {"zh": "zh-CN", "zh-Hant": "zh-TW", "yue": "zh-HK", "tl": "fil-PH"}


def server_grace(idle_seconds: float) -> float:
    """Seconds the server waits beyond the idle time, so the browser's own reset (with its
    countdown) normally comes first: a quarter of the idle time, at most 15 s."""
    return min(15.0, idle_seconds / 4)


def speech_lang(code: str) -> str:
    """The BCP-47 tag to pick a speechSynthesis voice for a table language."""
    lang = get_language(code)
    return _SPEECH_TAGS.get(lang.code, lang.code)


@dataclass(frozen=True, slots=True)
class KioskButton:
    value: str  # a table code, or "more"
    label: str  # in its own language
    speech: str = ""  # BCP-47, empty for "more"


def kiosk_buttons(*, include_more: bool = True,
                  page: PageText | None = None) -> list[KioskButton]:
    """The big buttons of the kiosk, then "More languages" (:func:`with_chinese`)."""
    buttons = [KioskButton(code, label, speech_lang(code)) for code, label in KIOSK_LANGUAGES]
    if include_more:
        buttons.append(KioskButton(MORE, with_chinese(page or PageText(), "kiosk_more")))
    return buttons


def with_chinese(page: PageText, key: str) -> str:
    """A kiosk control's words in the page's language with Chinese beside them, for the
    stranger who reads neither ("Plus de langues · 更多语言"); a Chinese page's alone."""
    own = page[key]
    return own if page.language in ("zh", "zh-Hant") else f"{own} · {PageText.of('zh')[key]}"


def more_buttons() -> list[KioskButton]:
    """Every other language of the 38, each named in itself (as the big buttons are): a
    stranger finds their own, whatever the screen's language."""
    shown = {code for code, _ in KIOSK_LANGUAGES}
    return [KioskButton(lang.code, endonym(lang.code), speech_lang(lang.code))
            for lang in LANGUAGES if lang.code not in shown]


def marker_props(*, idle_seconds: float, text: str = "", target: str | None = None,
                 label: str = "Read aloud", still: str = "",
                 welcome: bool = False, spoken: bool = False) -> dict[str, object]:
    """Props of the kiosk marker element: kiosk.js switches the page to kiosk mode when it sees
    one, and offers "Read aloud" (*label*) for *text* in *target*'s voice when a text is given;
    *still* is its warning before the screen starts afresh, in the page's words (its
    ``{{seconds}}`` counted down by the script). A *welcome* marker tells the script that the
    screen is fresh: when the server's backstop wiped it first, the browser must not wipe it a
    second time under the next visitor's first tap. *spoken*: the answer comes with the
    server's reading of it (an audio element), which "Read aloud" plays again."""
    props: dict[str, object] = {"kiosk": True, "idle": int(idle_seconds)}
    if welcome:
        props["welcome"] = True
    if still:
        props["still"] = still
    if text and target:
        props.update(text=text, lang=speech_lang(target), label=label)
    if spoken:
        props["spoken"] = True
    return props


@dataclass(slots=True)
class IdleTimer:
    """When did someone last use this kiosk session, and is it time to start afresh?

    ``expired`` is true only when something happened since the last reset (an untouched
    welcome screen is never "reset" over and over) and the idle time has passed.
    """

    idle_seconds: float
    clock: Callable[[], float] = time.monotonic
    last_activity: float = field(init=False)
    dirty: bool = field(default=False, init=False)  # activity since the last reset

    def __post_init__(self) -> None:
        if self.idle_seconds <= 0:
            raise ValueError("idle_seconds must be positive")
        self.last_activity = self.clock()

    def touch(self, now: float | None = None) -> None:
        """Someone did something (a message, a button)."""
        self.last_activity = self.clock() if now is None else now
        self.dirty = True

    def remaining(self, now: float | None = None, grace: float = 0.0) -> float:
        """Seconds until the idle time (+ *grace*) is over; 0 once it is."""
        now = self.clock() if now is None else now
        return max(0.0, self.last_activity + self.idle_seconds + grace - now)

    def expired(self, now: float | None = None, grace: float = 0.0) -> bool:
        return self.dirty and self.remaining(now, grace) <= 0

    def reset(self, now: float | None = None) -> None:
        """The session was just wiped: nothing to forget until the next activity."""
        self.last_activity = self.clock() if now is None else now
        self.dirty = False


async def watch_idle(
    timer: IdleTimer,
    on_expire: Callable[[], Awaitable[None]],
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    grace: float = 0.0,
) -> None:
    """Call *on_expire* each time the session has been idle for the timer's period (+ *grace*).

    Runs until cancelled (the app cancels it when the chat ends). Sleeps exactly until the next
    possible expiry, so it costs nothing while a kiosk is busy or untouched. An *on_expire*
    that touches the timer postpones the reset (a visitor still waiting for an answer).
    """
    while True:
        wait = timer.remaining(grace=grace) if timer.dirty else timer.idle_seconds + grace
        await sleep(max(wait, 0.05))
        if timer.expired(grace=grace):
            await on_expire()
            if timer.expired(grace=grace):  # not postponed (touched) by on_expire
                timer.reset()
