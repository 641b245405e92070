"""Kiosk: the idle reset (server side, pure), the buttons and texts, and the browser assets."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hymt_chat.lang.languages import CODES
from hymt_chat.modes.kiosk import (
    KIOSK_LANGUAGES,
    MARKER_ELEMENT,
    IdleTimer,
    kiosk_buttons,
    marker_props,
    more_buttons,
    server_grace,
    speech_lang,
    watch_idle,
)
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.wording import WELCOME_LINES, welcome_markdown
from hymt_chat.modes.wording import escape_markdown as md
from hymt_chat.settings import Settings

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT / "public"
ROOM_VOICE = ROOT / "hymt_chat" / "room" / "voice.js"  # the browser voice rule of every page
# The kiosk script runs under Node (Debian's nodejs, which make setup installs): a missing
# node fails these tests instead of skipping them.
node = pytest.mark.usefixtures("node_installed")


@pytest.fixture
def node_installed() -> None:
    assert shutil.which("node"), "node is not installed: make setup installs Debian's nodejs"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- idle logic ----------------------------------------------------------------------------


def test_default_idle_time_is_two_minutes():
    assert Settings().kiosk_idle_seconds == 120


def test_idle_timer_expires_only_after_activity_and_the_idle_time():
    clock = Clock()
    timer = IdleTimer(120, clock)
    clock.now += 500
    assert not timer.expired()  # untouched welcome screen: nothing to forget
    timer.touch()
    clock.now += 119.9
    assert not timer.expired() and timer.remaining() == pytest.approx(0.1)
    timer.touch()  # another message: the clock starts again
    clock.now += 119
    assert not timer.expired()
    clock.now += 1
    assert timer.expired() and timer.remaining() == 0
    assert not timer.expired(grace=15) and timer.expired(clock.now + 15, grace=15)
    timer.reset()
    assert not timer.expired() and timer.remaining() == 120


def test_server_waits_a_little_longer_than_the_browser():
    assert server_grace(120) == 15 and server_grace(10) == 2.5


def test_idle_timer_accepts_explicit_times_and_refuses_nonsense():
    timer = IdleTimer(10, lambda: 0.0)
    timer.touch(now=5.0)
    assert not timer.expired(now=14.9) and timer.expired(now=15.0)
    with pytest.raises(ValueError):
        IdleTimer(0)


async def test_watch_idle_resets_once_per_idle_period_and_sleeps_until_the_deadline():
    clock = Clock()
    timer = IdleTimer(120, clock)
    resets: list[float] = []
    sleeps: list[float] = []

    async def on_expire() -> None:
        resets.append(clock.now)

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.now += seconds
        if len(sleeps) == 2:
            timer.touch(now=clock.now - 30)  # someone typed 30 s before this wake-up
        if len(sleeps) > 6:
            raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await watch_idle(timer, on_expire, sleep=sleep, grace=15)
    # untouched: whole periods; touched: exactly until idle + grace after the activity
    assert sleeps[:3] == [135, 135, 105]
    assert len(resets) == 1 and not timer.dirty
    assert all(s == 135 for s in sleeps[3:])  # nothing happened since: no more resets


async def test_watch_idle_lets_on_expire_postpone_the_reset():
    """An expiry that touches the timer (a translation still on its way) is not a reset: the
    timer stays dirty and the next wake-up is a whole idle time + grace after that touch."""
    clock = Clock()
    timer = IdleTimer(120, clock)
    timer.touch()
    calls: list[float] = []
    sleeps: list[float] = []

    async def on_expire() -> None:
        calls.append(clock.now)
        if len(calls) == 1:
            timer.touch()  # busy: postponed

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        clock.now += seconds
        if len(sleeps) > 3:
            raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        await watch_idle(timer, on_expire, sleep=sleep, grace=15)
    assert sleeps[:3] == [135, 135, 135]  # the postponed one waited a full period again
    assert calls == [1135, 1270] and not timer.dirty  # the second expiry was the reset


async def test_watch_idle_on_the_real_event_loop():
    timer = IdleTimer(0.2)
    done = asyncio.Event()

    async def on_expire() -> None:
        done.set()

    timer.touch()
    task = asyncio.create_task(watch_idle(timer, on_expire))
    try:
        await asyncio.wait_for(done.wait(), timeout=5)
    finally:
        task.cancel()
    assert not timer.dirty


# --- buttons and texts ---------------------------------------------------------------------


def test_big_buttons_are_a_handful_in_their_own_names_then_more():
    buttons = kiosk_buttons()
    assert 6 <= len(buttons) - 1 <= 12 and buttons[-1].value == "more"
    assert [b.value for b in buttons[:-1]] == [code for code, _ in KIOSK_LANGUAGES]
    assert all(b.value in CODES for b in buttons[:-1])
    labels = {b.value: b.label for b in buttons}
    assert labels["zh"] == "中文" and labels["ar"] == "العربية" and labels["es"] == "Español"
    assert kiosk_buttons(include_more=False) == buttons[:-1]


def test_more_lists_every_other_language_once():
    shown = {code for code, _ in KIOSK_LANGUAGES}
    more = [b.value for b in more_buttons()]
    assert sorted(more + sorted(shown)) == sorted(CODES) and len(set(more)) == len(more)
    labels = {b.value: b.label for b in more_buttons()}
    assert labels["th"] == "ไทย" and labels["uk"] == "Українська"  # in itself, no gloss


def test_every_language_has_a_speech_tag():
    tags = {code: speech_lang(code) for code in CODES}
    assert tags["zh"] == "zh-CN" and tags["zh-Hant"] == "zh-TW" and tags["yue"] == "zh-HK"
    assert tags["tl"] == "fil-PH" and tags["ja"] == "ja"
    assert all(re.fullmatch(r"[a-z]{2,3}(-[A-Za-z0-9]+)?", t) for t in tags.values())


def test_marker_props_carry_the_idle_time_and_what_to_read():
    assert marker_props(idle_seconds=120) == {"kiosk": True, "idle": 120}
    props = marker_props(idle_seconds=90.5, text="¿Dónde está?", target="es")
    assert props == {"kiosk": True, "idle": 90, "text": "¿Dónde está?", "lang": "es",
                     "label": "Read aloud"}
    assert json.loads(json.dumps(props)) == props  # travels as element props
    # The welcome says the screen is fresh (kiosk.js then restarts its own idle clock).
    assert marker_props(idle_seconds=120, welcome=True) == {"kiosk": True, "idle": 120,
                                                            "welcome": True}


def test_welcome_says_nothing_is_kept_and_when_it_resets():
    text = welcome_markdown(120)
    assert "Nothing is kept" in text and "2 minutes" in text and "欢迎" in text
    assert "after 1 minute without" in welcome_markdown(45)  # the singular, from the catalog
    french = welcome_markdown(45, PageText.of("fr"))
    assert "Bienvenue" in french and "1 minute" in french and "Welcome" not in french


def test_welcome_gives_each_language_a_line_of_its_own():
    """Not four languages run together in one paragraph: a list item each after the English."""
    paragraphs = welcome_markdown(120).split("\n\n")
    assert paragraphs[0].startswith(f"**{md('Welcome!')}**")
    assert paragraphs[1].splitlines() == [f"- {md(line)}" for line in WELCOME_LINES]
    assert len(WELCOME_LINES) == 3 and all(" · " not in line for line in WELCOME_LINES)


# --- browser assets ------------------------------------------------------------------------


@node
def test_kiosk_js_is_valid_javascript():
    out = subprocess.run(["node", "--check", str(PUBLIC / "kiosk.js")], capture_output=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr.decode()


def _node(script: str) -> object:
    code = f"const k = require({json.dumps(str(PUBLIC / 'kiosk.js'))});\n{script}"
    out = subprocess.run(["node", "-e", code], capture_output=True, timeout=60)
    assert out.returncode == 0, out.stderr.decode()
    return json.loads(out.stdout)


@node
def test_voice_is_picked_by_language_never_from_another_language():
    voices = [
        {"name": "US", "lang": "en-US", "localService": True, "default": True},
        {"name": "CN", "lang": "zh-CN", "localService": True},
        {"name": "TW", "lang": "zh_TW", "localService": False},
        {"name": "ES-net", "lang": "es-US", "localService": False},
        {"name": "ES", "lang": "es-ES", "localService": True},
        {"name": "PH", "lang": "fil-PH", "localService": True},
    ]
    got = _node(f"""
      const v = {json.dumps(voices)};
      const voice = require({json.dumps(str(ROOM_VOICE))});
      const name = t => (voice.pickVoice(v, t) || {{name: null}}).name;
      console.log(JSON.stringify([name("zh-TW"), name("zh-CN"), name("zh-HK"), name("es"),
        name("en-GB"), name("tl"), name("fil-PH"), name("ar"), name(""), voice.pickVoice([], "en")]));
    """)
    assert got == ["TW", "CN", "CN", "ES", "US", "PH", "PH", None, None, None]


@node
def test_long_text_is_spoken_in_sentence_sized_chunks():
    text = "Première phrase. " * 30 + "你好。" * 100 + "x" * 500
    chunks = _node(f"console.log(JSON.stringify(k.chunkText({json.dumps(text)}, 180)))")
    assert all(0 < len(c) <= 180 for c in chunks)
    assert "".join(chunks).replace(" ", "") == text.replace(" ", "")
    assert chunks[0].endswith("phrase.")  # cut after a sentence, not inside a word


@node
def test_browser_idle_clock_warns_then_expires_and_only_after_use():
    states = _node("""
      const c = new k.IdleClock(120000, 15000, 0);
      const s = [c.state(500000)];
      c.touch(1000);
      s.push(c.state(1000 + 100000), c.state(1000 + 106000), c.state(1000 + 120000));
      c.reset(200000);
      s.push(c.state(900000));
      console.log(JSON.stringify(s));
    """)
    assert states == ["idle", "active", "warning", "expired", "idle"]


@node
def test_browser_idle_clock_counts_a_pending_or_new_answer_as_use():
    """kiosk.js's tick feeds follow() whether Chainlit's Stop shows (a task runs) and how many
    answers the page has: either keeps a conversation awake; an untouched screen stays idle."""
    states = _node("""
      const c = new k.IdleClock(120000, 15000, 0);
      c.follow(500000, true, 1);  // the welcome's message and no visitor: nothing to keep
      const s = [c.state(500000)];
      c.touch(1000);
      c.follow(1000 + 110000, true, 1);  // still translating at 110 s: touched
      s.push(c.state(1000 + 125000));
      c.follow(1000 + 200000, false, 2);  // the answer arrived at 200 s: touched
      s.push(c.state(1000 + 300000), c.state(1000 + 320000));
      c.follow(1000 + 330000, false, 2);  // nothing new: the clock runs out
      s.push(c.state(1000 + 330000));
      console.log(JSON.stringify(s));
    """)
    assert states == ["idle", "active", "active", "expired", "expired"]


def test_marker_element_renders_the_hook_kiosk_js_looks_for():
    jsx = (PUBLIC / "elements" / f"{MARKER_ELEMENT}.jsx").read_text()
    assert 'className="hymt-kiosk-marker"' in jsx and "hidden" in jsx
    for attr in ("data-idle", "data-lang", "data-label"):
        assert attr in jsx
    js = (PUBLIC / "kiosk.js").read_text()
    # the marker's class differs from the body's, or the body would count as a marker
    assert '"span.hymt-kiosk-marker"' in js and "speechSynthesis" in js and "new-chat-button" in js


def test_kiosk_css_is_scoped_to_kiosk_pages():
    css = (PUBLIC / "kiosk.css").read_text()
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)
    selectors = [s.strip() for block in re.findall(r"([^{}]+)\{", css) for s in block.split(",")]
    selectors = [s for s in selectors if not s.startswith("@media")]  # its rules are checked
    assert selectors
    hidden_by_default = {".hymt-tts-button", "#hymt-kiosk-idle"}
    for sel in selectors:
        assert sel.startswith("body.hymt-kiosk") or sel in hidden_by_default, sel
    assert re.search(r"min-height:\s*var\(--hymt-kiosk-touch\)", css)
    assert "--hymt-kiosk-touch: 64px" in css  # touch targets well over the 44-48 px minimum
