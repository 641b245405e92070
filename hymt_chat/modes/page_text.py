"""What a tab's chat page speaks: its language, and its words in it from the catalogs
(:mod:`hymt_chat.words.catalogs`, group ``chat``): the pickers, commands, profiles, notices,
and the Chainlit UI strings it words its own way (a key with a dot names Chainlit's string,
its ``translations/*.json`` path)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeGuard

from babel.core import UnknownLocaleError
from babel.lists import format_list
from babel.numbers import format_decimal

from hymt_chat.lang.endonyms import endonym, names_in
from hymt_chat.lang.languages import LANGUAGES
from hymt_chat.lang.names import language_choices, language_name
from hymt_chat.modes.screen import Choice
from hymt_chat.words.catalogs import catalog, locale_of
from hymt_chat.words.said import LISTS_LANGUAGES, Code, Said
from hymt_chat.words.source import CHAT, PLURALS

__all__ = ["PAGE_LANGUAGE", "STARTERS", "PageText", "chainlit_keys"]

PAGE_LANGUAGE = "page_language"  # the settings' field, and the page script's message
# Languages whose names are capitalised inside a sentence ("Engels", "bahasa Inggris").
_CAPITALISED = frozenset({"en", "de", "nl", "ms", "id", "tl", "tr"})

# (language, what the button says after the language's name, the message it sends): real
# phrases in several languages for a first try; the language is named in the reader's.
STARTERS: tuple[tuple[str, str, str], ...] = (
    ("zh", "会议改到下午三点", "你好！明天的会议改到下午三点，请准时参加。"),
    ("es", "¿Dónde está la estación?", "Disculpe, ¿dónde está la estación de tren más cercana?"),
    ("ja", "お問い合わせ", "お問い合わせありがとうございます。担当者より折り返しご連絡いたします。"),
    ("fr", "Votre colis", "Votre colis sera livré demain entre 9 h et 12 h."),
    ("de", "Passwort vergessen", "Ich habe mein Passwort vergessen. Können Sie mir bitte helfen?"),
)


def chainlit_keys(words: Mapping[str, str]) -> dict[str, str]:
    """The words that replace Chainlit's own UI strings (their keys are Chainlit's paths)."""
    return {key: said for key, said in words.items() if "." in key}


@dataclass(frozen=True, slots=True)
class PageText:
    """What a tab's page speaks: its *language* (a table code) and its words in it."""

    language: str = "en"
    words: Mapping[str, str] = field(default_factory=lambda: CHAT)

    @classmethod
    def of(cls, code: str) -> PageText:
        """The page of *code*, its words from its catalog (English for an unknown code)."""
        said = catalog(code)
        return cls(said.code, said.group("chat"))

    def __getitem__(self, key: str) -> str:
        return self.words.get(key) or CHAT[key]

    def fill(self, key: str, **slots: object) -> str:
        """The words of *key* with its ``{{slots}}`` filled in (the catalogs keep them as
        i18next writes them, so that one check covers the page's strings and these)."""
        return _filled(self[key], slots)

    def error(self, err: BaseException) -> str:
        """An error's sentence in the page's language (its English where it names none)."""
        sentence = getattr(err, "said", None)
        return self.say(sentence) if isinstance(sentence, Said) else str(err)

    def say(self, sentence: Said | str) -> str:
        """A sentence of the app in the page's language (a plain string is said as it is)."""
        if not isinstance(sentence, Said):
            return sentence
        slots = {name: self.name_of(value, in_text=True) if isinstance(value, Code)
                 else self.say(value) if isinstance(value, Said)
                 else self.listed(value) if isinstance(value, tuple)
                 else self.number(value) if _numeric(value) and name != "count" else value
                 for name, value in sentence.slots.items()}
        if sentence.key in PLURALS:
            count = slots.pop("count", 0)
            words = self.count(sentence.key, count if isinstance(count, int) else 0, **slots)
        else:
            words = self.fill(sentence.key, **slots)
        if sentence.key in LISTS_LANGUAGES:
            words += "\n\n" + self.language_list()
        return words

    def listed(self, items: tuple[object, ...]) -> str:
        """A slot's list (of sentences, or of the page's words as :class:`Said`) joined the
        way the page's language writes a list ("texte, Word et PDF")."""
        shown = [self.say(item) if isinstance(item, Said | str) else str(item) for item in items]
        try:
            return format_list(shown, locale=locale_of(self.language))
        except (UnknownLocaleError, ValueError):
            return ", ".join(shown)

    def number(self, value: float) -> str:
        """A number as the page's language writes it ("2,5", "250 000" in French)."""
        try:
            return format_decimal(value, locale=locale_of(self.language))
        except (UnknownLocaleError, ValueError):
            return f"{value:,}"

    def language_list(self) -> str:
        """The 38, each named in the page's language with its code, on one line."""
        names = names_in(self.language)
        return ", ".join(f"{names.get(lang.code) or language_name(lang.code)} ({lang.code})"
                         for lang in LANGUAGES)

    def count(self, key: str, n: int, **slots: object) -> str:
        """The plural message *key* for *n* ({{count}} is *n*), in the page's plural rules."""
        return _filled(catalog(self.language).count(key, n), {"count": n, **slots})

    def name_of(self, code: str | None, *, in_text: bool = False) -> str:
        """A language's name in the page's language ("Anglais" on a French page; "anglais"
        *in_text*, inside a sentence, where only English and German write it capitalised)."""
        if code is None:
            return self["unknown_language"]
        if self.language == "en":
            return language_name(code)
        name = names_in(self.language).get(code) or language_name(code)
        if in_text and self.language not in _CAPITALISED:
            name = name[:1].lower() + name[1:]
        return name

    def choices(self, *, include_auto: bool) -> dict[str, str]:
        """A language picker's items, each language named in the page's language."""
        return language_choices(include_auto=include_auto, reader=self.language,
                                auto_label=self["auto"])

    def page_choice(self) -> Choice:
        """The page's own language picker: each language named in itself, so that a reader
        finds theirs whatever the page speaks now."""
        return Choice(PAGE_LANGUAGE, self["page_language"],
                      {endonym(lang.code): lang.code for lang in LANGUAGES}, self.language)

    def starters(self) -> list[tuple[str, str]]:
        """(label, message) of the first-try buttons: "Spanish · ¿Dónde está la estación?"."""
        names = names_in(self.language)
        return [(f"{names[code]} · {teaser}", message) for code, teaser, message in STARTERS]


def _numeric(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _filled(said: str, slots: Mapping[str, object]) -> str:
    for name, value in slots.items():
        said = said.replace("{{" + name + "}}", str(value))
    return said
