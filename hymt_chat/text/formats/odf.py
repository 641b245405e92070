"""OpenDocument text, presentations and spreadsheets (.odt, .odp, .ods; OASIS ODF 1.3).

The text of all three is ``text:p`` and ``text:h`` paragraphs (ODF 1.3 part 3 §5.1), in
``content.xml`` (the body, tables, frames, slide notes) and ``styles.xml`` (headers and footers
of the master pages, §16.10). A paragraph goes as one tagged sentence: ``text:span`` and
``text:a`` as paired tags (their style kept), spaces, tabs, line breaks, frames, fields and
``text:note`` as kept atoms — a footnote's own paragraphs are translated as paragraphs. In a
spreadsheet, a cell with ``office:value-type`` other than ``string`` (a number, a date, a
percentage…, §19.385) keeps its text, which is the value's display, and a formula cell
(``table:formula``) is never touched. Everything else in the package is copied.
"""

from __future__ import annotations

from typing import Literal

from lxml import etree

from hymt_chat.text.formats.base import Source, Unit
from hymt_chat.text.formats.inline import Mixed, plain_of
from hymt_chat.text.formats.safety import FormatError, open_package, refuse_macros
from hymt_chat.words.said import said

__all__ = ["read_odf"]

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_PAIRED = {f"{{{TEXT}}}span", f"{{{TEXT}}}a"}
_PARAS = (f"{{{TEXT}}}p", f"{{{TEXT}}}h")


def _classify(el: etree._Element) -> Literal["pair", "atom"]:
    return "pair" if el.tag in _PAIRED else "atom"


def _value_cell(p: etree._Element) -> bool:
    """A paragraph inside a spreadsheet cell that holds a number, date or formula."""
    for anc in p.iterancestors(f"{{{TABLE}}}table-cell"):
        kind = anc.get(f"{{{OFFICE}}}value-type")
        return anc.get(f"{{{TABLE}}}formula") is not None or (kind not in (None, "string"))
    return False


def read_odf(data: bytes, label: str) -> Source:
    package = open_package(data, label)
    refuse_macros(package, label)
    if any(n.startswith(("Basic/", "Scripts/")) for n in package.names()):
        raise FormatError(f"{label} contains macros; documents with macros are not "
                          "translated.").saying("file_macros")
    if "content.xml" not in package.data:
        raise FormatError(f"{label} is damaged or not an OpenDocument file (content.xml is "
                          "missing).").saying("file_damaged")
    trees: dict[str, etree._ElementTree] = {}
    units: list[Unit] = []
    values = 0
    for name in ("content.xml", "styles.xml"):
        if name not in package.data:
            continue
        tree = package.parse(name)
        trees[name] = tree
        for p in tree.iter(*_PARAS):
            if _value_cell(p):
                values += 1
                continue
            mixed = Mixed(p, _classify)
            if any(ch.isalpha() for ch in plain_of(mixed.tagged)):
                units.append(Unit.of(mixed))

    def serialize() -> bytes:
        return package.write({name: etree.tostring(tree, xml_declaration=True, encoding="UTF-8")
                              for name, tree in trees.items()})

    return Source(units, serialize, [said("kept_values", count=values)] if values else [])
