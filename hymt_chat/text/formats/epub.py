"""EPUB 2 and 3 books: every XHTML content document of the package, as web pages are.

The book is found as EPUB Open Container Format 3.3 says (§4.2.6): ``META-INF/container.xml``
names the package document (``rootfile``), whose ``manifest`` lists the content documents
(``media-type="application/xhtml+xml"``, EPUB 3.3 §5.6.3); each is translated block by block
by :mod:`hymt_chat.text.formats.webpage` (the navigation document too: it is XHTML). Everything
else (the package document, styles, images, fonts, the ``mimetype`` entry first and stored, as
OCF §4.2.3 requires) is copied as it was.
"""

from __future__ import annotations

import posixpath

from lxml import etree

from hymt_chat.text.formats.base import Source, Unit
from hymt_chat.text.formats.safety import FormatError, open_package, parse_xml
from hymt_chat.text.formats.webpage import read_xhtml, summary
from hymt_chat.words.said import said

__all__ = ["read_epub"]

_CONTAINER = "urn:oasis:names:tc:opendocument:xmlns:container"
_OPF = "http://www.idpf.org/2007/opf"


def read_epub(data: bytes, label: str) -> Source:
    package = open_package(data, label)
    if "META-INF/container.xml" not in package.data:
        raise FormatError(f"{label} is damaged or not an EPUB (META-INF/container.xml is "
                          "missing).").saying("file_damaged")
    container = parse_xml(package.data["META-INF/container.xml"], f"{label} (container.xml)")
    rootfile = container.getroot().find(f".//{{{_CONTAINER}}}rootfile")
    opf_path = rootfile.get("full-path") if rootfile is not None else None
    if not opf_path or opf_path not in package.data:
        raise FormatError(f"{label} is damaged (its package document is missing).").saying(
            "file_damaged")
    opf = parse_xml(package.data[opf_path], f"{label} ({opf_path})")
    base = posixpath.dirname(opf_path)
    chapters = [posixpath.normpath(posixpath.join(base, item.get("href") or ""))
                for item in opf.getroot().iter(f"{{{_OPF}}}item")
                if item.get("media-type") == "application/xhtml+xml"]
    trees: dict[str, etree._ElementTree] = {}
    units: list[Unit] = []
    kept = 0
    for name in chapters:
        if name not in package.data:
            continue
        package.charge(len(package.data[name]))
        tree, found, marked = read_xhtml(package.data[name], f"{label} ({name})")
        trees[name] = tree
        units += found
        kept += marked

    def serialize() -> bytes:
        return package.write({name: etree.tostring(tree, xml_declaration=True, encoding="utf-8",
                                                   doctype=tree.docinfo.doctype or None)
                              for name, tree in trees.items()})

    code = any(summary(tree.getroot(), 0) for tree in trees.values())
    notes = ([said("kept_code")] if code else []) + (
        [said("kept_marked_elements", count=kept)] if kept else [])
    return Source(units, serialize, notes)
