"""Every sentence the chat page says, in one place (with the zh-CN and Spanish words beside the
English ones where a screen shows them to strangers), so that the wording is read, reviewed and
tested without a browser.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hymt_chat.lang.names import language_label, language_list, language_name
from hymt_chat.modes.chat_words import PageText

_ENGLISH_PAGE = PageText()

if TYPE_CHECKING:
    from hymt_chat.engine.policy import PolicyEvent
    from hymt_chat.engine.translator import Translation
    from hymt_chat.modes.chat import ChatState


def unknown_language_message(name: str) -> str:
    shown = name.strip() or "(nothing)"
    return (
        f"I don't know the language {shown!r}. Use a name or a code from this list "
        f"(English and Chinese names work too):\n\n{language_list()}"
    )



def format_duration(seconds: float) -> str:
    """ "0.8 s", "12 s", "2 min 5 s"."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def memory_note(remembered: Sequence[str], parts: int) -> str | None:
    """What the memory answered, for a meta line: "from memory", "corrected by an agent",
    "2 of 5 parts from memory · 1 corrected by an agent"; None when the model did it all."""
    if not remembered:
        return None
    corrected = sum(1 for origin in remembered if origin == "corrected")
    imported = sum(1 for origin in remembered if origin == "imported")
    whole = len(remembered) >= parts
    if whole and corrected == len(remembered):
        return "corrected by an agent"
    if whole and imported == len(remembered):
        return "from the team's memory"
    note = "from memory" if whole else f"{len(remembered)} of {parts} parts from memory"
    if corrected:
        note += f" · {corrected} corrected by an agent"
    if imported:
        note += f" · {imported} from the team's memory"
    return note


def format_meta(result: Translation, *, demo: bool = False,
                page: PageText = _ENGLISH_PAGE) -> str:
    """The small line under an answer: "Chinese → English · 0.8 s" (+ parts, memory, demo),
    in the *page*'s language."""
    parts = [f"{page.name_of(result.source)} → {page.name_of(result.target)}",
             format_duration(result.seconds)]
    total = result.segments + len(result.remembered)
    if total > 1:
        parts.append(page.fill("parts_count", count=total))
    note = memory_note(result.remembered, total)
    if note:
        parts.append(page["from_memory"] if note == "from memory" else note)
    if demo:
        parts.append(page["demo_model"])
    return " · ".join(parts)


def same_language_message(target: str, *, can_swap: bool, page: PageText = _ENGLISH_PAGE) -> str:
    hint = page["swap_hint"] if can_swap else page["pick_hint"]
    return f"{page.fill('already_in', language=page.name_of(target, in_text=True))} {hint}"


def settings_changed_message(state: ChatState) -> str:
    return f"Now translating {state.pair}."


def detect_message(code: str | None) -> str:
    if code is None:
        return (
            "I can't tell which language this is (too short or mixed). "
            "Pick the source in the settings."
        )
    return f"This looks like {language_label(code)}."


def warming_up_message(state: str, waiting: int) -> str:
    what = "restarting" if state == "restarting" else "warming up"
    queued = "it" if waiting <= 1 else f"your {waiting} waiting messages"
    return (
        f"The translation model is {what}; this can take a few minutes on a CPU. "
        f"I'll translate {queued} as soon as it is ready, in order."
    )


def model_down_message() -> str:
    return (
        "The translation model is not reachable (it is down or not started). "
        "Your text was kept — press Retry when it is back."
    )


def still_not_ready_message(seconds: float) -> str:
    return (
        f"The translation model is still not ready after {format_duration(seconds)}. "
        "Your text was kept — press Retry."
    )


UNEXPECTED_ERROR = "Something went wrong on our side."

# What each mode's empty composer says it takes (public/composer.js puts it in the box): one
# line on a phone (the paperclip's tooltip lists the document kinds).
STOPPED = _ENGLISH_PAGE["stopped"]
KEPT_HINT = _ENGLISH_PAGE["kept_hint"]
"""Added by the chat page where it offers Retry (the core's sentences name no button)."""


def last_detected_message(code: str | None) -> str:
    if code is None:
        return "Type /detect followed by a text to know its language."
    return f"The last message was in {language_label(code)}."


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


def found_text_markdown(pairs: list[tuple[str, str]]) -> str:
    """The text found in a picture and its translation, block by block in reading order, each
    shown verbatim (what a photo's OCR reads is never Markdown)."""
    rows = [f"**{number}.** {escape_markdown(found)}\n\n→ {escape_markdown(translated)}"
            for number, (found, translated) in enumerate(pairs, 1)]
    return "Text found, and its translation:\n\n" + "\n\n".join(rows)


DEMO_NOTICE = (
    "Demo model: this server runs a small stand-in model (Qwen2.5-Coder-0.5B) so the app works on "
    "a CPU. Its translations are NOT Hunyuan-MT-7B quality; point hymt-chat at Hunyuan-MT-7B on a "
    "GPU for real use."
)


def describe_event(event: PolicyEvent) -> str | None:
    """A short status for a waiting or retried request, or None when there is nothing to say."""
    if event.kind == "queued" and event.ahead > 0:
        return f"busy — waiting ({event.ahead} ahead)"
    if event.kind == "retrying" and event.error.startswith("timeout"):
        split = " in two halves" if "split" in event.error else " with more time"
        return f"the model was slow — retrying{split}"
    if event.kind == "retrying":
        reason = f" ({event.error})" if event.error else ""
        return f"model busy{reason} — retrying in {format_duration(event.delay)}"
    return None


def progress_label(done: int, total: int, eta: float | None,
                   page: PageText = _ENGLISH_PAGE) -> str:
    """"7 of 15 parts · about 40 s left" (the estimate only once it means something), in the
    *page*'s language."""
    label = page.fill("parts_done", done=done, total=total)
    if eta is not None and done < total:
        left = f"{max(1, round(eta))} s" if eta < 60 else format_duration(eta)
        label += " · " + page.fill("time_left", left=left)
    return label


RETRY_REST_HINT = "Press **Retry the rest** to send only the missing parts again."
EXPIRED_JOB = ("That earlier text is no longer kept (only the last 20 are); "
               "send it again to translate it.")
CANCELLED = "cancelled"
"""The note a background job's progress line ends with after its Cancel (or the tab closed)."""
JOB_ALREADY_OVER = "That translation is already over: there was nothing left to cancel."

# --- an agent's correction of a translation (hymt_chat/modes/agent/corrections.py) ----------
CORRECT_LABEL = "Correct this translation"
CORRECT_TOOLTIP = "Type a better translation: used next time for the same text, by everyone here"
CORRECTION_CANCELLED = "Correction cancelled: the translation stays as it was."
CORRECTION_EXPIRED = ("That translation is no longer kept (only the last 20 are): correct it "
                      "the next time it comes.")
CORRECTION_NOT_SAVED = ("The translation memory is not answering right now: the correction was "
                        "not saved. Try again shortly.")


def correct_prompt(original: str, target: str) -> str:
    return (f"Type the corrected {language_name(target)} translation of “{original}” and send "
            "it. It is used from then on for the same text, by everyone on this deployment "
            "(shown “corrected by an agent”). /cancel keeps the translation as it is.")


def correction_check_message(findings: Sequence[str]) -> str:
    return ("Check the correction before it is kept: " + " ".join(findings)
            + " Send it again unchanged to keep it as it is, or type another.")


def correction_saved_message(target: str) -> str:
    return (f"Saved: from now on this text is translated into {language_name(target)} as you "
            "wrote it, for everyone on this deployment. The conversation above keeps what was "
            "sent.")


def partial_answer_markdown(text: str, error: str) -> str:
    """A translation with parts missing: what was translated, in place, then why and what next."""
    return f"{literal_block(text)}\n\n{escape_markdown(error)} {RETRY_REST_HINT}"


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


# The kiosk's sentences: strangers read them, so the key ones carry Chinese and Spanish too.

COUNTER_LINK = ("[Two people at one counter? One screen, two languages → · 柜台双语模式 · "
                "Modo mostrador](/counter)")


# The kiosk's welcome in the languages strangers most often read, each on its own line.
WELCOME_LINES: tuple[str, ...] = (
    "欢迎！请用任何语言输入，然后点选要翻译成的语言。",
    "¡Bienvenido! Escriba en cualquier idioma y toque el idioma de destino.",
    "Bienvenue ! Écrivez dans votre langue, puis touchez la langue voulue.",
)


def welcome_markdown(idle_seconds: float) -> str:
    """The kiosk's welcome, Markdown: the English sentence first, each other language on a line
    of its own (not run together in one paragraph), then how long the screen keeps anything."""
    minutes = max(1, round(idle_seconds / 60))
    when = "a minute" if minutes == 1 else f"{minutes} minutes"
    english = ("Type or paste your text in any language, then tap the language to translate "
               "into.")
    lines = "\n".join(f"- {escape_markdown(line)}" for line in WELCOME_LINES)
    kept = escape_markdown(f"Nothing is kept: the screen starts afresh after {when} without use.")
    return f"**Welcome!** {escape_markdown(english)}\n\n{lines}\n\n*{kept}*"


def kiosk_target_message(target: str, label: str | None = None) -> str:
    """After a language button without a text waiting: what to do next."""
    name = label or language_name(target)
    return f"→ {name}. Type or paste your text, then press Enter."


def kiosk_pick_message() -> str:
    """A text arrived before any language was chosen."""
    return "Tap the language to translate into · 请点选目标语言 · Toque el idioma de destino"


def kiosk_same_message(target: str) -> str:
    """The text is already in the language tapped."""
    return (f"This is already {language_name(target)}. Tap another language · 请选择其他语言 · "
            "Toque otro idioma")


def best_label(stand_in: bool) -> str:
    """The Best quality switch, which names the model that fuses (the demo model when it plays
    Hunyuan-MT-Chimera's part)."""
    if stand_in:
        return "Best quality (the demo model standing in for Hunyuan-MT-Chimera)"
    return "Best quality (Hunyuan-MT-Chimera)"


def best_meta(meta: str, note: str, *, downgraded: bool) -> str:
    """The meta line of a Best-quality answer, Markdown: the note in bold when it downgraded
    (the user asked for the best and did not get it), else after the usual meta line."""
    if downgraded:
        return f"*{escape_markdown(meta)}*\n\n**⚠ {escape_markdown(note)}**"
    return f"*{escape_markdown(meta + ' · ' + note)}*"


# The room: the customer on their own phone.

ROOM_CLOSED = "The room is closed: its link no longer works."
DELIVERED = "sent to the customer"
NOT_DELIVERED = ("not sent: no room or desk conversation is open, so nobody received it "
                 "(copy it, /room to open one, /desk to take one)")


def room_again(messages: int) -> str:
    """A signed-in agent's new tab found their room still open (a reload, a restart)."""
    return (f"Your room is still open ({messages} message(s) so far): its guest's messages "
            "come here again.")
CUSTOMER_TYPING = "The customer is typing…"  # the agent's own room (public/desk.js shows it)


def visitor_typing(label: str) -> str:
    """A desk conversation's visitor types (*label*: "#3 · Spanish")."""
    return f"{label} · the visitor is typing…"


def room_link_markdown(link: str, hours: float) -> str:
    """The join link and how to use it (the QR code comes as an image beside it)."""
    how = (f"One guest at a time; the link works for {hours:g} h or until /room close. Type "
           "your replies here: they are translated for the customer, and their messages "
           "appear here translated.")
    return (f"**Room open.** Send the customer this link, or let them scan the code: "
            f"[{escape_markdown(link)}]({link})\n\n*{escape_markdown(how)}*")


def room_message_markdown(message: object, *, demo: bool = False) -> str:
    """A room message as the agent sees it: the translation, then the original, small."""
    who = "Customer" if getattr(message, "who", "") == "guest" else "You (sent to the customer)"
    source = getattr(message, "source", None)
    target = getattr(message, "target", "")
    original = getattr(message, "original", "")
    translation = getattr(message, "translation", None)
    note = getattr(message, "note", None)
    parts = [literal_block(translation if translation is not None else original)]
    meta = [who, f"{language_name(source) if source else 'unknown language'} → "
                 f"{language_name(target)}"]
    if demo:
        meta.append("demo model")
    parts.append(f"*{escape_markdown(' · '.join(meta))}*")
    if translation is not None and original:
        parts.append(f"*{escape_markdown('Original:')}* {escape_markdown(original)}")
    if note:
        parts.append(f"**⚠ {escape_markdown(note)}**")
    for warning in getattr(message, "warnings", ()) or ():
        parts.append(f"- ⚠ {escape_markdown(warning)}")
    return "\n\n".join(parts)
