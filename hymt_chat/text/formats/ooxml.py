"""Word, PowerPoint and Excel files (Office Open XML, ECMA-376): only their text is touched.

The package is read by :mod:`hymt_chat.text.formats.safety` and every part that is not text is
copied byte for byte (images, charts, styles, relationships): python-docx, python-pptx and
openpyxl read and write the same parts, but openpyxl drops shapes and images on a round trip, so
the parts are edited here with lxml and the libraries check the result in the tests.

* **.docx** (ECMA-376 Part 1 §17): the ``w:p`` paragraphs of the body (tables included), of
  headers and footers, footnotes, endnotes and comments; a paragraph's runs go as one tagged
  sentence (``w:r`` with its ``w:rPr``), hyperlinks and content controls (``w:sdt``, §17.5.2)
  as paired tags, tabs, breaks, drawings and fields as kept atoms.
* **.pptx** (§19, §21.1.2): the ``a:p`` paragraphs of the slides and of their notes (tables and
  grouped shapes included), ``a:br`` and ``a:fld`` (slide numbers, dates) kept.
* in all three, DrawingML text outside the body: chart titles and axis titles, SmartArt, text
  boxes on a sheet (a chart's category labels are cached cell values, left to the cells).
* **.xlsx** (§18.4): the shared strings table (``xl/sharedStrings.xml``) and inline strings
  (``t="inlineStr"``, each ``<is>`` parsed alone and spliced back into the sheet's bytes: a
  sheet of a million empty cells is never parsed whole); a cell that holds a number, a date, a
  boolean or a formula holds no string there and is never touched.
* ``.docm``/``.xlsm``/``.pptm`` and any package with a VBA project are refused.
"""

from __future__ import annotations

import re

from lxml import etree

from hymt_chat.text.formats.base import Source, Unit
from hymt_chat.text.formats.inline import RunRules, Runs
from hymt_chat.text.formats.safety import FormatError, open_package, parse_xml, refuse_macros
from hymt_chat.words.said import said

__all__ = ["read_docx", "read_pptx", "read_refused", "read_xlsx"]

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _q(ns: str, *names: str) -> frozenset[str]:
    return frozenset(f"{{{ns}}}{n}" for n in names)


WORD = RunRules(
    run=_q(W, "r"), text=f"{{{W}}}t", props=f"{{{W}}}rPr", head=_q(W, "pPr"),
    silent=_q(W, "bookmarkStart", "bookmarkEnd", "commentRangeStart", "commentRangeEnd"),
    dropped=_q(W, "proofErr"), ignorable=_q(W, "lastRenderedPageBreak"),
    containers=_q(W, "hyperlink", "smartTag", "ins", "sdt"),
    holders=((f"{{{W}}}sdt", f"{{{W}}}sdtContent"),), preserve=True,
    unseen=_q(W, "lang", "noProof"))
SLIDE = RunRules(run=_q(A, "r"), text=f"{{{A}}}t", props=f"{{{A}}}rPr", head=_q(A, "pPr"),
                 tail=_q(A, "endParaRPr"),  # PowerPoint writes lang="…" dirty="0" on every run
                 unseen=frozenset({"lang", "altLang", "dirty", "err", "smtClean", "noProof"}))
CELL = RunRules(run=_q(S, "r", "t"), text=f"{{{S}}}t", props=f"{{{S}}}rPr", head=frozenset(),
                tail=_q(S, "rPh", "phoneticPr"), preserve=True)

_WORD_PARTS = re.compile(r"^word/(document|header\d*|footer\d*|footnotes|endnotes|comments)\.xml$")
_SLIDE_PARTS = re.compile(r"^ppt/(slides/slide|notesSlides/notesSlide)\d+\.xml$")
# DrawingML text in any of the three: chart titles and labels (c:rich, §21.2.2.156), SmartArt's
# data and its drawing cache (both hold the text; PowerPoint shows the cache), sheet drawings.
_DRAWING_PARTS = re.compile(r"^(word|ppt|xl)/(charts/chart|diagrams/(data|drawing)|drawings/"
                            r"drawing)\d+\.xml$")
_SHEETS = re.compile(r"^xl/worksheets/sheet\d+\.xml$")


def _has_letters(tagged: str) -> bool:
    return any(ch.isalpha() for ch in re.sub(r"<[^<>]*>|&\w+;", "", tagged))


Flavour = tuple[re.Pattern[str], str, RunRules]  # which parts, their paragraph tag, their runs
_DRAWING: Flavour = (_DRAWING_PARTS, f"{{{A}}}p", SLIDE)


def _read(data: bytes, label: str, flavours: list[Flavour], main: str) -> Source:
    package = open_package(data, label)
    refuse_macros(package, label)
    if main not in package.data:
        raise FormatError(f"{label} is damaged or not what its name says ({main} is "
                          "missing).").saying("file_damaged")
    trees: dict[str, etree._ElementTree] = {}
    units: list[Unit] = []
    wordless = 0
    for name in package.names():
        found = next((f for f in flavours if f[0].match(name)), None)
        if found is None:
            continue
        _, para, rules = found
        tree = package.parse(name)
        trees[name] = tree
        for p in tree.iter(para):
            runs = Runs(p, rules)
            if _has_letters(runs.tagged):
                units.append(Unit.of(runs))
            elif runs.tagged.strip():
                wordless += 1

    def serialize() -> bytes:
        return package.write({name: etree.tostring(tree, xml_declaration=True, encoding="UTF-8",
                                                   standalone=True)
                              for name, tree in trees.items()})

    return Source(units, serialize,
                  [said("kept_number_paragraphs", count=wordless)] if wordless else [])


def read_refused(label: str) -> Source:
    """A macro-enabled Office file (.docm, .xlsm, .pptm…): refused by its name alone."""
    raise FormatError(f"{label} is a macro-enabled Office file; documents with macros are not "
                      "translated. Save it as .docx, .xlsx or .pptx and send it "
                      "again.").saying("file_macros")


def read_docx(data: bytes, label: str) -> Source:
    return _read(data, label, [(_WORD_PARTS, f"{{{W}}}p", WORD), _DRAWING], "word/document.xml")


def read_pptx(data: bytes, label: str) -> Source:
    return _read(data, label, [(_SLIDE_PARTS, f"{{{A}}}p", SLIDE), _DRAWING],
                 "ppt/presentation.xml")


_INLINE = re.compile(rb"<(?:(\w+):)?is>.*?</(?:\w+:)?is>", re.DOTALL)
_ENTITY = re.compile(rb"<!ENTITY", re.IGNORECASE)


class _InlineStrings:
    """A sheet's inline strings, each ``<is>`` element parsed alone; the rest stays bytes."""

    def __init__(self, raw: bytes, label: str) -> None:
        if _ENTITY.search(raw):
            raise FormatError(f"{label} declares XML entities: refused.").saying("file_unsafe")
        self.raw = raw
        self.spans: list[tuple[int, int, etree._Element]] = []
        for m in _INLINE.finditer(raw):
            prefix = m.group(1)
            attr = b"xmlns:" + prefix if prefix else b"xmlns"
            opening = b"<" + (prefix + b":" if prefix else b"") + b"is"
            fragment = m.group(0).replace(opening, opening + b" " + attr + b'="'
                                          + S.encode() + b'"', 1)
            self.spans.append((m.start(), m.end(), parse_xml(fragment, label).getroot()))

    def serialize(self) -> bytes:
        out, pos = [], 0
        for start, end, element in self.spans:
            out += [self.raw[pos:start], etree.tostring(element, encoding="UTF-8",
                                                        xml_declaration=False)]
            pos = end
        out.append(self.raw[pos:])
        return b"".join(out)


def read_xlsx(data: bytes, label: str) -> Source:
    """Shared strings, then the inline strings of the sheets that have any."""
    package = open_package(data, label)
    refuse_macros(package, label)
    if "xl/workbook.xml" not in package.data:
        raise FormatError(f"{label} is damaged or not an Excel workbook (xl/workbook.xml is "
                          "missing).").saying("file_damaged")
    shared: dict[str, etree._ElementTree] = {}
    sheets: dict[str, _InlineStrings] = {}
    units: list[Unit] = []
    for name in package.names():
        if _DRAWING_PARTS.match(name):  # text boxes and chart titles: DrawingML paragraphs
            tree = package.parse(name)
            shared[name] = tree
            for p in tree.iter(f"{{{A}}}p"):
                runs = Runs(p, SLIDE)
                if _has_letters(runs.tagged):
                    units.append(Unit.of(runs))
            continue
        if name == "xl/sharedStrings.xml":
            tree = package.parse(name)
            shared[name] = tree
            items = list(tree.iter(f"{{{S}}}si"))
        elif _SHEETS.match(name) and b"inlineStr" in package.data[name]:
            sheet = _InlineStrings(package.data[name], f"{label} ({name})")
            package.charge(sum(end - start for start, end, _ in sheet.spans))
            sheets[name] = sheet
            items = [element for _, _, element in sheet.spans]
        else:
            continue
        for item in items:
            runs = Runs(item, CELL)
            if _has_letters(runs.tagged):
                units.append(Unit.of(runs))

    def serialize() -> bytes:
        changed = {name: etree.tostring(tree, xml_declaration=True, encoding="UTF-8",
                                        standalone=True) for name, tree in shared.items()}
        changed.update({name: sheet.serialize() for name, sheet in sheets.items()})
        return package.write(changed)

    return Source(units, serialize, [said("kept_office")])
