"""Text found in a picture by Tesseract (Debian's ``tesseract-ocr``), read from its TSV output.

Tesseract is run as its command, ``tesseract stdin stdout -l LANGS --psm 3 tsv`` (the TSV
renderer, Tesseract 4+: one row per page, block, paragraph, line and word with ``left top width
height conf text``), the picture handed over as PNG on stdin; no binding to build, and a
picture that hangs it is killed at :data:`OCR_SECONDS`. A paragraph is one block: its words
joined in Tesseract's reading order (its layout analysis orders blocks and lines), with no space
between two CJK characters.

Which language data (:meth:`Tesseract.choose`): the script first — Tesseract's orientation and
script detection (``--psm 0``, ``osd.traineddata``) names the main one —, its installed
languages, English, and one language of each other installed script, since a sign or a
screenshot often mixes scripts; the detector (:func:`hymt_chat.lang.detect.detect_language`)
then names the language of the text found.
"""

from __future__ import annotations

import csv
import io
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

__all__ = ["OCR_SECONDS", "TESSERACT_CODES", "OcrBlock", "Tesseract"]

OCR_SECONDS = 60.0
_ENV = {"OMP_THREAD_LIMIT": "1"}
"""Tesseract's OpenMP threads spin-wait for each other: on a busy 2-core host an A4 page took
22.9 s with them and 6.5 s with one thread (benchmarks/pdf_and_ocr.py's page, measured under
load); the chat's other work gets the other core."""
MAX_LANGUAGES = 6
"""Language data Tesseract reads one picture with: each one more costs time (a 900 x 620 sign
in four scripts: 1.4 s with three Latin languages, which lose its Japanese and Arabic lines;
2.1 s with five, which read every line)."""
MIN_CONFIDENCE = 30.0
"""Words Tesseract is less sure of than this (0-100) are noise: a texture read as letters."""

TESSERACT_CODES: dict[str, str] = {
    "en": "eng", "fr": "fra", "de": "deu", "es": "spa", "pt": "por", "it": "ita", "nl": "nld",
    "pl": "pol", "cs": "ces", "tr": "tur", "vi": "vie", "ms": "msa", "id": "ind", "tl": "tgl",
    "ru": "rus", "uk": "ukr", "kk": "kaz", "mn": "mon", "ar": "ara", "fa": "fas", "ur": "urd",
    "ug": "uig", "he": "heb", "hi": "hin", "mr": "mar", "gu": "guj", "bn": "ben", "ta": "tam",
    "te": "tel", "th": "tha", "km": "khm", "my": "mya", "bo": "bod", "ja": "jpn", "ko": "kor",
    "zh": "chi_sim", "zh-Hant": "chi_tra", "yue": "chi_tra",
}
"""Our languages -> Tesseract's language data (ISO 639-2/T names, as Debian's packages)."""
_SCRIPTS: dict[str, tuple[str, ...]] = {
    "Latin": ("eng", "fra", "deu", "spa", "por", "ita", "nld", "pol", "ces", "tur", "vie", "msa",
              "ind", "tgl"),
    "Cyrillic": ("rus", "ukr", "kaz", "mon"),
    "Arabic": ("ara", "fas", "urd", "uig"),
    "Hebrew": ("heb",), "Devanagari": ("hin", "mar"), "Gujarati": ("guj",),
    "Bengali": ("ben",), "Tamil": ("tam",), "Telugu": ("tel",), "Thai": ("tha",),
    "Khmer": ("khm",), "Myanmar": ("mya",), "Tibetan": ("bod",),
    "Japanese": ("jpn",), "Katakana": ("jpn",), "Hiragana": ("jpn",),
    "Hangul": ("kor",), "Korean": ("kor",),
    "Han": ("chi_sim", "chi_tra", "jpn"),
}
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")


@dataclass(frozen=True, slots=True)
class OcrBlock:
    """A paragraph Tesseract found: its words and box in the picture's pixels."""

    left: int
    top: int
    right: int
    bottom: int
    text: str
    lines: int = 1


@dataclass(slots=True)
class Tesseract:
    """The installed ``tesseract`` and its language data."""

    binary: str
    _langs: list[str] = field(default_factory=list)

    @classmethod
    def find(cls) -> Tesseract | None:
        path = shutil.which("tesseract")
        return cls(path) if path else None

    def languages(self) -> list[str]:
        """The installed language data (``--list-langs``), read once."""
        if not self._langs:
            run = subprocess.run([self.binary, "--list-langs"], capture_output=True, text=True,
                                 timeout=OCR_SECONDS, check=False, env=_env())
            self._langs = [line.strip() for line in run.stdout.splitlines()[1:] if line.strip()]
        return self._langs

    def script(self, png: bytes) -> str | None:
        """The script Tesseract's detection names (``Latin``, ``Arabic``, ``Japanese``…), or
        None when it cannot tell (too few letters) or has no ``osd`` data."""
        if "osd" not in self.languages():
            return None
        run = subprocess.run([self.binary, "stdin", "stdout", "--psm", "0"], input=png,
                             capture_output=True, timeout=OCR_SECONDS, check=False, env=_env())
        found = re.search(rb"^Script: (\w+)", run.stdout, re.M)
        return found.group(1).decode() if found else None

    def choose(self, script: str | None, source: str | None = None) -> list[str]:
        """The language data to read with: the *source* language's when it is named and
        installed; else the detected script's installed languages first (up to three), English,
        then one language of each other installed script (a sign in French, Japanese and
        Arabic is read whole), :data:`MAX_LANGUAGES` in all; else all installed, as many."""
        have = [lang for lang in self.languages() if lang != "osd"]
        if source and TESSERACT_CODES.get(source) in have:
            return [TESSERACT_CODES[source]]
        if script is None or script not in _SCRIPTS:
            return have[:MAX_LANGUAGES]
        first = [lang for lang in _SCRIPTS[script] if lang in have][:3]
        others = [next((lang for lang in langs if lang in have), None)
                  for name, langs in _SCRIPTS.items() if name != script]
        chosen = [*first, *(["eng"] if "eng" in have else []), *(o for o in others if o)]
        return list(dict.fromkeys(chosen))[:MAX_LANGUAGES]

    def read(self, png: bytes, langs: list[str]) -> list[OcrBlock]:
        """The paragraphs in *png*, in Tesseract's reading order."""
        if not langs:
            raise OSError("Tesseract has no language data installed")
        run = subprocess.run(
            [self.binary, "stdin", "stdout", "-l", "+".join(langs), "--psm", "3", "tsv"],
            input=png, capture_output=True, timeout=OCR_SECONDS, check=False, env=_env())
        if run.returncode:
            raise OSError(run.stderr.decode(errors="replace").strip() or "tesseract failed")
        return parse_tsv(run.stdout.decode("utf-8", errors="replace"))


def _env() -> dict[str, str]:
    return {**os.environ, **_ENV}


def parse_tsv(tsv: str) -> list[OcrBlock]:
    """Tesseract's TSV (level 5 rows are words) as paragraphs, in its order."""
    words: dict[tuple[int, int, int], list[dict[str, str]]] = {}
    for row in csv.DictReader(io.StringIO(tsv), delimiter="\t", quoting=csv.QUOTE_NONE):
        if row.get("level") != "5" or not (row.get("text") or "").strip():
            continue
        if float(row.get("conf") or -1) < MIN_CONFIDENCE:
            continue
        key = (int(row["page_num"]), int(row["block_num"]), int(row["par_num"]))
        words.setdefault(key, []).append(row)
    blocks = []
    for rows in words.values():
        left = min(int(r["left"]) for r in rows)
        top = min(int(r["top"]) for r in rows)
        right = max(int(r["left"]) + int(r["width"]) for r in rows)
        bottom = max(int(r["top"]) + int(r["height"]) for r in rows)
        text = ""
        for r in rows:
            word = r["text"].strip()
            if text and not (_CJK.match(word[:1]) and _CJK.match(text[-1:])):
                text += " "
            text += word
        lines = len({r["line_num"] for r in rows})
        if any(ch.isalnum() for ch in text):
            blocks.append(OcrBlock(left, top, right, bottom, text, lines))
    return blocks
