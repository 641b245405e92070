"""Does the back-translation still say what the writer wrote? Meaning, not surface words.

A reply is translated for its reader, then back into the writer's language; both texts are
then in one language, so the checks here are monolingual. Surface similarity cannot tell a
paraphrase ("Yes, of course." / "Yes, sure.") from a flipped meaning ("Please send me a
photo." / "I can't provide a photo."), so each check looks for one kind of change and says it
in one sentence the writer can act on:

* **negation**: a not/never/no (their forms in each language, :mod:`.meaning_words`) added or
  dropped; idioms that only look negative ("no problem", "不客气") are taken out first;
* **antonym**: a word swapped for its opposite ("in stock" → "out of stock"), or a state for
  another of the same thing ("broken" → "late");
* **name**: a person's or organisation's name the back-translation lacks or changed;
* **omission** / **addition**: a clause of the text that the back-translation lacks where it
  is the text less that clause (or a whole sentence lacking, the rest reworded), and the
  other way round.

Pure; a few milliseconds for a chat line, so callers judge in a worker thread
(:func:`hymt_chat.text.verdict.judged`). Values (numbers, dates, amounts) are :mod:`hymt_chat.text.checks`' job.
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass

from hymt_chat.text.checks import Finding, spelled_numbers
from hymt_chat.text.meaning_words import (
    FUNCTION_WORDS,
    NAMED,
    NEGATION_PARTS,
    NEGATIVE_WORDS,
    NEGATORS,
    NEUTRAL,
    OPPOSITES,
    UNSPACED,
)
from hymt_chat.text.values import calendar_words, to_ascii_digits
from hymt_chat.words.said import said as worded

__all__ = ["meaning_findings", "missing_numbers", "names", "negations", "numbers", "reads",
           "similarity", "words"]

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*'?")
_CLAUSE = re.compile(r"[.!?;:,。！？；：，、\n]+|\s[-–—]\s")
# "and" joins two things said; "but", "because" stay inside their clause (their words count).
_CONJUNCTIONS = {"en": ("and",), "es": ("y", "e"), "fr": ("et",), "de": ("und",),
                 "pt": ("e",), "it": ("e", "ed"), "nl": ("en",)}
_CJK_CLAUSE = re.compile(r"和|并且|並且|并|並|而且|然后|然後")
_NAME_STOP = frozenset({"i", "mr", "mrs", "ms", "dr", "sir", "madam", "ok", "okay"})


def _fold(text: str) -> str:
    """Lower-case, apostrophes made one, compatibility forms folded."""
    return unicodedata.normalize("NFKC", text).replace("’", "'").casefold()


def _plain(word: str) -> str:
    """Without accents: "llegó" and "llego" are one word to compare."""
    return "".join(ch for ch in unicodedata.normalize("NFD", word)
                   if not unicodedata.combining(ch))


@functools.cache
def _neutral(language: str) -> re.Pattern[str] | None:
    phrases = sorted(NEUTRAL.get(language, ()), key=len, reverse=True)
    if not phrases:
        return None
    edge = "" if language in UNSPACED else r"(?<!\w)"
    tail = "" if language in UNSPACED else r"(?!\w)"
    return re.compile(edge + "(?:" + "|".join(map(re.escape, phrases)) + ")" + tail)


def _without_neutral(folded: str, language: str) -> str:
    """*folded* without the idioms that only look negative ("no problem" in "no problem",
    not in "piano problem")."""
    pattern = _neutral(language)
    return pattern.sub(" ", folded) if pattern is not None else folded


def _words(folded: str) -> list[str]:
    return _WORD.findall(folded)


def negations(text: str, language: str | None) -> list[str]:
    """The negation cues of *text*, in order ("don't", "no", "不"), words that carry a
    negation ("expired", "unusual") included."""
    lang = language or ""
    folded = _without_neutral(_fold(text), lang)
    cues: list[str] = []
    words = _words(folded)
    negators = NEGATORS.get(lang, frozenset())
    if lang == "fr":
        ne = [w for w in words if w in ("ne", "n'") or w.startswith("n'")]
        rest = [w for w in words if w in ("sans", "ni")]
        if not ne:
            rest += [w for w in words if w in ("pas", "jamais", "rien", "aucun", "aucune")]
        cues = ["ne" for _ in ne] + rest
    elif lang not in UNSPACED:
        cues = [w for w in words if w in negators or (lang == "en" and w.endswith("n't"))]
    for part in NEGATION_PARTS.get(lang, ()):
        cues += [part.strip()] * folded.count(part)
    stems = NEGATIVE_WORDS.get(lang, ())
    if lang in UNSPACED:
        cues += [stem for stem in stems for _ in range(folded.count(stem))]
    else:
        cues += [w for w in words if any(_plain(w).startswith(_plain(st)) for st in stems)]
    return cues


def _negative_clauses(text: str, language: str) -> list[list[str]]:
    """The cues of each clause that says "not" (an odd number of them: "not unusual" is
    positive), in order."""
    out = []
    for clause in _clauses(text, language):
        cues = negations(clause.text, language)
        if len(cues) % 2:
            out.append(cues)
    return out


def _matches(entry: str, folded: str, words: list[str], unspaced: bool) -> bool:
    """Is *entry* (a word stem or a phrase of :data:`OPPOSITES`) in the text? *words* are
    the text's words without accents."""
    if unspaced:
        return entry in folded
    if " " in entry or "'" in entry:
        return f" {entry} " in f" {folded} " or re.search(
            rf"(?<!\w){re.escape(entry)}(?!\w)", folded) is not None
    if len(entry) < 4:
        return entry in words
    plain = _plain(entry)
    return any(w.startswith((plain, "re" + plain)) for w in words)


def _which(slot: tuple[str, ...], folded: str, words: list[str], unspaced: bool) -> str | None:
    return next((e for e in slot if _matches(e, folded, words, unspaced)), None)


def _opposites(original: str, back: str, language: str) -> list[Finding]:
    unspaced = language in UNSPACED
    a, b = _fold(original), _fold(back)
    wa, wb = [_plain(w) for w in _words(a)], [_plain(w) for w in _words(b)]
    out: list[Finding] = []
    seen: set[tuple[str, str]] = set()
    for group in OPPOSITES.get(language, ()):
        for i, mine in enumerate(group):
            said = _which(mine, a, wa, unspaced)
            if said is None or _which(mine, b, wb, unspaced) is not None:
                continue  # not in the text, or still in the back-translation
            for j, other in enumerate(group):
                if i == j:
                    continue
                instead = _which(other, b, wb, unspaced)
                if instead is not None and _which(other, a, wa, unspaced) is None and (
                        said, instead) not in seen:
                    seen.add((said, instead))
                    other_thing = worded("the_opposite" if len(group) == 2 else "something_else")
                    out.append(Finding.of("antonym", "antonym", said, instead, instead=instead,
                                          said=said, other=other_thing))
    return out


def _negation(original: str, back: str, language: str) -> list[Finding]:
    if not reads(language):
        return []
    mine, theirs = _negative_clauses(original, language), _negative_clauses(back, language)
    if len(mine) == len(theirs):
        return []
    if len(theirs) > len(mine):
        extra = [c for cues in theirs for c in cues]
        shown = ", ".join(f"“{w}”" for w in dict.fromkeys(extra))
        return [Finding.of("negation", "negation_added", "", ", ".join(dict.fromkeys(extra)),
                           shown=shown)]
    lost = [c for cues in mine for c in cues]
    shown = ", ".join(f"“{w}”" for w in dict.fromkeys(lost))
    return [Finding.of("negation", "negation_lost", ", ".join(dict.fromkeys(lost)),
                       shown=shown)]


# --- names --------------------------------------------------------------------------------------

_NAME = re.compile(r"[^\W\d_][^\W\d_'’-]*(?:[-'’][^\W\d_]+)*")
_SENTENCE_END = re.compile(r"[.!?¿¡:\"“”«»()\n]\s*$")
_ZH_NAME = re.compile(r"(?:[\u4e00-\u9fff]{1,3}?(?:先生|女士|小姐|经理|經理|老师|老師)"
                      r"|[小老][\u4e00-\u9fff](?=[，。！？、\s]|$|[说讲聊沟联打发给跟和的都在是也还]))")
_DE_TITLES = frozenset({"frau", "herr", "herrn", "dr", "firma"})
_ACRONYMS = frozenset({"ok", "am", "pm", "id", "pdf", "faq", "sms", "usb", "vat", "iva", "tva",
                       "mwst", "eu", "us", "uk", "tv", "pc", "gps", "qr", "pin"})


def _capitalised(word: str) -> bool:
    """ "Maria", "PayPal", "DHL", "eBay": a capital first (or inside) and the word not all
    lower case."""
    if len(word) >= 3 and word[0].islower() and any(ch.isupper() for ch in word[1:]):
        return True  # eBay, iPhone
    if len(word) < 2 or not word[:1].isupper():
        return False
    # Capitals of two letters are codes ("EN", "US", "ID"), not names; of three, firms ("DHL").
    return any(ch.islower() for ch in word[1:]) or (
        word.isupper() and word.isalpha() and len(word) >= 3)


def names(text: str, language: str | None, translation: str = "") -> list[str]:
    """The people's and organisations' names of *text*, each as often as it occurs: words
    capitalised inside a sentence (in German only after a title, or when the translation has
    them too: every German noun is capitalised), a sentence's first word when a capitalised
    word follows it ("Maria Lopez"), acronyms ("DHL"), Latin words in a text of another
    script, and for Chinese a surname before a title ("王先生"), "小张", and known firms."""
    found: list[str] = []
    lang = language or ""
    calendar = _calendar(lang)
    matches = list(_NAME.finditer(text))
    latin_text = any(ch.isalpha() and ch.isascii() for ch in text[:200]) and lang not in UNSPACED
    for k, match in enumerate(matches):
        word = match.group()
        folded = _fold(word)
        if not _capitalised(word) or folded in _NAME_STOP or folded in calendar or (
                folded in _ACRONYMS):
            continue
        if not _plain(word).isascii():
            continue  # a cased script other than Latin (Cyrillic, Greek): not read here
        if not latin_text:
            found.append(word)  # a Latin word in Chinese, Japanese…: a name or a brand
            continue
        before = text[:match.start()]
        initial = not before.strip() or _SENTENCE_END.search(before) is not None
        following = matches[k + 1] if k + 1 < len(matches) else None
        if initial and not word.isupper() and not _kept(word, translation, lang) and not (
                following and _capitalised(following.group())
                and text[match.end():following.start()].strip() == ""):
            continue  # a sentence's first word: a name only when the translation keeps it
        previous = _fold(matches[k - 1].group()) if k else ""
        if lang == "de" and not word.isupper() and previous not in _DE_TITLES and (
                word not in translation):
            continue
        found.append(word)
    if lang in ("zh", "zh-Hant", "yue"):
        found += [m.group(0) for m in _ZH_NAME.finditer(text)]
        found += [n for n in NAMED.get("zh", ()) for _ in range(_count_named(text, n))]
    return found


@functools.cache
def _calendar(language: str) -> frozenset[str]:
    """Month and weekday names (of *language* and English): values, not names."""
    return calendar_words(language) | calendar_words("en")


def _kept(word: str, translation: str, language: str) -> bool:
    """Does the translation carry *word* as written (a name does; "No", "Total" are words)?"""
    folded = _fold(word)
    if len(word) < 3 or folded in FUNCTION_WORDS.get(language, ()) or any(
            folded in words for words in NEGATORS.values()):
        return False
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", translation) is not None


def _count_named(text: str, name: str) -> int:
    """How often *name* occurs, not as part of a longer known name ("微信" in "微信支付")."""
    longer = [n for n in NAMED.get("zh", ()) if name in n and n != name]
    for other in longer:
        text = text.replace(other, "")
    return text.count(name)


def _names(original: str, back: str, language: str, translation: str) -> list[Finding]:
    mine = Counter(names(original, language, translation))
    theirs = Counter(names(back, language, translation))
    folded_original = _plain(_fold(original))
    new = [n for n in theirs if _plain(_fold(n)) not in folded_original]
    # A name the back-translation gained that the translation carries as written: the
    # translation named someone else ("Juan de facturación" for "Maria from billing").
    brought = [n for n in new if n in translation and (language in UNSPACED or n.isascii())]
    folded_back = Counter(_plain(_fold(n)) for n in theirs.elements())
    back_text = _plain(_fold(back))
    lost = [n for n, count in mine.items()
            if _plain(_fold(n)) not in back_text
            or (count > folded_back[_plain(_fold(n))] and new)]
    out = []
    for name in lost:
        if new:
            out.append(Finding.of("name", "name_lost_instead", name, ", ".join(new), name=name,
                                  instead=", ".join(new)))
        else:
            out.append(Finding.of("name", "name_lost", name, name=name))
    if not out and brought:
        shown = ", ".join(brought)
        out.append(Finding.of("name", "name_added", "", shown, shown=shown))
    return out


# --- omissions and additions ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Clause:
    text: str
    content: tuple[str, ...]


def _content(text: str, language: str) -> tuple[str, ...]:
    """The words that carry content: four letters or more and not a function word (as stems,
    four letters); for a text without spaces, its letters. Idioms ("no problem") are out."""
    folded = _without_neutral(_fold(text), language)
    stop = FUNCTION_WORDS.get(language, frozenset())
    if language in UNSPACED:
        return tuple(ch for ch in folded if ch.isalpha() and ch not in stop)
    return tuple(_plain(w)[:4] for w in _words(folded) if len(w) >= 4 and w not in stop)


def _clauses(text: str, language: str) -> list[_Clause]:
    unspaced = language in UNSPACED
    pieces = _CLAUSE.split(text)
    if unspaced:
        pieces = [p for piece in pieces for p in _CJK_CLAUSE.split(piece)]
    else:
        words = _CONJUNCTIONS.get(language, ())
        if words:
            pattern = re.compile(rf"\s(?:{'|'.join(words)})\s", re.IGNORECASE)
            pieces = [p for piece in pieces for p in pattern.split(piece)]
    return [_Clause(p.strip(), _content(p, language)) for p in pieces if p.strip()]


def _missing_clauses(text: list[_Clause], other: set[str]) -> list[str]:
    lost = []
    for clause in text:
        if clause.content and not any(c in other for c in clause.content):
            lost.append(clause.text)  # not one of its words is there
    return lost


_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*")
_BIG = 3
"""A whole sentence of this many content words missing from (or added to) a back-translation
with fewer (more) sentences is flagged even when the rest is reworded."""


def _sentences(text: str, language: str) -> list[_Clause]:
    return [_Clause(p.strip(), _content(p, language)) for p in _SENTENCE.split(text) if p.strip()]


def _part_missing(text: str, other: str, language: str) -> list[str]:
    """The clauses of *text* that *other* lacks entirely, when *other* is *text* less those:
    *text* has more clauses and every clause of *other* is found in *text*; or, where the
    rest is reworded, a whole sentence (three content words or more) that *other* lacks while
    it has the other sentences."""
    ours, theirs = set(_content(text, language)), set(_content(other, language))
    if not ours or not theirs:
        return []
    mine, others = _clauses(text, language), _clauses(other, language)
    if len(mine) > len(others) and not _missing_clauses(others, ours):
        lost = _missing_clauses(mine, theirs)
        if lost:
            return lost
    sentences = _sentences(text, language)
    if len(sentences) > len(_sentences(other, language)):
        gone = [s for s in sentences if not any(c in theirs for c in s.content)]
        if gone and all(len(s.content) >= _BIG for s in gone) and len(gone) < len(sentences):
            return [s.text for s in gone]
    return []


def _lengths(original: str, back: str, language: str) -> list[Finding]:
    """A part of the text the back-translation lacks (omission), or a part it has more
    (addition); reworded clauses on both sides are a paraphrase."""
    lost = _part_missing(original, back, language)
    if lost:
        shown = "; ".join(f"“{c}”" for c in lost)
        return [Finding.of("omission", "omission", "; ".join(lost), shown=shown)]
    added = _part_missing(back, original, language)
    if added:
        shown = "; ".join(f"“{c}”" for c in added)
        return [Finding.of("addition", "addition", "", "; ".join(added), shown=shown)]
    return []


def reads(language: str | None) -> bool:
    """Do the meaning checks know *language* (its negation cues at least)?"""
    return language in NEGATORS or language in NEGATION_PARTS


def meaning_findings(original: str, back: str, language: str | None,
                     translation: str = "") -> tuple[Finding, ...]:
    """What the back-translation *back* says differently from *original* (both in
    *language*, the writer's); *translation* (the text sent) helps tell names from nouns."""
    lang = language or ""
    negated, swapped = _negation(original, back, lang), _opposites(original, back, lang)
    if negated and swapped:
        # "not available" / "sold out": a negation dropped and an opposite taken say the same;
        # unless the opposite is the negation ("successful" / "failed").
        swapped_words = {_fold(w) for f in swapped for w in (f.original, f.found)}
        cues = {_fold(c) for f in negated for c in f"{f.original}, {f.found}".split(", ") if c}
        negated = []
        if not any(c.startswith(w) or w.startswith(c) for c in cues for w in swapped_words):
            swapped = []
    found = negated + swapped
    found += _names(original, back, lang, translation)
    found += _lengths(original, back, lang)
    return tuple(found)


_NUMBER = re.compile(r"\d+(?:[.,'’\u00a0\u202f]\d+)*")
_SEPARATORS = re.compile(r"[.,'’\u00a0\u202f]")


_TIME = re.compile(r"\b\d{1,2}(?:[:.h]\d{2})?\s*(?:[ap]\.?\s?m\.?|h\b|uhr\b|heures?\b)"
                   r"|\b\d{1,2}[:h]\d{2}\b", re.IGNORECASE)


def numbers(text: str, language: str | None = None) -> Counter[str]:
    """Every number, as ASCII digits without separators ("1,000.50" -> "100050"), and with a
    *language*, its numbers written as words ("three" -> "3") too; times of day are left to
    the value checks, which read "3 PM" and "15:00" as one time."""
    digits = to_ascii_digits(text)
    if language is not None:
        digits = _TIME.sub(" ", digits)
    found = Counter(_SEPARATORS.sub("", n) for n in _NUMBER.findall(digits))
    found.update(str(value) for _, value in spelled_numbers(text, language))
    return found


def missing_numbers(source: str, other: str, language: str | None = None) -> list[str]:
    """Numbers of *source* (as written there, or as digits for words) that *other* does not
    have as often; see :func:`numbers` for *language*."""
    have = numbers(other, language)
    out: list[str] = []
    for key, count in numbers(source, language).items():
        short = count - have[key]
        out += [key] * max(0, short)
    return out


def _unspaced_char(ch: str) -> bool:
    """Scripts written without spaces between words: each character counts as a word."""
    cp = ord(ch)
    return (0x0E00 <= cp <= 0x0EFF or 0x1000 <= cp <= 0x109F or 0x1780 <= cp <= 0x17FF
            or 0x0F00 <= cp <= 0x0FFF or 0x2E80 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF
            or 0x20000 <= cp <= 0x323AF)


def words(text: str) -> list[str]:
    """Lower-cased words, digits left out; unspaced scripts split into characters."""
    out: list[str] = []
    for word in _WORD.findall(_fold(text)):
        if any(_unspaced_char(ch) for ch in word):
            out += [ch for ch in word if ch.isalpha()]
        else:
            out.append(word.rstrip("'"))
    return out


def similarity(original: str, back: str) -> float:
    """Surface likeness of two texts, 0..1 (word-set Jaccard and difflib's ratio, averaged):
    shown beside a back-translation, and a floor for an answer about something else."""
    a, b = words(original), words(back)
    if not a and not b:
        return 1.0
    if not a or not b:
        return 0.0
    jaccard = len(set(a) & set(b)) / len(set(a) | set(b))
    ratio = difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    return round((jaccard + ratio) / 2, 3)
