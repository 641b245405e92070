"""The values a translation must not change, recognised per language from CLDR data (Babel).

Numbers, amounts with their currency, dates, times, weekdays, durations and percentages are
found in a text of a given language with that language's own month and weekday names,
currency names and symbols, day periods ("午後", "PM") and unit words, all read from Babel's
CLDR tables for the 38 languages — not from hand-written lists. Each value carries the
*meanings* it can have (``keys``): "1,234" is 1234 in English and 1.234 in German, "9:00" is
09:00 or 21:00, "$" is US, Canadian or Australian dollars; two texts agree on a value when
their meanings overlap, so a correct answer in another format ("1.234,50 €" for "€1,234.50")
is never a mismatch, and a changed one ("259 元" -> "$259") always is.

:func:`format_value` writes a value in a target language's own format (Babel's number,
currency, date and time formatting), which is how masked values are put back.

CLDR lacks a few everyday words — the bare currency words 元/块 (Chinese), 円 (Japanese),
원 (Korean) and the CJK clock words 点/時/시 — and those few sit in ``_EXTRA`` below.
"""

from __future__ import annotations

import asyncio
import copy
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, time
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

import regex
from babel import Locale
from babel.core import get_global
from babel.dates import format_skeleton, format_time
from babel.numbers import get_territory_currencies, list_currencies

from hymt_chat.text.protect import find_spans

__all__ = ["Value", "babel_locale", "calendar_words", "extract_values", "format_value", "number_values",
           "prepare_values", "to_ascii_digits", "values_prepared", "values_ready", "warm_up"]

# Our table codes -> CLDR locales.
_LOCALES = {"zh": "zh_Hans", "zh-Hant": "zh_Hant", "tl": "fil"}
_UNSPACED = re.compile(r"[\u0e00-\u0fff\u1000-\u109f\u1780-\u17ff\u2e80-\u9fff\uac00-\ud7af"
                       r"\uf900-\ufaff\u3040-\u30ff]")
# Bare currency words and clock words CLDR does not list (see the module docstring).
_EXTRA: dict[str, dict[str, str]] = {
    "zh": {"元": "CNY", "块": "CNY", "块钱": "CNY", "人民币": "CNY"},
    "zh-Hant": {"元": "TWD", "塊": "TWD", "圓": "TWD"},
    "yue": {"蚊": "HKD", "元": "HKD"},
    "ja": {"円": "JPY"},
    "ko": {"원": "KRW"},
}
_EVERYWHERE = {"RMB": "CNY"}  # the everyday English name of the renminbi
# Unit words for working days, which CLDR's duration units ("{0}天") do not cover.
_EXTRA_UNITS: dict[str, dict[str, str]] = {
    "zh": {"工作日": "day", "个工作日": "day"},
    "zh-Hant": {"工作日": "day", "個工作日": "day", "個工作天": "day"},
    "yue": {"工作日": "day", "個工作日": "day"},
    "ja": {"営業日": "day"},
    # CLDR has no Tibetan unit words (it falls back to "d", "w"); Tibetan puts them first.
    "bo": {"ཉིན་ཞག་": "day", "ཉིན་": "day", "ཞག་": "day", "གཟའ་འཁོར་": "week",
           "ཆུ་ཚོད་": "hour", "སྐར་མ་": "minute", "ལོ་": "year"},
}
_UNIT_FIRST = frozenset({"bo"})
"""Languages whose duration unit comes before the number ("ཉིན་ཞག་ 3")."""
_CLOCK = r"[点點时時시]"
_HAN_KANA = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]+")
# A letter, combining marks included (the vowel signs of Devanagari, Thai, Tibetan… are marks:
# without them "दिन" would be cut into pieces). A ``regex`` pattern (``\p{M}``), not ``re``.
LETTER = r"(?:[^\W\d_]|\p{M})"
_HALF = r"半|반"


def babel_locale(code: str) -> Locale:
    """The CLDR locale of one of our language codes (``tl`` is CLDR's ``fil``…)."""
    return _locale(code)


def _known(code: str) -> bool:
    try:
        _locale(code)
    except Exception:  # noqa: BLE001 - babel's UnknownLocaleError, a bare Exception
        return False
    return True


@lru_cache(maxsize=64)
def _locale(code: str) -> Locale:
    return Locale.parse(_LOCALES.get(code, code.replace("-", "_")))


_SEPARATORS = {"٫": ".", "٬": ",", "％": "%", "٪": "%"}


@lru_cache(maxsize=1)
def _ascii_table() -> dict[int, str]:
    """Every non-ASCII character ``str.isdigit`` takes, as the ASCII digit Unicode gives it,
    and the separators: one ``str.translate`` instead of a Python loop over the text."""
    table = {ord(k): v for k, v in _SEPARATORS.items()}
    for cp in range(0x80, 0x110000):
        ch = chr(cp)
        if ch.isdigit():
            digit = unicodedata.digit(ch, None)
            if digit is not None:
                table[cp] = str(digit)
    return table


def to_ascii_digits(text: str) -> str:
    """Every decimal digit as ASCII, Arabic separators as . and , (same length, same offsets)."""
    return text if text.isascii() else text.translate(_ascii_table())


# --------------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------------

_GROUP = "[,.'’\u00a0\u202f ]"
NUMBER = (r"(?<![\d.,])(?:\d{1,3}(?:" + _GROUP + r"\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"
          r"(?![\d]|[.,]\d)")
_NUMBER = re.compile(NUMBER)
_DIGIT = re.compile(r"\d")


def number_values(raw: str) -> frozenset[Decimal]:
    """Every value a written number can mean: "1,234" -> {1234, 1.234}; "1.234,50" -> {1234.5}."""
    s = to_ascii_digits(raw).strip()
    seps = [ch for ch in s if not ch.isdigit()]
    try:
        if not seps:
            return frozenset({Decimal(s)})
        kinds = set(seps)
        if len(kinds) >= 2:  # the last separator is the decimal one
            dec = seps[-1]
            whole, _, frac = s.rpartition(dec)
            return frozenset({Decimal(re.sub(r"\D", "", whole) + "." + frac)})
        sep = seps[0]
        digits = re.sub(r"\D", "", s)
        if sep in "'’\u00a0\u202f " or len(seps) > 1:
            return frozenset({Decimal(digits)})
        whole, _, frac = s.partition(sep)
        decimal = Decimal(whole + "." + frac)
        if len(frac) == 3:  # "1,234" / "1.234": grouping in one language, decimal in another
            return frozenset({Decimal(digits), decimal})
        return frozenset({decimal})
    except InvalidOperation:
        return frozenset()


# --------------------------------------------------------------------------------------------
# What one language writes: months, weekdays, currencies, day periods, units (from CLDR)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Vocabulary:
    months: dict[str, int]
    weekdays: dict[str, int]
    currencies: dict[str, frozenset[str]]  # token -> currency codes (symbols, codes, names)
    strong: frozenset[str]  # tokens that name a currency for sure (not one word of a name)
    periods: dict[str, str]  # "午後" -> "pm"
    units: dict[str, str]  # "days" -> "day"
    percent: tuple[str, ...]  # words around a percentage: "percent", "por ciento", "百分之"


def _clean(word: str) -> str:
    return word.replace("\u200f", "").replace("\u200e", "").strip().rstrip(".").casefold()


_PERIODS = {"am": "am", "morning1": "am", "morning2": "am", "pm": "pm", "afternoon1": "pm",
            "afternoon2": "pm", "evening1": "pm", "evening2": "pm"}
_UNITS = ("year", "month", "week", "day", "hour", "minute")
_ISO = frozenset(list_currencies())


@lru_cache(maxsize=64)
def _vocabulary(code: str) -> _Vocabulary:
    loc = _locale(code)
    months: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for width in ("wide", "abbreviated"):
            for number, name in loc.months[context][width].items():
                name = _clean(name)
                if len(name) >= 3 or _UNSPACED.search(name):
                    months.setdefault(name, number)
    weekdays: dict[str, int] = {}
    for context in ("format", "stand-alone"):
        for width in ("wide", "abbreviated"):
            for number, name in loc.days[context][width].items():
                name = _clean(name)
                unspaced = bool(_UNSPACED.search(name))
                # Abbreviations only where they are unmistakable words (周五, 금요일), not "mar".
                if (width == "wide" and len(name) >= 3) or (unspaced and len(name) >= 2):
                    weekdays.setdefault(name, number)
    currencies: dict[str, set[str]] = {}
    strong: set[str] = set()

    def add(token: str, currency: str, sure: bool = True) -> None:
        token = _clean(token)
        if token and not token.isdigit():
            currencies.setdefault(token, set()).add(currency)
            if sure:
                strong.add(token)

    for currency, symbol in loc.currency_symbols.items():
        add(symbol, currency)
    plural = loc._data["currency_names_plural"]
    for currency, name in loc.currencies.items():
        names = {name, *plural.get(currency, {}).values()}
        for full in names:
            add(full, currency)
            if not _UNSPACED.search(full):
                for word in full.split():
                    if len(word) >= 4:
                        add(word, currency, sure=False)
    local = _local_currency(code)
    # A suffix most currency names share in Chinese and Japanese (ドル, 元) names any of them.
    suffixes: dict[str, set[str]] = {}
    for currency, name in loc.currencies.items():
        if _HAN_KANA.search(name[-1:]):
            for size in (1, 2):
                if len(name) > size:
                    suffixes.setdefault(_clean(name[-size:]), set()).add(currency)
    for suffix, owners in suffixes.items():
        if len(owners) >= 3 and _HAN_KANA.fullmatch(suffix):
            for currency in owners:
                add(suffix, currency)
    for word, currency in {**_EVERYWHERE, **_EXTRA.get(code, {})}.items():
        currencies[_clean(word)] = {currency}
        strong.add(_clean(word))
    if local:
        # The generic word of the local currency's name ("dollars" in English) means it.
        for full in {loc.currencies.get(local, ""), *plural.get(local, {}).values()}:
            for word in full.split():
                if word and len(currencies.get(_clean(word), ())) > 2:
                    currencies[_clean(word)] = {local}
    periods: dict[str, str] = {}
    for width in ("abbreviated", "wide", "narrow"):
        for key, name in loc.day_periods["format"].get(width, {}).items():
            if key in _PERIODS and _clean(name) and _clean(name) not in ("a", "p"):
                periods.setdefault(_clean(name), _PERIODS[key])
    periods.update({"a.m": "am", "p.m": "pm", "am": "am", "pm": "pm"})
    units: dict[str, str] = {}
    table = loc._data["unit_patterns"]
    for unit in _UNITS:
        for length in ("long", "short", "narrow"):
            for count, pattern in table.get(f"duration-{unit}", {}).get(length, {}).items():
                if count == "per":
                    continue
                word = _clean(pattern.replace("{0}", ""))
                if word and not any(ch.isdigit() for ch in word):
                    units.setdefault(word, unit)
    units.update(_EXTRA_UNITS.get(code, {}))
    percent = tuple(sorted({_clean(p.replace("{0}", "")) for p in
                            table.get("concentr-percent", {}).get("long", {}).values()}
                           - {"", "%"}, key=len, reverse=True))
    return _Vocabulary(months, weekdays, {k: frozenset(v) for k, v in currencies.items()},
                       frozenset(strong), periods, units, percent)


def calendar_words(code: str | None) -> frozenset[str]:
    """The language's month and weekday names, casefolded (none for an unknown language)."""
    if not code or not _known(code):
        return frozenset()
    vocab = _vocabulary(code)
    return frozenset(vocab.months) | frozenset(vocab.weekdays)


def _local_currency(code: str) -> str | None:
    """The currency of the language's main territory (zh -> CNY, ja -> JPY, en -> USD)."""
    likely = get_global("likely_subtags").get(_LOCALES.get(code, code).replace("-", "_"))
    territory = Locale.parse(likely).territory if likely else None
    if not territory:
        return None
    found = get_territory_currencies(territory, date.today())
    return found[0] if found else None


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Value:
    """One value in a text: what it is, where, as written, and every meaning it can have."""

    kind: str  # number, amount, percent, date, time, weekday, duration
    text: str  # as written
    start: int
    end: int
    keys: frozenset  # type: ignore[type-arg]  # comparable meanings (see the kinds below)
    numbers: frozenset[Decimal]  # the numeric values written in it
    sure: bool = True  # recognised from unmistakable tokens (a symbol, a full name…)

    def agrees(self, other: Value) -> bool:
        return self.kind == other.kind and bool(self.keys & other.keys)


class _Lists:
    """The word lists of one language pair's patterns, each named for ``regex``'s ``\\L<name>``.

    A named list is a set of words that ``regex`` tries longest first under the pattern's
    flags, its own case folding included: CLDR's thousands of month, weekday and currency
    names stay out of the pattern's text (no escaping, no ordering), and the patterns that
    name them are compiled with them (:meth:`compile`).

    ``regex`` tries a case-insensitive list's words one after the other wherever it is
    tried, which made a chat line's values cost six times as much (2,000 currency names);
    each list is therefore behind a lookahead of its words' first :data:`PREFIX` letters as
    a trie, which rejects most positions within a letter or two, and the list runs only
    where one of its words can start."""

    PREFIX = 4  # 3 letters let too many positions through, 5 and more only cost compile time

    def __init__(self) -> None:
        self.lists: dict[str, frozenset[str]] = {}

    def name(self, words: Iterable[str]) -> str:
        """*words* as a named list in a pattern (one that matches nothing when they are none)."""
        kept = frozenset(w for w in words if w)
        if not kept:
            return r"(?!x)x"
        key = f"w{len(self.lists)}"
        self.lists[key] = kept
        return "(?=" + _trie({w[:self.PREFIX] for w in kept}) + rf")\L<{key}>"

    def compile(self, pattern: str, flags: int = 0) -> regex.Pattern[str]:
        """*pattern* with the lists it names. Not kept in ``regex``'s own cache: the pair's
        patterns are (:func:`_patterns`), and a few hundred pairs' would outlive them there."""
        return regex.compile(pattern, flags | _FLAGS, ignore_unused=True, cache_pattern=False,
                             **self.lists)


_FLAGS = regex.VERSION0
"""``re``'s syntax and its simple case folding. ``regex.FULLCASE`` would let one word more match
(CLDR's "Weißrussischer Rubel", kept casefolded as "weissrussischer") for half as much compile
time again."""


def _trie(words: Iterable[str]) -> str:
    """A regex matching exactly *words* (as a set), one branch per letter: ``ab|ac`` ->
    ``a(?:b|c)``."""
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}  # a word ends here

    def emit(node: dict[str, Any]) -> str:
        branches = [regex.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


def _bounded(words: Iterable[str], lists: _Lists) -> str:
    """Words as a regex: spaced-script words must not run on into letters ("mar" in "martes").
    A word that starts with a symbol may touch a letter before it ("に€25", the masking's own
    restore in Japanese), and after it too where it ends with one ("25€です")."""
    spaced = [w for w in words if not _UNSPACED.search(w)]
    unspaced = [w for w in words if _UNSPACED.search(w)]
    symbols = [w for w in spaced if not w[0].isalpha()]
    parts = []
    if lettered := [w for w in spaced if w[0].isalpha()]:
        parts.append(r"(?<!" + LETTER + ")" + lists.name(lettered) + r"(?!" + LETTER + ")")
    if open_ended := [w for w in symbols if not w[-1].isalpha()]:
        parts.append(lists.name(open_ended))
    if closed := [w for w in symbols if w[-1].isalpha()]:
        parts.append(lists.name(closed) + r"(?!" + LETTER + ")")
    if unspaced:
        parts.append(lists.name(unspaced))
    return "|".join(parts) or r"(?!x)x"


@dataclass(frozen=True)
class _Patterns:
    vocab: _Vocabulary
    iso_date: re.Pattern[str]
    cjk_date: re.Pattern[str]
    numeric_date: re.Pattern[str]
    day_month: regex.Pattern[str]  # these name word lists (months, periods…): ``regex``'s
    month_day: regex.Pattern[str]
    clock: regex.Pattern[str]
    cjk_time: regex.Pattern[str]
    hour_period: regex.Pattern[str]
    amount_after: regex.Pattern[str]
    amount_before: regex.Pattern[str]
    percent: regex.Pattern[str]
    weekday: regex.Pattern[str]
    unit: regex.Pattern[str]


def _merge(codes: tuple[str, ...]) -> _Vocabulary:
    vocabs = [_vocabulary(c) for c in codes]
    merged: dict[str, dict[str, Any]] = {"months": {}, "weekdays": {}, "periods": {}, "units": {}}
    currencies: dict[str, frozenset[str]] = {}
    strong: set[str] = set()
    percent: set[str] = set()
    for v in vocabs:
        for field_name, table in merged.items():
            for k, val in getattr(v, field_name).items():
                table.setdefault(k, val)
        for token, codes_ in v.currencies.items():
            currencies[token] = currencies.get(token, frozenset()) | codes_
        strong |= v.strong
        percent |= set(v.percent)
    return _Vocabulary(merged["months"], merged["weekdays"], currencies, frozenset(strong),
                       merged["periods"], merged["units"],
                       tuple(sorted(percent, key=len, reverse=True)))


_PATTERNS: dict[tuple[str, ...], _Patterns] = {}  # the most recently used last
_PATTERNS_LOCK = threading.Lock()
_BUILDING = threading.Lock()
_KEPT_PATTERNS = 128  # language pairs (each order apart), ~4 MB of compiled regex each


def _patterns(codes: tuple[str, ...]) -> _Patterns:
    """*codes*' patterns, built once (~0.5 s of CPU: see :func:`values_ready`) and kept for
    the most recent pairs. A dict, not ``lru_cache``: :func:`values_ready` asks what is kept."""
    with _PATTERNS_LOCK:  # the event loop and prepare_values's threads both come here
        pats = _PATTERNS.pop(codes, None)
    if pats is None:
        pats = _build_patterns(codes)
    with _PATTERNS_LOCK:
        _PATTERNS[codes] = pats
        while len(_PATTERNS) > _KEPT_PATTERNS:
            del _PATTERNS[next(iter(_PATTERNS))]
    return pats


def _codes(languages: Iterable[str | None]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([c for c in languages if c and _known(c)] + ["en"]))


def values_ready(source: str | None, target: str) -> bool:
    """Are the patterns a segment of *source* -> *target* and its answer are read with built?
    The first time a pair is met, building them takes ~1 s of CPU (regexes of every month,
    weekday and currency name of both languages): an async caller builds them with
    :func:`prepare_values` in a thread, so the event loop (every tab's socket) is not held."""
    return _codes([source, target]) in _PATTERNS and _codes([target, source]) in _PATTERNS


def prepare_values(source: str | None, target: str) -> None:
    """Build what :func:`values_ready` asks about (in a worker thread). One build at a time:
    a burst of messages in a new pair waits for the first one's, instead of each building the
    same patterns again."""
    with _BUILDING:
        warm_up()  # a process that did not read the tables at its start (the API alone)
        _patterns(_codes([source, target]))
        _patterns(_codes([target, source]))


async def values_prepared(source: str | None, target: str) -> None:
    """The pair's patterns built, in a worker thread the first time (~1 s of CPU), so that an
    async caller never holds the event loop (every tab's socket) for them."""
    if not values_ready(source, target):
        await asyncio.to_thread(prepare_values, source, target)


def warm_up() -> None:
    """Read the per-process table (the digits of every script: ~0.05 s of CPU) now, at the app's
    start, instead of inside the first message."""
    _ascii_table()


def _build_patterns(codes: tuple[str, ...]) -> _Patterns:
    v = _merge(codes)
    lists = _Lists()
    months = _bounded(v.months, lists)
    periods = _bounded(v.periods, lists)
    currency = _bounded(v.currencies, lists)
    # ISO codes, upper case: three capitals first (one class test where most positions fail)
    iso = r"(?-i:(?<![A-Za-z])(?=[A-Z]{3}(?![A-Za-z]))" + lists.name(_ISO) + ")"
    num = NUMBER
    day = r"(?P<d>\d{1,2})(?!\d|[:.,]\d)"
    nocase = regex.IGNORECASE
    return _Patterns(
        vocab=v,
        iso_date=re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})[-/.](?P<d>\d{1,2})(?!\d)"),
        cjk_date=re.compile(r"(?:(?P<y>\d{4})\s*[年년]\s*)?(?P<m>\d{1,2})\s*[月월]\s*"
                            r"(?P<d>\d{1,2})\s*[日号號일]"),
        numeric_date=re.compile(r"(?<![\d.,/])(?P<a>\d{1,2})(?P<s>[/.-])(?P<b>\d{1,2})"
                                r"(?:(?P=s)(?P<y>\d{4}|\d{2}))?(?![\d/]|[.,]\d)"),
        day_month=lists.compile(r"(?<![\d.,])" + day + r"(?:st|nd|rd|th|er|e|\.|º|ª)?\s*"
                                r"(?:de\s+|of\s+)?(?P<mon>" + months + r")"
                                r"(?:\.?\s*(?:de\s+)?,?\s*(?P<y>\d{4})(?!\d))?", nocase),
        month_day=lists.compile(r"(?P<mon>" + months + r")\.?(?:འི་ཚེས་|\s*)" + day
                                + r"(?:st|nd|rd|th)?(?:,?\s*(?P<y>\d{4})(?!\d))?", nocase),
        clock=lists.compile(r"(?:(?P<p1>" + periods + r")\s*)?(?<![\d.,:])(?P<h>\d{1,2})\s*"
                            r"(?:[:：]\s*(?P<m>\d{2})|h\s*(?P<mh>\d{1,2}))(?!\d)"
                            r"(?:\s*(?P<p2>" + periods + r")\.?)?", nocase),
        cjk_time=lists.compile(r"(?:(?P<p1>" + periods + r")\s*)?(?P<h>\d{1,2})\s*" + _CLOCK
                               + r"(?:\s*(?P<m>\d{1,2})\s*[分분]|\s*(?P<half>" + _HALF + "))?"),
        hour_period=lists.compile(r"(?:(?P<p1>" + periods + r")\s*(?P<h1>\d{1,2})(?![\d:.,]))"
                                  r"|(?:(?<![\d.,:])(?P<h2>\d{1,2})\s*(?P<p2>" + periods
                                  + r")\.?)|(?:(?<![\d.,:])(?P<h3>\d{1,2})\s?h(?![\w]))", nocase),
        amount_after=lists.compile(r"(?P<num>" + num + r")\s?(?P<cur>" + currency + "|" + iso
                                   + ")", nocase),
        amount_before=lists.compile(r"(?P<cur>" + currency + "|" + iso + r")\s?(?P<num>" + num
                                    + ")", nocase),
        percent=lists.compile(r"(?P<num>" + num + r")\s?(?:%|(?P<w>" + _bounded(v.percent, lists)
                              + r"))|%\s?(?P<num2>" + num + r")|(?:百分之|퍼센트)(?P<num3>" + num
                              + ")", nocase),
        weekday=lists.compile(_weekday_regex(v.weekdays, lists), nocase),
        unit=lists.compile(lists.name(v.units), nocase),
    )


def _weekday_regex(names: dict[str, int], lists: _Lists) -> str:
    """Weekday names; in spaced scripts also with an ending ("пятницу", "금요일에")."""
    spaced = [w for w in names if not _UNSPACED.search(w)]
    unspaced = [w for w in names if _UNSPACED.search(w)]
    parts = []
    if spaced:
        stems = {(w[:-1] if len(w) >= 5 else w) for w in spaced}
        parts.append(r"(?<!" + LETTER + ")" + lists.name(stems) + LETTER + "{0,3}(?!"
                     + LETTER + ")")
    if unspaced:
        parts.append(lists.name(unspaced))
    return "|".join(parts) or r"(?!x)x"


def _span_free(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    return all(end <= s or start >= e for s, e in taken)


def _month_of(vocab: _Vocabulary, name: str) -> int | None:
    return vocab.months.get(_clean(name))


def _valid(month: int, day: int) -> bool:
    try:
        date(2000, month, day)
    except ValueError:
        return False
    return True


def _hour_keys(hour: int, minute: int, period: str | None) -> frozenset[int]:
    if hour > 24 or minute > 59:
        return frozenset()
    if period == "am" and hour > 12:
        return frozenset({-1})  # "上午14:30": says two things, agrees with no source time
    if period == "pm" and hour < 12:
        return frozenset({(hour + 12) * 60 + minute})
    if period == "am" and hour == 12:
        return frozenset({minute})
    if period or hour == 0 or hour >= 12:  # an unmarked "12 h" is noon, never midnight
        return frozenset({(hour % 24) * 60 + minute})
    return frozenset({hour * 60 + minute, ((hour + 12) % 24) * 60 + minute})


def extract_values(text: str, languages: Iterable[str | None] | str) -> list[Value]:
    """Every value in *text*, read with the vocabularies of *languages* (and English), in order.

    A piece of text belongs to one value: dates and times first, then amounts, percentages,
    durations, weekdays, and the numbers left over. Codes CLDR does not know are skipped.
    """
    if isinstance(languages, str):
        languages = [languages]
    codes = _codes(languages)
    pats = _patterns(codes)
    vocab = pats.vocab
    norm = to_ascii_digits(text)
    # Every pattern but the weekdays' needs a digit: a text without one (most chat lines) is
    # not scanned by them at all (eleven patterns and three number passes, ~10-30 µs each).
    numeric = norm if _DIGIT.search(norm) else ""
    found: list[Value] = []
    # Order numbers, e-mails, URLs, placeholders are spans of their own (text.protect).
    taken: list[tuple[int, int]] = [(s.start, s.end) for s in find_spans(text)]

    def add(kind: str, start: int, end: int, keys: Iterable[object], nums: Iterable[Decimal],
            sure: bool = True) -> None:
        keys = frozenset(keys)
        if keys and _span_free(taken, start, end):
            found.append(Value(kind, text[start:end], start, end, keys, frozenset(nums), sure))
            taken.append((start, end))

    def date_keys(m: int, d: int, y: str | None) -> list[tuple[int, int]]:
        return [(m, d)] if _valid(m, d) else []

    match: re.Match[str] | regex.Match[str]
    for match in pats.iso_date.finditer(numeric):
        m, d = int(match["m"]), int(match["d"])
        add("date", *match.span(), date_keys(m, d, match["y"]), [Decimal(m), Decimal(d)])
    for match in pats.cjk_date.finditer(numeric):
        m, d = int(match["m"]), int(match["d"])
        add("date", *match.span(), date_keys(m, d, match["y"]), [Decimal(m), Decimal(d)])
    for pattern in (pats.day_month, pats.month_day):
        for match in pattern.finditer(numeric):
            month = _month_of(vocab, match["mon"])
            if month is None:
                continue
            d = int(match["d"])
            add("date", *match.span(), date_keys(month, d, match["y"]), [Decimal(d)])
    for match in pats.numeric_date.finditer(numeric):
        a, b, sep = int(match["a"]), int(match["b"]), match["s"]
        if sep != "/" and not match["y"]:
            continue  # "1.5" or "3-4" without a year is a number or a range, not a date
        keys = [k for k in ((a, b), (b, a)) if _valid(*k)]
        add("date", *match.span(), keys, [Decimal(a), Decimal(b)])

    def period(*names: str | None) -> str | None:
        for name in names:
            if name:
                return vocab.periods.get(_clean(name))
        return None

    for match in pats.clock.finditer(numeric):
        h, m = int(match["h"]), int(match["m"] or match["mh"])
        add("time", *match.span(), _hour_keys(h, m, period(match["p1"], match["p2"])),
            [Decimal(h)])
    for match in pats.cjk_time.finditer(numeric):
        h = int(match["h"])
        m = 30 if match["half"] else int(match["m"] or 0)
        add("time", *match.span(), _hour_keys(h, m, period(match["p1"])), [Decimal(h)])
    for match in pats.hour_period.finditer(numeric):
        h = int(match["h1"] or match["h2"] or match["h3"])
        p = period(match["p1"], match["p2"])
        if match["h3"] and h > 24:
            continue
        add("time", *match.span(), _hour_keys(h, 0, p), [Decimal(h)])

    for pattern in (pats.amount_after, pats.amount_before):
        for match in pattern.finditer(numeric):
            token = _clean(match["cur"])
            currencies = vocab.currencies.get(token) or (
                frozenset({match["cur"].upper()}) if match["cur"].upper() in _ISO else None)
            if not currencies:
                continue
            nums = number_values(match["num"])
            sure = token in vocab.strong or match["cur"].upper() in _ISO
            add("amount", *match.span(), {(n, c) for n in nums for c in currencies}, nums, sure)
    for match in pats.percent.finditer(numeric):
        raw = match["num"] or match["num2"] or match["num3"]
        nums = number_values(raw)
        add("percent", *match.span(), nums, nums)
    for match in _NUMBER.finditer(numeric):
        after = norm[match.end():match.end() + 24]
        unit = _unit_after(pats, after)
        if unit is None:
            continue
        start, end = match.start(), match.end() + unit[1]
        nums = number_values(match.group())
        add("duration", start, end, {(n, unit[0]) for n in nums}, nums)
    if _UNIT_FIRST & set(codes):
        for match in _NUMBER.finditer(numeric):
            before = norm[max(0, match.start() - 12):match.start()].rstrip(" ")
            for word, unit_name in sorted(vocab.units.items(), key=lambda kv: -len(kv[0])):
                if _UNSPACED.search(word) and before.endswith(word):
                    nums = number_values(match.group())
                    add("duration", match.start() - (len(norm[:match.start()])
                                                     - len(norm[:match.start()].rstrip(" "))
                                                     + len(word)), match.end(),
                        {(n, unit_name) for n in nums}, nums)
                    break
    for match in pats.weekday.finditer(norm):
        name = _clean(match.group())
        index = _weekday_of(vocab, name)
        if index is not None:
            add("weekday", *match.span(), {index}, [])
    for match in _NUMBER.finditer(numeric):
        nums = number_values(match.group())
        add("number", *match.span(), nums, nums)
    found.sort(key=lambda v: v.start)
    return found


_TWO_WORDS = regex.compile(r"[ \t\u00a0]?(" + LETTER + r"+)(?:[ \t\u00a0]+(" + LETTER + "+))?")


def _unit_after(pats: _Patterns, after: str) -> tuple[str, int] | None:
    """(unit, characters to its end) when a duration unit follows a number closely.

    Spaced scripts: the next word or the one after, which starts with or contains a unit
    word ("3 business days", "3 Werktagen", "3 дня"); unspaced: within a few characters
    ("3个工作日", "3週間").
    """
    units = pats.vocab.units
    for match in pats.unit.finditer(after[:6]):
        word = match.group().casefold()
        gap = after[:match.start()]
        gap = gap[1:] if gap[:1] == " " else gap  # "3 个工作日": the classifier 个 may sit between
        if _UNSPACED.search(word) and len(gap) <= 2 and not re.search(r"[\d\W]", gap):
            return units[word], match.end()
    # The next two words, separated by spaces only (no digit, no punctuation in between).
    words = _TWO_WORDS.match(after)
    if words is None:
        return None
    for group in (1, 2):
        word = (words.group(group) or "").casefold()
        if not word or _UNSPACED.search(word):
            break
        for unit_word, unit in units.items():
            if word == unit_word or (len(unit_word) >= 3 and unit_word in word
                                     and not _UNSPACED.search(unit_word)):
                return unit, words.end(group)
    return None


def _weekday_of(vocab: _Vocabulary, name: str) -> int | None:
    if name in vocab.weekdays:
        return vocab.weekdays[name]
    for full, index in sorted(vocab.weekdays.items(), key=lambda kv: -len(kv[0])):
        stem = full[:-1] if len(full) >= 5 else full
        if not _UNSPACED.search(full) and name.startswith(stem) and len(name) <= len(full) + 3:
            return index
    return None


# --------------------------------------------------------------------------------------------
# Writing a value in a target language
# --------------------------------------------------------------------------------------------


def _fraction_digits(number: Decimal) -> int:
    exponent = number.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def format_value(value: Value, target: str) -> str | None:
    """*value* as the target language writes it, or None when its meaning is not certain
    (an ambiguous "1,234", "9:00" without AM/PM): then the original is kept as written."""
    loc = _locale(target)
    if value.kind in ("date",) and len(value.keys) == 1:
        (month, day), = value.keys
        year = re.search(r"\d{4}", to_ascii_digits(value.text))
        if year:
            return format_skeleton("yMMMMd", date(int(year.group()), month, day), locale=loc)
        return format_skeleton("MMMMd", date(2000, month, day), locale=loc)
    if value.kind == "time" and len(value.keys) == 1:
        (minutes,) = value.keys
        if not re.search(r"[^\W\d_]", value.text.replace("h", "")):
            return None  # "09:00" as written: reformatting could only add a guess
        return format_time(time(minutes // 60 % 24, minutes % 60), "short", locale=loc)
    if value.kind == "amount" and len(value.keys) == 1 and value.sure:
        (number, currency), = value.keys
        pattern = copy.copy(loc.currency_formats["standard"])
        digits = _fraction_digits(number)
        pattern.frac_prec = (digits, digits)
        return str(pattern.apply(number, loc, currency=currency, currency_digits=False))
    if value.kind == "percent" and len(value.keys) == 1:
        (number,) = value.keys
        pattern = copy.copy(loc.percent_formats[None])
        digits = _fraction_digits(number)
        pattern.frac_prec = (digits, digits)
        return str(pattern.apply(number / 100, loc))
    if value.kind == "number" and len(value.keys) == 1:
        (number,) = value.keys
        digits = _fraction_digits(number)
        if number >= 1000 or digits:
            pattern = copy.copy(loc.decimal_formats[None])
            pattern.frac_prec = (digits, digits)
            return str(pattern.apply(number, loc))
        return None
    return None
