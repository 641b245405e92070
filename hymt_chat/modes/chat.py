"""One chat session, without the UI: languages chosen, commands, and every sentence the chat says.

The Chainlit app keeps a :class:`ChatState` per session and turns user input into a
:data:`Command` with :func:`parse_command`; everything shown to the user is built here, so the
wording is tested without a browser. Nothing here imports Chainlit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hymt_chat.errors import InputError, UnknownLanguageError
from hymt_chat.lang.languages import LANGUAGES, Language, find_language

if TYPE_CHECKING:
    from hymt_chat.engine.policy import PolicyEvent
    from hymt_chat.engine.translator import Translation

__all__ = [
    "AUTO",
    "COMMANDS",
    "STARTERS",
    "ChatState",
    "Command",
    "CommandError",
    "DetectCommand",
    "ResetCommand",
    "SwapCommand",
    "ToCommand",
    "describe_event",
    "escape_markdown",
    "format_duration",
    "format_meta",
    "language_choices",
    "language_label",
    "language_list",
    "language_name",
    "literal_block",
    "parse_command",
]

AUTO = "auto"
AUTO_LABEL = "Auto-detect"


class CommandError(InputError):
    """A command the user typed cannot be carried out (missing argument, nothing to swap…)."""


# --------------------------------------------------------------------------------------------
# Names and picker choices
# --------------------------------------------------------------------------------------------


def language_name(code: str | None) -> str:
    """English name of a table code; "Auto-detect" for auto, "unknown language" for None."""
    if code is None:
        return "unknown language"
    if code == AUTO:
        return AUTO_LABEL
    lang = find_language(code)
    return lang.english if lang else code


def language_label(lang: Language | str) -> str:
    """Readable picker label: "Traditional Chinese (zh-Hant) · 繁体中文"."""
    if isinstance(lang, str):
        if lang == AUTO:
            return AUTO_LABEL
        found = find_language(lang)
        if found is None:
            return lang
        lang = found
    return f"{lang.english} ({lang.code}) · {lang.chinese}"


def language_choices(*, include_auto: bool) -> dict[str, str]:
    """Picker items, label -> value, in the official table order (Auto-detect first if asked)."""
    items = {AUTO_LABEL: AUTO} if include_auto else {}
    items.update({language_label(lang): lang.code for lang in LANGUAGES})
    return items


def language_list() -> str:
    """All 38 languages on a few lines, for messages: "English (en) · French (fr) · …"."""
    return " · ".join(f"{lang.english} ({lang.code})" for lang in LANGUAGES)


def unknown_language_message(name: str) -> str:
    shown = name.strip() or "(nothing)"
    return (
        f"I don't know the language {shown!r}. Use a name or a code from this list "
        f"(English and Chinese names work too):\n\n{language_list()}"
    )


# --------------------------------------------------------------------------------------------
# Session state
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class ChatState:
    """What one chat session remembers: the language pair and what was last detected."""

    source: str = AUTO  # AUTO or a table code
    target: str = "en"
    last_detected: str | None = None  # source language of the last message (detected or chosen)
    previous: str | None = None  # last source language other than the target: what /swap uses

    @classmethod
    def new(cls, default_target: str = "en") -> ChatState:
        lang = find_language(default_target)
        return cls(target=lang.code if lang else "en")

    @property
    def pair(self) -> str:
        """ "Auto-detect → English"."""
        return f"{language_name(self.source)} → {language_name(self.target)}"

    def picker_values(self) -> dict[str, str]:
        return {"source": self.source, "target": self.target}

    def set_languages(self, source: str | None = None, target: str | None = None) -> bool:
        """Apply picker values (codes, or AUTO for the source). True when something changed.

        Unknown values raise :class:`UnknownLanguageError`.
        """
        before = (self.source, self.target)
        if source is not None:
            self.source = AUTO if source in (AUTO, "") else _code(source)
        if target is not None:
            self.target = _code(target)
            # en→fr, then "/to en": swapping back should offer French.
            if self.previous in (None, self.target) and before[1] != self.target:
                self.previous = before[1]
        return (self.source, self.target) != before

    def swap(self) -> None:
        """Swap source and target; with auto-detect, the last other language becomes the target.

        Raises :class:`CommandError` when there is nothing to swap with yet.
        """
        if self.source != AUTO:
            if self.source == self.target:
                raise CommandError(f"Source and target are both {language_name(self.target)}.")
            self.source, self.target = self.target, self.source
            return
        other = self.previous if self.previous != self.target else None
        if other is None:
            raise CommandError(
                "Nothing to swap with yet: the source is Auto-detect and no message in another "
                f"language than {language_name(self.target)} was translated. "
                "Pick a target with /to <language>."
            )
        self.previous, self.target = self.target, other

    def reset(self, default_target: str = "en") -> None:
        fresh = ChatState.new(default_target)
        self.source, self.target = fresh.source, fresh.target
        self.last_detected = self.previous = None

    def remember(self, source: str | None) -> None:
        """Record the source language of a message just handled (None: detection unsure)."""
        if source is None:
            return
        self.last_detected = source
        if source != self.target:
            self.previous = source


def _code(name: str) -> str:
    lang = find_language(name)
    if lang is None and not isinstance(name, str):  # from the browser, not typed by a person
        raise UnknownLanguageError("That setting is not a language name; pick one from the list.")
    if lang is None:
        raise UnknownLanguageError(unknown_language_message(name[:40]))
    return lang.code


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ToCommand:
    language: Language


@dataclass(frozen=True, slots=True)
class SwapCommand:
    pass


@dataclass(frozen=True, slots=True)
class DetectCommand:
    text: str  # may be empty: then the last detection is reported


@dataclass(frozen=True, slots=True)
class ResetCommand:
    pass


Command = ToCommand | SwapCommand | DetectCommand | ResetCommand

# id, description, lucide icon: what the composer's command menu shows.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("to", "Translate into another language: /to Japanese, /to zh-Hant, /to 法语", "languages"),
    ("swap", "Swap source and target languages", "arrow-left-right"),
    ("detect", "Tell which language a text is in, without translating it", "scan-search"),
    ("reset", "Back to Auto-detect and the default target language", "rotate-ccw"),
)
_COMMAND_IDS = frozenset(c[0] for c in COMMANDS)
_TYPED = re.compile(r"\A/(?P<name>[A-Za-z]+)(?=\s|\Z)[ \t]*(?P<rest>.*)\Z", re.DOTALL)


def parse_command(text: str, command: str | None = None) -> Command | None:
    """The command in a message, or None when the message is text to translate.

    *command* is what the composer's command menu selected (the text is then its argument);
    otherwise a message starting with "/to", "/swap", "/detect" or "/reset" is a command. Any
    other text starting with "/" ("/usr/bin is…") is translated like any text.
    Raises :class:`UnknownLanguageError` (listing the valid ones) or :class:`CommandError`.
    """
    if command:
        name, rest = command.strip().lstrip("/").lower(), text
    else:
        match = _TYPED.match(text.strip())
        if match is None or match.group("name").lower() not in _COMMAND_IDS:
            return None
        name, rest = match.group("name").lower(), match.group("rest")
    rest = rest.strip()
    if name == "to":
        if not rest:
            raise CommandError(
                f"Which language? Type /to followed by a name or a code, e.g. /to Japanese or "
                f"/to ja. The languages are:\n\n{language_list()}"
            )
        lang = find_language(rest)
        if lang is None:
            raise UnknownLanguageError(unknown_language_message(rest))
        return ToCommand(lang)
    if name == "swap":
        return SwapCommand()
    if name == "detect":
        return DetectCommand(rest)
    if name == "reset":
        return ResetCommand()
    return None  # a command the menu knows but this version does not: translate the text


# --------------------------------------------------------------------------------------------
# What the chat says
# --------------------------------------------------------------------------------------------


def format_duration(seconds: float) -> str:
    """ "0.8 s", "12 s", "2 min 5 s"."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def format_meta(result: Translation, *, demo: bool = False) -> str:
    """The small line under an answer: "Chinese → English · 0.8 s" (+ parts, demo mark)."""
    source = language_name(result.source) if result.source else "Unknown language"
    parts = [f"{source} → {language_name(result.target)}", format_duration(result.seconds)]
    if result.segments > 1:
        parts.append(f"{result.segments} parts")
    if demo:
        parts.append("demo model")
    return " · ".join(parts)


def same_language_message(target: str, *, can_swap: bool) -> str:
    hint = (
        "Swap the languages to translate it the other way, or pick a target with /to <language>."
        if can_swap
        else "Pick the language to translate into below, or with /to <language>."
    )
    return f"This text is already in {language_name(target)}, so the model was not asked. {hint}"


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
KEPT_HINT = "Your text was kept — press Retry."
"""Added by the chat page where it offers Retry (the core's sentences name no button)."""


def last_detected_message(code: str | None) -> str:
    if code is None:
        return "Type /detect followed by a text to know its language."
    return f"The last message was in {language_label(code)}."


def answer_markdown(text: str, meta: str) -> str:
    """A translation as Markdown: the text verbatim in a block, then the small meta line."""
    return f"{literal_block(text)}\n\n*{escape_markdown(meta)}*"


def file_answer_markdown(name: str, output: str, meta: str) -> str:
    return f"{escape_markdown(f'{name} → {output}')}\n\n*{escape_markdown(meta)}*"


def help_message(state: ChatState) -> str:
    return (
        f"Translating {state.pair}. Type or paste text, or upload a .txt, .md or .srt file. "
        "Commands: /to <language>, /swap, /detect <text>, /reset."
    )


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


def progress_label(done: int, total: int, eta: float | None) -> str:
    """"7 of 15 parts · about 40 s left" (the estimate only once it means something)."""
    label = f"{done} of {total} parts"
    if eta is not None and done < total:
        left = f"{max(1, round(eta))} s" if eta < 60 else format_duration(eta)
        label += f" · about {left} left"
    return label


RETRY_REST_HINT = "Press **Retry the rest** to send only the missing parts again."
EXPIRED_JOB = ("That earlier text is no longer kept (only the last 20 are); "
               "send it again to translate it.")


def partial_answer_markdown(text: str, error: str) -> str:
    """A translation with parts missing: what was translated, in place, then why and what next."""
    return f"{literal_block(text)}\n\n{escape_markdown(error)} {RETRY_REST_HINT}"


# (label, message): real phrases in several languages for a first try.
STARTERS: tuple[tuple[str, str], ...] = (
    ("中文 · 会议改到下午三点", "你好！明天的会议改到下午三点，请准时参加。"),
    ("Español · ¿Dónde está la estación?",
     "Disculpe, ¿dónde está la estación de tren más cercana?"),
    ("日本語 · お問い合わせ", "お問い合わせありがとうございます。担当者より折り返しご連絡いたします。"),
    ("Français · livraison", "Votre colis sera livré demain entre 9 h et 12 h."),
    ("Deutsch · Passwort", "Ich habe mein Passwort vergessen. Können Sie mir bitte helfen?"),
)


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
