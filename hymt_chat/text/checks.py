"""Does a translation say the same numbers, amounts, dates and names as its source?

:func:`check_translation` compares a source text and the model's answer and returns one
:class:`Finding` per problem, each with a ``kind`` and a sentence the user reads ("The amount
259 元 may be wrong in this translation (it says $259)."):

* values (:mod:`hymt_chat.text.values`): amounts with their currency, dates, times, weekdays,
  durations, percentages and numbers. A value agrees when the answer has one of the same kind
  whose meaning overlaps — "1.234,50 €" for "€1,234.50" agrees, "259 euros" for "259 元" does
  not. A value is flagged when the answer has a *different* one of its kind (changed) or not
  even its number (dropped); an answer that keeps the number but words it in a way the CLDR
  vocabulary does not know is left alone, since a false alarm teaches users to ignore alarms;
* protected spans (order and tracking numbers, e-mails, URLs, placeholders): verbatim;
* the answer's language (where detection is sure), runs of the source's script left in it
  (only for non-Latin sources: Latin runs in a translation are mostly names and brands), the
  number of lines, and parenthetical explanations the source did not have.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hymt_chat.lang.detect import count_scripts, detect_other_than, script_of
from hymt_chat.lang.languages import CODES
from hymt_chat.text.meaning_words import NUMBER_WORDS, UNSPACED
from hymt_chat.text.protect import find_spans, strip_tokens
from hymt_chat.text.values import (
    NUMBER,
    Value,
    calendar_words,
    extract_values,
    number_values,
    to_ascii_digits,
)
from hymt_chat.words.said import Code, Said, said

__all__ = ["KINDS", "Finding", "check_translation", "score", "spelled_numbers"]

KINDS = ("amount", "date", "time", "weekday", "duration", "percent", "number", "order", "email",
         "url", "placeholder", "language", "leftover", "lines", "gloss",
         # what a back-translation tells (hymt_chat.text.meaning), and the agent mode's own
         "negation", "antonym", "name", "omission", "addition", "drift", "agent")
LANGUAGE_CONFIDENCE = 0.9
"""Detection must be at least this sure before an answer is said to be in another language."""
SMALL_NUMBER = 10
"""Bare numbers up to this are often written as words ("3 items" -> "trois articles"): only
their kinds with a unit (durations, amounts, times…) are checked."""

# What a value of each kind is called in a sentence (the catalogs' ``value_<kind>``).
_NAMES = {kind: said(f"value_{kind}") for kind in
          ("amount", "date", "time", "weekday", "duration", "percent", "number")}
_SPAN_KINDS = {"order": ("order", said("value_order")), "number": ("order", said("value_number")),
               "email": ("email", said("value_email")), "url": ("url", said("value_url")),
               "placeholder": ("placeholder", said("value_placeholder")),
               "code": ("placeholder", said("value_code")),
               "literal": ("placeholder", said("value_reference"))}
# The scripts each target language is written in (a source script outside them is a leftover).
_TARGET_SCRIPTS: dict[str, frozenset[str]] = {
    **{code: frozenset({"latin"}) for code in
       ["en", "fr", "pt", "es", "tr", "it", "de", "vi", "ms", "id", "tl", "pl", "cs", "nl"]},
    **{code: frozenset({"cyrillic"}) for code in ["ru", "uk", "kk"]},
    "mn": frozenset({"cyrillic", "mongolian"}),
    **{code: frozenset({"arabic"}) for code in ["ar", "fa", "ur", "ug"]},
    **{code: frozenset({"devanagari"}) for code in ["hi", "mr"]},
    **{code: frozenset({"han"}) for code in ("zh", "zh-Hant", "yue")},
    # Korean is written in Hangul: Hanja in a translation are Chinese left over (measured: the
    # demo model answered "包裹将于 12월 3日送达" for Korean).
    "ja": frozenset({"han", "kana"}), "ko": frozenset({"hangul"}),
    "th": frozenset({"thai"}), "bo": frozenset({"tibetan"}), "km": frozenset({"khmer"}),
    "my": frozenset({"myanmar"}), "he": frozenset({"hebrew"}), "gu": frozenset({"gujarati"}),
    "te": frozenset({"telugu"}), "ta": frozenset({"tamil"}), "bn": frozenset({"bengali"}),
}
_FAMILY = {"zh-Hant": "zh", "yue": "zh", "ms": "id"}


def _family_of(target: str) -> frozenset[str]:
    """The table codes an answer in *target* may be detected as (zh, zh-Hant and yue are one
    family; so are id and ms)."""
    family = _FAMILY.get(target, target)
    return frozenset(c for c in CODES if _FAMILY.get(c, c) == family)


_PAREN = re.compile(r"\([^()\n]{2,}\)|（[^（）\n]+）")
_NUMBER_RE = re.compile(NUMBER)
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: ``kind`` (see :data:`KINDS`) and the sentence shown to the user."""

    kind: str
    message: str
    original: str = ""  # the source's value as written ("259 元"), if the finding is about one
    found: str = ""  # what the translation has instead, when known ("$259")
    # The sentence as the catalogs word it, for a page's language (``message`` is its English).
    said: Said | None = field(default=None, compare=False)

    @classmethod
    def of(cls, kind: str, key: str, original: str = "", found: str = "",
           **slots: object) -> Finding:
        """The finding whose sentence is the chat's message *key* (English in ``message``)."""
        sentence = said(key, **slots)
        return cls(kind, str(sentence), original, found, sentence)


def score(findings: tuple[Finding, ...] | list[Finding]) -> int:
    """Lower is better: how a retried answer is compared with the first one."""
    return len(findings)



def _all_numbers(text: str, values: list[Value]) -> set:  # type: ignore[type-arg]
    out: set = set()  # type: ignore[type-arg]
    for value in values:
        out |= value.numbers
    for match in _NUMBER_RE.finditer(to_ascii_digits(text)):
        out |= number_values(match.group())
    return out


def _value_findings(source_values: list[Value], answer_values: list[Value],
                    answer: str, spelled: frozenset[int] = frozenset()) -> list[Finding]:
    findings: list[Finding] = []
    answer_numbers = _all_numbers(answer, answer_values)
    bare_numbers = {n for v in answer_values if v.kind == "number" for n in v.numbers}
    for value in source_values:
        name = _NAMES[value.kind]
        same_kind = [w for w in answer_values if w.kind == value.kind]
        if any(value.agrees(w) for w in same_kind):
            continue
        if value.kind == "number":
            if any(n > SMALL_NUMBER or n != int(n) for n in value.numbers) and not (
                    value.numbers & answer_numbers):
                findings.append(Finding.of("number", "value_missing", value.text,
                                           what=name, value=value.text))
            continue
        changed = [w for w in same_kind
                   if not any(w.agrees(s) for s in source_values if s.kind == w.kind)]
        if changed:
            shown = ", ".join(w.text for w in changed)
            findings.append(Finding.of(value.kind, "value_wrong", value.text, shown, what=name,
                                       value=value.text, shown=shown))
        elif value.kind == "amount" and value.sure and value.numbers & bare_numbers:
            findings.append(Finding.of("amount", "amount_no_currency", value.text,
                                       value=value.text))
        elif value.numbers and not value.numbers & answer_numbers:
            findings.append(Finding.of(value.kind, "value_missing", value.text, what=name,
                                       value=value.text))
        elif value.kind == "weekday" and not same_kind:
            findings.append(Finding.of("weekday", "value_missing", value.text, what=name,
                                       value=value.text))
    findings += _added(source_values, answer_values, findings, spelled)
    return findings


_ADDED_KINDS = ("amount", "date", "time", "weekday", "duration")


def _added(source_values: list[Value], answer_values: list[Value],
           found: list[Finding], spelled: frozenset[int] = frozenset()) -> list[Finding]:
    """Values the answer invents ("until 30 June" -> "for 6 months from 30 June"): of a kind
    whose source values all agree with the answer (else the change is reported already), and
    not the source's number written as a word ("quatorze jours" -> "14 days")."""
    reported = {f.kind for f in found}
    out = []
    for value in answer_values:
        if value.kind not in _ADDED_KINDS or value.kind in reported or (
                value.numbers and all(n == int(n) and int(n) in spelled for n in value.numbers)):
            continue
        if not any(value.agrees(s) for s in source_values):
            out.append(Finding.of(value.kind, "value_added", "", value.text,
                                  what=_NAMES[value.kind], value=value.text))
    return out


_DIGITS = re.compile(r"(?<![\d.,])\d{1,3}(?![\d.,]?\d)")


def spelled_numbers(text: str, language: str | None) -> list[tuple[str, int]]:
    """Numbers written as words ("quatorze" -> 14), which CLDR's values do not read; a Chinese
    numeral inside a name ("星期三", "三星") is not a count."""
    table = NUMBER_WORDS.get(language or "", {})
    if not table:
        return []
    folded = text.casefold()
    if language in UNSPACED:
        return [(ch, table[ch]) for i, ch in enumerate(folded)
                if ch in table and not _in_compound(folded, i)]
    return [(w, table[w]) for w in re.findall(r"[^\W\d_]+", folded) if w in table]


def _in_compound(text: str, i: int) -> bool:
    return text[max(0, i - 2):i] in ("星期", "礼拜") or text[i + 1:i + 2] in ("星", "月", "号", "日")


def _spelled_findings(source: str, answer: str, source_lang: str | None,
                      target: str) -> list[Finding]:
    """A number written as a word that the answer has neither as a word nor in digits, while
    it has another the source does not: "quatorze jours" -> "eight days"."""
    said = spelled_numbers(source, source_lang)
    if not said or not NUMBER_WORDS.get(target):
        return []
    answer_words = spelled_numbers(answer, target)
    have = {v for _, v in answer_words} | {int(d) for d in _DIGITS.findall(to_ascii_digits(
        answer))}
    known = {v for _, v in said} | {int(d) for d in _DIGITS.findall(to_ascii_digits(source))}
    others = [w for w, v in answer_words if v not in known]
    return [Finding.of("number", "value_wrong", word, ", ".join(others), what=_NAMES["number"],
                       value=word, shown=", ".join(others))
            for word, value in dict(said).items() if value not in have and others]


def _span_findings(source: str, answer: str) -> list[Finding]:
    findings = []
    for span in find_spans(source):
        if span.kind == "literal":
            continue  # "[2]": a caller's own placeholder (the agent mode checks its spans)
        kind, label = _SPAN_KINDS.get(span.kind, ("placeholder", said("value_placeholder")))
        if span.original not in answer:
            findings.append(Finding.of(kind, "value_missing", span.original, what=label,
                                       value=span.original))
    return findings


def _dominant_script(text: str) -> str | None:
    counts = count_scripts(ch for ch in text if ch.isalpha())
    if counts.get("kana"):  # Japanese: kanji and kana are one writing system
        counts["kana"] += counts.pop("han", 0)
    return max(counts, key=counts.__getitem__) if counts else None


def _latin_leftovers(source: str, answer: str, source_lang: str | None, target: str
                     ) -> list[str]:
    """Latin words left in an answer are mostly names and brands; a source month or weekday
    name left as it was ("Fridayに", "el Freitag", "31 december") is not — unless the target
    writes it the same way."""
    names = calendar_words(source_lang) - calendar_words(target)
    in_source = {w.casefold() for w in _LATIN_WORD.findall(source)}
    return [w for w in _LATIN_WORD.findall(answer)
            if w.casefold() in names and w.casefold() in in_source]


def _leftovers(source: str, answer: str, target: str, source_lang: str | None = None
               ) -> list[str]:
    script = _dominant_script(strip_tokens(source))
    expected = _TARGET_SCRIPTS.get(target)
    if script == "latin":
        return _latin_leftovers(source, answer, source_lang, target)
    if not script or script == "other" or expected is None or script in expected:
        return []
    scripts = ({"kana", "han"} if script == "kana" else {script}) - expected
    protected = {s.original for s in find_spans(source)}
    runs, run = [], ""
    for ch in answer + " ":
        if not ch.isspace() and not ch.isdigit() and script_of(ch) in scripts:
            run += ch  # letters, vowel signs and the script's own marks (Tibetan tsheg)
        else:
            if (sum(c.isalpha() for c in run) >= (1 if script in ("han", "kana") else 2)
                    and run not in protected):
                runs.append(run)
            run = ""
    return runs


TARGET_SCRIPT_SHARE = 0.25
"""An answer with this share of its letters in the target's (non-Latin) script is in the target
language: the rest are names and brands ("您的 Apple iPhone 今天发货")."""


def _written_in_target(text: str, target: str) -> bool:
    expected = _TARGET_SCRIPTS.get(target, frozenset())
    if not expected or expected == {"latin"}:
        return False
    counts = count_scripts(ch for ch in text if ch.isalpha())
    letters = sum(counts.values())
    return bool(letters) and sum(n for s, n in counts.items() if s in expected) >= (
        TARGET_SCRIPT_SHARE * letters)


def _lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


def check_translation(source: str, answer: str, source_lang: str | None, target: str, *,
                      source_values: list[Value] | None = None) -> tuple[Finding, ...]:
    """Every problem of *answer* as a translation of *source* into *target*, in order of kind.

    Pure: no model call. *source_lang* may be None (auto-detection was unsure).
    *source_values*: ``extract_values(source, [source_lang, target])``, when the caller read
    them already (a retried answer is checked against the same source).
    """
    findings: list[Finding] = []
    if source_values is None:
        source_values = extract_values(source, [source_lang, target])
    answer_values = extract_values(answer, [target, source_lang])
    spelled = frozenset(v for _, v in spelled_numbers(source, source_lang))
    findings += _value_findings(source_values, answer_values, answer, spelled)
    findings += _spelled_findings(source, answer, source_lang, target)
    findings += _span_findings(source, answer)

    plain = strip_tokens(answer)
    # An answer mostly in the target's own script is in the target: no detection needed.
    written_in, confidence = ((None, 0.0) if _written_in_target(plain, target)
                              else detect_other_than(plain, _family_of(target),
                                                     LANGUAGE_CONFIDENCE))
    if (written_in and confidence >= LANGUAGE_CONFIDENCE
            and _FAMILY.get(written_in, written_in) != _FAMILY.get(target, target)):
        findings.append(Finding.of("language", "translation_looks_like", found=written_in,
                                   language=Code(written_in), target=Code(target)))
    left = _leftovers(source, answer, target, source_lang)
    if left:
        shown = ", ".join(dict.fromkeys(left))
        findings.append(Finding.of("leftover", "leftover", found=shown, shown=shown))
    want, got = _lines(source), _lines(answer)
    if want > 1 and got != want:
        findings.append(Finding.of("lines", "lines_differ", want=want, got=got))
    added = [m.group() for m in _PAREN.finditer(answer)]
    if len(added) > len(_PAREN.findall(source)):
        extra = added[len(_PAREN.findall(source)):] if _PAREN.search(source) else added
        findings.append(Finding.of("gloss", "gloss", found=" ".join(extra),
                                   extra=" ".join(extra)))
    order = {kind: i for i, kind in enumerate(KINDS)}
    findings.sort(key=lambda f: order.get(f.kind, len(order)))
    return tuple(findings)
