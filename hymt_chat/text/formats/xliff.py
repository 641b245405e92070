"""XLIFF 1.2 and 2.0: each source translated into its target, inline codes kept, state set.

* **XLIFF 1.2** (OASIS Standard, 1 February 2008, http://docs.oasis-open.org/xliff/v1.2/os/
  xliff-core.html): every ``<trans-unit>`` not marked ``translate="no"`` (§2.4.1 "translate")
  gets its ``<target>`` (created after ``<source>`` or replaced) with ``state="translated"``, a
  value of the state list (§4.2.3 "state": new, needs-translation, …, translated, signed-off,
  final). A unit with segmented ``<seg-source>`` is translated whole from its ``<source>``.
  Inline elements (§2.3.2): ``<g>`` and ``<mrk>`` hold text (paired tags; ``<mrk
  mtype="protected">`` is kept whole), ``<x/>``, ``<bx/>``, ``<ex/>``, ``<ph>``, ``<bpt>``,
  ``<ept>``, ``<it>``, ``<sub>`` are native codes kept whole.
* **XLIFF 2.0** (OASIS Standard, 5 August 2014, http://docs.oasis-open.org/xliff/xliff-core/v2.0/
  os/xliff-core-v2.0-os.html): every ``<segment>`` of a ``<unit>`` (not ``translate="no"``,
  §4.3.1.49, inherited from ``<file>``/``<group>``) gets its ``<target>`` and the segment
  ``state="translated"`` (§4.3.1.43: initial, translated, reviewed, final); ``<ignorable>`` is
  left alone. Inline (§4.2.1): ``<pc>`` and ``<mrk>`` paired (``<mrk translate="no">`` kept
  whole), ``<ph/>``, ``<sc/>``, ``<ec/>``, ``<cp/>`` kept.
"""

from __future__ import annotations

from typing import Literal

from lxml import etree

from hymt_chat.text.formats.base import Source, Unit
from hymt_chat.text.formats.inline import Mixed
from hymt_chat.text.formats.safety import FormatError, parse_xml
from hymt_chat.words.said import said

__all__ = ["read_xliff"]

V1 = "urn:oasis:names:tc:xliff:document:1.2"
V2 = "urn:oasis:names:tc:xliff:document:2.0"
_PAIRED = {"g", "mrk", "pc"}


def _local(el: etree._Element) -> str:
    return etree.QName(el).localname if isinstance(el.tag, str) else ""


def _classify(el: etree._Element) -> Literal["pair", "atom"]:
    name = _local(el)
    if name not in _PAIRED:
        return "atom"
    if name == "mrk" and (el.get("mtype") == "protected" or el.get("translate") == "no"):
        return "atom"
    return "pair"


def _no(el: etree._Element) -> bool:
    """translate="no" on the element or an ancestor (2.0 inherits it; 1.2 says it per unit)."""
    return any(a.get("translate") == "no" for a in (el, *el.iterancestors()))


def _has_letters(text: str) -> bool:
    return any(ch.isalpha() for ch in text)


def _target_for(parent: etree._Element, source: etree._Element, ns: str) -> etree._Element:
    target = parent.find(f"{{{ns}}}target")
    if target is None:
        target = etree.Element(f"{{{ns}}}target")
        source.addnext(target)
        target.tail = source.tail
    return target


def _writer(mixed: Mixed, parent: etree._Element, source: etree._Element, ns: str) -> Unit:
    """Fill the unit's ``<target>`` (its attributes kept) and set ``state``: on the target in
    1.2, on the segment in 2.0."""
    def put(translated: str) -> None:
        target = _target_for(parent, source, ns)
        mixed.write(translated, into=target)
        (target if ns == V1 else parent).set("state", "translated")

    return Unit(mixed.tagged, put)


def read_xliff(data: bytes, label: str) -> Source:
    tree = parse_xml(data, label)
    root = tree.getroot()
    ns = etree.QName(root).namespace
    units: list[Unit] = []
    kept = 0
    if ns == V1:
        for tu in root.iter(f"{{{V1}}}trans-unit"):
            source = tu.find(f"{{{V1}}}source")
            if source is None:
                continue
            if _no(tu):
                kept += 1
                continue
            if _has_letters("".join(source.itertext())):
                units.append(_writer(Mixed(source, _classify, copy_atoms=True), tu, source, V1))
    elif ns == V2:
        for unit in root.iter(f"{{{V2}}}unit"):
            if _no(unit):
                kept += 1
                continue
            for segment in unit.iter(f"{{{V2}}}segment"):
                source = segment.find(f"{{{V2}}}source")
                if source is None or not _has_letters("".join(source.itertext())):
                    continue
                units.append(_writer(Mixed(source, _classify, copy_atoms=True), segment,
                                     source, V2))
    else:
        raise FormatError(f"{label} is not XLIFF 1.2 or 2.0 (its root is {root.tag!r})."
                          ).saying("file_damaged")

    def serialize() -> bytes:
        return bytes(etree.tostring(tree, xml_declaration=True, encoding="UTF-8"))

    def retarget(target: str) -> None:
        """The target language, where the file does not name one already: 1.2's
        ``<file target-language>`` (§2.6.1), 2.0's ``<xliff trgLang>`` (§4.2.2.1)."""
        if ns == V1:
            for file_el in root.iter(f"{{{V1}}}file"):
                if not file_el.get("target-language"):
                    file_el.set("target-language", target)
        elif not root.get("trgLang"):
            root.set("trgLang", target)

    notes = [said("kept_marked_units", count=kept)] if kept else []
    return Source(units, serialize, notes, retarget)
