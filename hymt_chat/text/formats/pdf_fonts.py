"""Which installed font draws a text: the Noto font of its script, found on the system.

reportlab embeds a TrueType font as a subset of the glyphs drawn (``TTFont``: glyf outlines
only, so CJK comes from WenQuanYi Micro Hei, the CJK font setup installs, whose outlines are
TrueType; Noto CJK is CFF). A text's script is the Unicode name's first word of its first
letter outside Latin (``ARABIC``, ``CJK``, ``HANGUL``…); the font is the first candidate that
exists and has a glyph for every letter, else the one that covers most.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

__all__ = ["FONT_DIRS", "FontBook", "script_of"]

FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"))

_LATIN = ("NotoSans-Regular.ttf", "DejaVuSans.ttf", "LiberationSans-Regular.ttf")
_CJK = ("wqy-microhei.ttc", "wqy-zenhei.ttc", "DroidSansFallbackFull.ttf")
_BY_SCRIPT: dict[str, tuple[str, ...]] = {
    "ARABIC": ("NotoSansArabic-Regular.ttf", "NotoNaskhArabic-Regular.ttf", "DejaVuSans.ttf"),
    "HEBREW": ("NotoSansHebrew-Regular.ttf", "DejaVuSans.ttf"),
    "CJK": _CJK, "HIRAGANA": _CJK, "KATAKANA": _CJK, "HANGUL": _CJK, "BOPOMOFO": _CJK,
    "IDEOGRAPHIC": _CJK, "FULLWIDTH": _CJK,
    "THAI": ("NotoSansThai-Regular.ttf", "NotoSerifThai-Regular.ttf"),
    "DEVANAGARI": ("NotoSansDevanagari-Regular.ttf",),
    "BENGALI": ("NotoSansBengali-Regular.ttf",),
    "GUJARATI": ("NotoSansGujarati-Regular.ttf",),
    "TAMIL": ("NotoSansTamil-Regular.ttf",),
    "TELUGU": ("NotoSansTelugu-Regular.ttf",),
    "KHMER": ("NotoSansKhmer-Regular.ttf",),
    "MYANMAR": ("NotoSansMyanmar-Regular.ttf",),
    "TIBETAN": ("NotoSerifTibetan-Regular.ttf",),
    "MONGOLIAN": ("NotoSansMongolian-Regular.ttf",),
}


def script_of(text: str) -> str:
    """The script of *text*'s first letter outside Latin (``LATIN`` if all are Latin)."""
    for ch in text:
        if ch.isalpha() and ord(ch) > 0x24F:
            word = unicodedata.name(ch, "LATIN").split()[0]
            return "CJK" if word in ("CJK", "IDEOGRAPHIC") else word
    return "LATIN"


@dataclass(slots=True)
class FontBook:
    """Fonts found under *dirs*, registered with reportlab as they are first needed."""

    dirs: tuple[Path, ...] = FONT_DIRS
    _paths: dict[str, Path] = field(default_factory=dict)
    _loaded: dict[Path, TTFont] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for folder in self.dirs:
            if folder.is_dir():
                for path in sorted(folder.rglob("*.tt[fc]")):
                    self._paths.setdefault(path.name, path)

    def font_for(self, text: str) -> str:
        """The reportlab name of the font that draws *text* best (registered on first use);
        PDF's own Helvetica (Latin-1 only, not embedded) on a system without TrueType fonts."""
        font = self._choose(text)
        return str(font.fontName) if font is not None else "Helvetica"

    def path_for(self, text: str) -> Path | None:
        """The file of the font that draws *text* best (for Pillow), None if there is none."""
        font = self._choose(text)
        return next((path for path, loaded in self._loaded.items() if loaded is font), None)

    def _choose(self, text: str) -> TTFont | None:
        wanted = {ch for ch in text if ch.isalnum()}
        names = _BY_SCRIPT.get(script_of(text), ()) + _LATIN + _CJK
        best: tuple[int, TTFont] | None = None
        for name in names:
            font = self._load(name)
            if font is None:
                continue
            covered = sum(ord(ch) in font.face.charToGlyph for ch in wanted)
            if covered == len(wanted):
                return font
            if best is None or covered > best[0]:
                best = (covered, font)
        return best[1] if best is not None else None

    def _load(self, name: str) -> TTFont | None:
        path = self._paths.get(name)
        if path is None:
            return None
        if path not in self._loaded:
            font = TTFont(f"hymt-{path.stem}", str(path), subfontIndex=0)
            pdfmetrics.registerFont(font)
            self._loaded[path] = font
        return self._loaded[path]
