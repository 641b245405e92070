"""TMX 1.4b, the translation-memory exchange format, written and read with lxml, streaming.

**Out** (:func:`write_tmx`): one ``<tu>`` per entry, its direction in ``srclang``, two
``<tuv>``; who corrected it (``creationid``), when (``creationdate``), how often it was used
(``usagecount``), and hymt-chat's origin in ``<prop type="x-hymt-origin">`` (corrected,
imported, machine). Written element by element (``lxml.etree.xmlfile``): a million entries
never sit in memory.

**In** (:func:`read_tmx`): ``iterparse`` over ``<tu>`` elements, each cleared once read, with
the parser told never to resolve entities, load a DTD or touch the network — an XXE payload or
a "billion laughs" expands to nothing, and a ``<seg>`` that uses an entity is refused (its text
would be silently shortened). A unit's source is its ``srclang`` (else the header's; ``*all*``:
every ordered pair of its languages). Units hymt-chat cannot use are skipped and counted
(:class:`ReadReport`): a model's entries (``x-hymt-origin=machine``: this deployment's model
makes its own), languages outside the 38, inline markup (``<bpt>``, ``<ph>``…), empty
segments. Broken XML raises :class:`TmxError` with the line: the caller imports in one
transaction, so nothing of a broken file is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import permutations
from typing import IO

from lxml import etree

from hymt_chat.errors import InputError
from hymt_chat.lang.languages import find_language
from hymt_chat.store.memory import CORRECTED, IMPORTED, MACHINE, Entry, TeamEntry, line_pairs
from hymt_chat.text.cleanup import clean_text

__all__ = ["ReadReport", "TmxError", "read_tmx", "write_tmx"]

ORIGIN_PROP = "x-hymt-origin"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_DATE = "%Y%m%dT%H%M%SZ"  # TMX's date format (ISO 8601 basic, UTC)


class TmxError(InputError):
    """A file that is not a TMX hymt-chat can read (broken XML, entities, not <tmx>)."""


@dataclass
class ReadReport:
    """What reading a file found: units read, entries made, and units skipped by reason."""

    units: int = 0
    entries: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def _date(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime(_DATE)


def _seconds(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.strptime(value, _DATE).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def write_tmx(entries: Iterable[Entry], out: IO[bytes], *, tool_version: str = "") -> int:
    """Write *entries* as TMX 1.4b to *out*; returns how many units were written."""
    written = 0
    with etree.xmlfile(out, encoding="utf-8") as xf:
        xf.write_declaration()
        xf.write_doctype('<!DOCTYPE tmx SYSTEM "tmx14.dtd">')
        with xf.element("tmx", version="1.4"):
            xf.write(etree.Element("header", {
                "creationtool": "hymt-chat", "creationtoolversion": tool_version or "0",
                "segtype": "sentence", "o-tmf": "hymt-chat", "adminlang": "en",
                "srclang": "*all*", "datatype": "plaintext"}))
            with xf.element("body"):
                for entry in entries:
                    xf.write(_unit(entry))
                    written += 1
    return written


def _unit(entry: Entry) -> etree._Element:
    attrs = {"srclang": entry.source, "creationdate": _date(entry.created or 0),
             "usagecount": str(entry.hits)}
    if entry.used:
        attrs["lastusagedate"] = _date(entry.used)
    if entry.author:
        attrs["creationid"] = entry.author
    tu = etree.Element("tu", attrs)
    prop = etree.SubElement(tu, "prop", type=ORIGIN_PROP)
    prop.text = entry.origin
    for lang, text in ((entry.source, entry.segment), (entry.target, entry.translation)):
        tuv = etree.SubElement(tu, "tuv", {_XML_LANG: lang})
        etree.SubElement(tuv, "seg").text = text
    return tu


def read_tmx(source: str | IO[bytes], report: ReadReport | None = None) -> Iterator[TeamEntry]:
    """The team entries of a TMX file (a path or a binary file), streamed; *report* counts."""
    report = report if report is not None else ReadReport()
    events = etree.iterparse(source, events=("start", "end"), resolve_entities=False,
                             no_network=True, load_dtd=False, huge_tree=False,
                             remove_comments=True, remove_pis=True)
    header_src: str | None = None
    seen_root = False
    try:
        for event, element in events:
            tag = element.tag if isinstance(element.tag, str) else ""
            if event == "start":
                if not seen_root:
                    if tag != "tmx":
                        raise TmxError(f"This is not a TMX file (its root is <{tag}>, not "
                                       "<tmx>): nothing was imported.")
                    seen_root = True
                continue
            if tag == "header":
                header_src = element.get("srclang")
            elif tag == "tu":
                report.units += 1
                yield from _entries(element, header_src, report)
                element.clear()
                parent = element.getparent()
                while parent is not None and element.getprevious() is not None:
                    del parent[0]
    except etree.XMLSyntaxError as err:
        line = f"line {err.lineno}: " if err.lineno else ""
        raise TmxError(f"The TMX file is not well-formed XML ({line}{err.msg}): nothing was "
                       "imported.") from None


def _entries(tu: etree._Element, header_src: str | None,
             report: ReadReport) -> Iterator[TeamEntry]:
    origin = next((p.text for p in tu.iterfind("prop") if p.get("type") == ORIGIN_PROP), None)
    if origin == MACHINE:
        report.skip("a model's entry (this deployment's model makes its own)")
        return
    variants: dict[str, str] = {}
    for tuv in tu.iterfind("tuv"):
        lang = find_language(tuv.get(_XML_LANG) or tuv.get("lang") or "")
        seg = tuv.find("seg")
        if lang is None:
            report.skip("a language hymt-chat does not translate")
            return
        if seg is None:
            report.skip("a variant without a segment")
            return
        if any(isinstance(child, etree._Entity) for child in seg.iter()):
            raise TmxError("The TMX file uses entity references (&name;) in a segment, which "
                           "hymt-chat does not expand (XXE): nothing was imported.")
        if len(seg):
            report.skip("inline markup in a segment")
            return
        text = clean_text(seg.text or "").strip()
        if not text:
            report.skip("an empty segment")
            return
        variants[lang.code] = text
    src = find_language(tu.get("srclang") or header_src or "")
    sources = [src.code] if src is not None and src.code in variants else (
        list(variants) if (tu.get("srclang") or header_src or "*all*") == "*all*" else [])
    if len(variants) < 2 or not sources:
        report.skip("fewer than two languages, or no source among them")
        return
    kept = origin if origin in (CORRECTED, IMPORTED) else IMPORTED
    created = _seconds(tu.get("changedate") or tu.get("creationdate"))
    for a, b in permutations(variants, 2):
        if a not in sources:
            continue
        pairs = line_pairs(variants[a], variants[b])  # each line is a segment, as looked up
        if pairs is None:
            report.skip("a different number of lines in its languages")
            continue
        for segment, translation in pairs:
            report.entries += 1
            yield TeamEntry(a, b, segment, translation, kept, tu.get("creationid"), created)
