"""Every sentence the chat page says, in one place (with the zh-CN and Spanish words beside the
English ones where a screen shows them to strangers), so that the wording is read, reviewed and
tested without a browser.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hymt_chat.errors import UnknownLanguageError
from hymt_chat.lang.names import AUTO
from hymt_chat.modes.page_text import PageText

_ENGLISH_PAGE = PageText()

if TYPE_CHECKING:
    from hymt_chat.engine.policy import PolicyEvent
    from hymt_chat.engine.translator import Translation
    from hymt_chat.modes.chat import ChatState


def unknown_language_message(name: str) -> UnknownLanguageError:
    """The refusal of a language name that names none of the 38 (the page adds its list)."""
    return UnknownLanguageError.worded("unknown_language_named", name=name.strip() or "…")



def format_duration(seconds: float, page: PageText = _ENGLISH_PAGE) -> str:
    """ "0.8 s", "12 s", "2 min 5 s" (in the *page*'s language)."""
    if seconds < 10:
        return page.fill("seconds", n=f"{seconds:.1f}")
    if seconds < 60:
        return page.fill("seconds", n=f"{seconds:.0f}")
    minutes, rest = divmod(round(seconds), 60)
    if rest:
        return page.fill("minutes_seconds", m=minutes, s=rest)
    return page.fill("minutes", m=minutes)


def memory_note(remembered: Sequence[str], parts: int,
                page: PageText = _ENGLISH_PAGE) -> str | None:
    """What the memory answered, for a meta line: "from memory", "corrected by an agent",
    "2 of 5 parts from memory · 1 corrected by an agent"; None when the model did it all."""
    if not remembered:
        return None
    corrected = sum(1 for origin in remembered if origin == "corrected")
    imported = sum(1 for origin in remembered if origin == "imported")
    whole = len(remembered) >= parts
    if whole and corrected == len(remembered):
        return page["corrected_by_agent"]
    if whole and imported == len(remembered):
        return page["from_team_memory"]
    note = (page["from_memory"] if whole
            else page.fill("parts_from_memory", done=len(remembered), total=parts))
    if corrected:
        note += " · " + page.fill("n_corrected", count=corrected)
    if imported:
        note += " · " + page.fill("n_from_team", count=imported)
    return note


def format_meta(result: Translation, *, demo: bool = False,
                page: PageText = _ENGLISH_PAGE) -> str:
    """The small line under an answer: "Chinese → English · 0.8 s" (+ parts, memory, demo),
    in the *page*'s language."""
    parts = [f"{page.name_of(result.source)} → {page.name_of(result.target)}",
             format_duration(result.seconds, page)]
    total = result.segments + len(result.remembered)
    if total > 1:
        parts.append(page.fill("parts_count", count=total))
    note = memory_note(result.remembered, total, page)
    if note:
        parts.append(note)
    if demo:
        parts.append(page["demo_model"])
    return " · ".join(parts)


def same_language_message(target: str, *, can_swap: bool, page: PageText = _ENGLISH_PAGE) -> str:
    hint = page["swap_hint"] if can_swap else page["pick_hint"]
    return f"{page.fill('already_in', language=page.name_of(target, in_text=True))} {hint}"


def settings_pair(state: ChatState, page: PageText = _ENGLISH_PAGE) -> str:
    """ "Auto-detect → English": the languages the chat translates between now."""
    source = page["auto"] if state.source == AUTO else page.name_of(state.source)
    return f"{source} → {page.name_of(state.target)}"


def settings_changed_message(state: ChatState, page: PageText = _ENGLISH_PAGE) -> str:
    return page.fill("now_translating", pair=settings_pair(state, page))


def detect_message(code: str | None, page: PageText = _ENGLISH_PAGE) -> str:
    if code is None:
        return page["detect_unsure"]
    return page.fill("detect_is", language=f"{page.name_of(code, in_text=True)} ({code})")


def warming_up_message(state: str, waiting: int = 1, page: PageText = _ENGLISH_PAGE) -> str:
    said = page["restarting" if state == "restarting" else "warming_up"]
    return f"{said} {page.count('messages_waiting', waiting)}" if waiting > 1 else said


def model_down_message(page: PageText = _ENGLISH_PAGE) -> str:
    return page["model_down"]


def still_not_ready_message(seconds: float, page: PageText = _ENGLISH_PAGE) -> str:
    return page.fill("still_not_ready", duration=format_duration(seconds, page))


# What each mode's empty composer says it takes (public/composer.js puts it in the box): one
# line on a phone (the paperclip's tooltip lists the document kinds).
STOPPED = _ENGLISH_PAGE["stopped"]
KEPT_HINT = _ENGLISH_PAGE["kept_hint"]
"""Added by the chat page where it offers Retry (the core's sentences name no button)."""


def last_detected_message(code: str | None, page: PageText = _ENGLISH_PAGE) -> str:
    if code is None:
        return page["detect_how"]
    return page.fill("detect_last", language=f"{page.name_of(code, in_text=True)} ({code})")


def answer_markdown(text: str, meta: str) -> str:
    """A translation as Markdown: the text verbatim in a block, then the small meta line."""
    return f"{literal_block(text)}\n\n*{escape_markdown(meta)}*"


def file_answer_markdown(name: str, output: str, meta: str, summary: str = "",
                         warnings: str = "") -> str:
    """The answer to a file: names, the one-line summary of what it held, the checks' warnings
    under it (Markdown lines, :func:`~hymt_chat.modes.warnings.file_warnings_markdown`: where
    the eye is after reading the summary), the meta line."""
    head = escape_markdown(f"{name} → {output}")
    if summary:
        head += f"\n\n{escape_markdown(summary)}"
    if warnings:
        head += f"\n\n{warnings}"
    return f"{head}\n\n*{escape_markdown(meta)}*"


def found_text_markdown(pairs: list[tuple[str, str]], page: PageText = _ENGLISH_PAGE) -> str:
    """The text found in a picture and its translation, block by block in reading order, each
    shown verbatim (what a photo's OCR reads is never Markdown)."""
    rows = [f"**{number}.** {escape_markdown(found)}\n\n→ {escape_markdown(translated)}"
            for number, (found, translated) in enumerate(pairs, 1)]
    return escape_markdown(page["found_text"]) + "\n\n" + "\n\n".join(rows)


DEMO_NOTICE = (
    "Demo model: this server runs a small stand-in model (Qwen2.5-Coder-0.5B) so the app works on "
    "a CPU. Its translations are NOT Hunyuan-MT-7B quality; point hymt-chat at Hunyuan-MT-7B on a "
    "GPU for real use."
)


def describe_event(event: PolicyEvent, page: PageText = _ENGLISH_PAGE) -> str | None:
    """A short status for a waiting or retried request, or None when there is nothing to say
    (the model's own reason for a retry goes to the log, not to the reader)."""
    if event.kind == "queued" and event.ahead > 0:
        return page.fill("busy_waiting", count=event.ahead)
    if event.kind == "retrying" and event.error.startswith("timeout"):
        return page["slow_halves" if "split" in event.error else "slow_more_time"]
    if event.kind == "retrying":
        return page.fill("busy_retrying", delay=format_duration(event.delay, page))
    return None


def progress_label(done: int, total: int, eta: float | None,
                   page: PageText = _ENGLISH_PAGE, *, waiting: bool = False) -> str:
    """"7 of 15 parts · about 40 s left" (the estimate only once it means something), in the
    *page*'s language; before any part is back "15 parts · on their way" (or only "15 parts"
    while *waiting*: the note says for what)."""
    if done == 0:
        label = page.fill("parts_count", count=total) if waiting else page.count(
            "parts_on_their_way", total)
    else:
        label = page.fill("parts_done", done=done, total=total)
    if eta is not None and done < total:
        left = (page.fill("seconds", n=max(1, round(eta))) if eta < 60
                else format_duration(eta, page))
        label += " · " + page.fill("time_left", left=left)
    return label


EXPIRED_JOB = _ENGLISH_PAGE["expired_job"]
CANCELLED = _ENGLISH_PAGE["cancelled"]
"""The note a background job's progress line ends with after its Cancel (or the tab closed)."""
JOB_ALREADY_OVER = _ENGLISH_PAGE["job_over"]

# --- an agent's correction of a translation (hymt_chat/modes/agent/corrections.py) ----------
def correct_prompt(original: str, target: str, page: PageText = _ENGLISH_PAGE) -> str:
    return page.fill("correct_prompt", language=page.name_of(target, in_text=True),
                     original=original)


def correction_check_message(findings: Sequence[str], page: PageText = _ENGLISH_PAGE) -> str:
    return page.fill("correction_check", findings=" ".join(findings))


def correction_saved_message(target: str, page: PageText = _ENGLISH_PAGE) -> str:
    return page.fill("correction_saved", language=page.name_of(target, in_text=True))


def partial_answer_markdown(text: str, error: str, page: PageText = _ENGLISH_PAGE) -> str:
    """A translation with parts missing: what was translated, in place, then why and what next."""
    return f"{literal_block(text)}\n\n{escape_markdown(error)} {page['retry_rest_hint']}"


# --------------------------------------------------------------------------------------------
# Showing text literally
# --------------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~=:&\"'$])")


def escape_markdown(text: str) -> str:
    """Backslash-escape Markdown and HTML punctuation so *text* is shown exactly as written.

    For short bits we put inside our own sentences (file names, echoed input).
    """
    return _MD_SPECIAL.sub(r"\\\1", text)


def literal_block(text: str) -> str:
    """*text* as a fenced block that Markdown shows verbatim (never as HTML, never as Markdown).

    The fence is longer than any backtick run inside, so no line of the text can close it.
    Chainlit shows the block with its own copy button that copies exactly *text*.
    """
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


# The kiosk's sentences: strangers read them, so the welcome carries Chinese, Spanish and
# French too, whatever the page's language.


def counter_link(page: PageText = _ENGLISH_PAGE) -> str:
    """The link to the counter (two people, one screen), in the page's language."""
    return f"[{escape_markdown(page['counter_link'])}](/counter)"


# The kiosk's welcome in the languages strangers most often read, each on its own line.
WELCOME_LINES: tuple[str, ...] = (
    "欢迎！请用任何语言输入，然后点选要翻译成的语言。",
    "¡Bienvenido! Escriba en cualquier idioma y toque el idioma de destino.",
    "Bienvenue ! Écrivez dans votre langue, puis touchez la langue voulue.",
)


def welcome_markdown(idle_seconds: float, page: PageText = _ENGLISH_PAGE) -> str:
    """The kiosk's welcome, Markdown: the page's sentence first, each other language on a line
    of its own (not run together in one paragraph), then how long the screen keeps anything."""
    minutes = max(1, round(idle_seconds / 60))
    lines = "\n".join(f"- {escape_markdown(line)}" for line in WELCOME_LINES)
    kept = escape_markdown(page.count("welcome_kept", minutes))
    return (f"**{escape_markdown(page['welcome'])}** {escape_markdown(page['welcome_how'])}"
            f"\n\n{lines}\n\n*{kept}*")


def kiosk_target_message(target: str, label: str | None = None,
                         page: PageText = _ENGLISH_PAGE) -> str:
    """After a language button without a text waiting: what to do next."""
    return page.fill("kiosk_target", language=label or page.name_of(target))


def kiosk_pick_message(page: PageText = _ENGLISH_PAGE) -> str:
    """A text arrived before any language was chosen."""
    return page["kiosk_pick"]


def kiosk_same_message(target: str, page: PageText = _ENGLISH_PAGE) -> str:
    """The text is already in the language tapped."""
    return page.fill("kiosk_same", language=page.name_of(target, in_text=True))


def best_label(stand_in: bool, page: PageText = _ENGLISH_PAGE) -> str:
    """The Best quality switch, which names the model that fuses (the demo model when it plays
    Hunyuan-MT-Chimera's part)."""
    if stand_in:
        return page["best_demo"]
    return f"{page['best']} (Hunyuan-MT-Chimera)"


def best_meta(meta: str, note: str, *, downgraded: bool) -> str:
    """The meta line of a Best-quality answer, Markdown: the note in bold when it downgraded
    (the user asked for the best and did not get it), else after the usual meta line."""
    if downgraded:
        return f"*{escape_markdown(meta)}*\n\n**⚠ {escape_markdown(note)}**"
    return f"*{escape_markdown(meta + ' · ' + note)}*"


# The room: the customer on their own phone.

DELIVERED = _ENGLISH_PAGE["delivered"]
NOT_DELIVERED = _ENGLISH_PAGE["not_delivered"]


def room_again(messages: int, page: PageText = _ENGLISH_PAGE) -> str:
    """A signed-in agent's new tab found their room still open (a reload, a restart)."""
    return page.count("room_again", messages)


def visitor_typing(label: str, page: PageText = _ENGLISH_PAGE) -> str:
    """A desk conversation's visitor types (*label*: "#3 · Spanish")."""
    return page.fill("visitor_typing", label=label)


def room_link_markdown(link: str, hours: float, page: PageText = _ENGLISH_PAGE) -> str:
    """The join link and how to use it (the QR code comes as an image beside it)."""
    how = page.fill("room_how_long", hours=f"{hours:g}")
    return (f"**{escape_markdown(page['room_open'])}** {escape_markdown(page['room_send_link'])} "
            f"[{escape_markdown(link)}]({link})\n\n*{escape_markdown(how)}*")


def room_message_markdown(message: object, *, demo: bool = False,
                          page: PageText = _ENGLISH_PAGE,
                          warnings: Sequence[str] | None = None) -> str:
    """A room message as the agent sees it: the translation, then the original, small;
    *warnings*, the checks' lines in the page's words where the turn that made it is at hand
    (else the message's own, as kept)."""
    who = page["who_customer" if getattr(message, "who", "") == "guest" else "who_you_sent"]
    source = getattr(message, "source", None)
    target = getattr(message, "target", "")
    original = getattr(message, "original", "")
    translation = getattr(message, "translation", None)
    note = getattr(message, "note", None)
    parts = [literal_block(translation if translation is not None else original)]
    meta = [who, f"{page.name_of(source)} → {page.name_of(target)}"]
    if demo:
        meta.append(page["demo_model"])
    parts.append(f"*{escape_markdown(' · '.join(meta))}*")
    if translation is not None and original:
        parts.append(f"*{escape_markdown(page['original_label'])}* {escape_markdown(original)}")
    if note:
        parts.append(f"**⚠ {escape_markdown(page.say(note))}**")
    shown = warnings if warnings is not None else getattr(message, "warnings", ()) or ()
    for warning in shown:
        parts.append(f"- ⚠ {escape_markdown(page.say(warning))}")
    return "\n\n".join(parts)
