"""JSON, YAML and gettext .po files: only the user-facing strings are translated.

Each file is cut into the document pieces :mod:`hymt_chat.modes.documents` joins back: the
bytes between the strings (keys, punctuation, indentation, comments, msgids, ``Plural-Forms``)
are literal pieces, copied as they are; each string value is a translatable piece whose
placeholders (``%s``, ``%(count)d``, ``{name}``, ``{{var}}``, ``${var}``) must come back
unchanged, and whose translation is re-quoted for its format (``quote``).

* **JSON** — checked with :func:`json.loads`, then scanned token by token: a string followed
  by ``:`` is a key (kept), any other string is a value (translated); numbers, booleans and
  nulls are literal.
* **YAML** — PyYAML's composer gives every scalar with its position and resolved tag: string
  values are translated (keys, numbers, booleans, dates, anchored and tagged scalars are
  not); a translated value is written as a double-quoted scalar in the place of the original,
  so comments, order and indentation stay byte for byte.
* **.po** — parsed with ``polib``; ``msgid`` fills ``msgstr``, ``msgid_plural`` fills every
  plural form past the first (``msgstr[1]``, ``msgstr[2]`` … as the file has them); the
  header (with ``Plural-Forms``), comments, contexts and msgids are kept. The output is
  polib's rendering of the file with the new ``msgstr`` values.

Two ways to translate them: value by value through the translate callback (every family), or
in blocks through the family's structured-data instruction (:func:`structured_payload`,
:func:`read_structured_answer`), where each value's answer is checked and a value that did not
come back intact is translated alone.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import polib
import yaml  # type: ignore[import-untyped]  # no stubs: types-PyYAML is not installed

from hymt_chat.errors import InputError

__all__ = [
    "PLACEHOLDER",
    "STRUCTURED_KINDS",
    "StructuredError",
    "placeholders",
    "read_structured_answer",
    "split_json",
    "split_po",
    "split_yaml",
    "structured_payload",
]

STRUCTURED_KINDS = frozenset({"json", "yaml", "po"})

PLACEHOLDER = re.compile(
    r"\{\{[^{}]*\}\}"  # {{var}}
    r"|\$\{[^{}]*\}"  # ${var}
    r"|\{[A-Za-z0-9_.:\[\]!]*\}"  # {name}, {0}, {}
    r"|%(?:\(\w+\)|\d+\$)?[-+#0]*\d*(?:\.\d+)?[sdifuxXoeEgGcr%]"  # %s %d %(x)d %1$s %.2f %%
)
"""Variable placeholders of the common formats; a space flag (``% d``) is left out on purpose:
"100% sure" has no placeholder."""


class StructuredError(InputError):
    """A .json, .yaml or .po upload that its format's parser refuses."""


def placeholders(text: str) -> list[str]:
    return PLACEHOLDER.findall(text)


def _has_words(text: str) -> bool:
    return any(ch.isalpha() for ch in PLACEHOLDER.sub("", text))


@dataclass(frozen=True, slots=True)
class Part:
    """A literal run (``translate`` False) or one string value and how to quote its answer."""

    text: str
    translate: bool = False
    quote: Callable[[str], str] | None = None


# --- JSON -----------------------------------------------------------------------------------

_JSON_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"')


def _json_quote(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _json_quote_then(tail: str) -> Callable[[str], str]:
    """:func:`_json_quote`, then *tail* (a block scalar's last line break, kept)."""
    return lambda value: _json_quote(value) + tail


def split_json(text: str, name: str = "the file") -> list[Part]:
    try:
        json.loads(text)
    except ValueError as err:
        raise StructuredError(f"{name} is not valid JSON ({err}).") from None
    parts: list[Part] = []
    pos = 0
    for match in _JSON_STRING.finditer(text):
        after = text[match.end():].lstrip()
        value = json.loads(match.group(0))
        if after.startswith(":") or not _has_words(value):
            continue  # a key, or nothing to translate: stays in the literal run
        parts.append(Part(text[pos:match.start()]))
        parts.append(Part(value, True, _json_quote))
        pos = match.end()
    parts.append(Part(text[pos:]))
    return parts


# --- YAML -----------------------------------------------------------------------------------

_STR_TAG = "tag:yaml.org,2002:str"


def _yaml_values(node: yaml.Node, out: list[yaml.ScalarNode], seen: set[int]) -> None:
    if id(node) in seen:
        return  # an alias: the anchored node is translated once, where it is written
    seen.add(id(node))
    if isinstance(node, yaml.MappingNode):
        for _key, value in node.value:
            _yaml_values(value, out, seen)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _yaml_values(item, out, seen)
    elif isinstance(node, yaml.ScalarNode) and node.tag == _STR_TAG:
        out.append(node)


def split_yaml(text: str, name: str = "the file") -> list[Part]:
    try:
        documents = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as err:
        raise StructuredError(f"{name} is not valid YAML ({str(err).splitlines()[0]}).") from None
    values: list[yaml.ScalarNode] = []
    seen: set[int] = set()
    for doc in documents:
        if doc is not None:
            _yaml_values(doc, values, seen)
    parts: list[Part] = []
    pos = 0
    for node in sorted(values, key=lambda n: n.start_mark.index):
        start, end = node.start_mark.index, node.end_mark.index
        written = text[start:end]
        if start < pos or written[:1] in ("&", "!") or not _has_words(node.value):
            continue  # anchored or tagged (their marks include the anchor), or no words
        trail = written[len(written.rstrip()):]  # a block scalar's last line break
        parts.append(Part(text[pos:start]))
        parts.append(Part(node.value, True, _json_quote_then(trail)))
        pos = end
    parts.append(Part(text[pos:]))
    return parts


# --- gettext .po ----------------------------------------------------------------------------

_SENTINEL = re.compile('"\ue000(\\d+)\ue001"')


def _po_quote(value: str) -> str:
    return f'"{polib.escape(value)}"'


def split_po(text: str, name: str = "the file") -> list[Part]:
    try:
        po = polib.pofile(text)
    except (OSError, ValueError) as err:
        raise StructuredError(f"{name} is not a valid gettext .po file ({err}).") from None
    if not any(entry.msgid and not entry.obsolete for entry in po):
        raise StructuredError(f"{name} is not a valid gettext .po file (it has no messages).")
    sources: list[str] = []

    def slot(source: str) -> str:
        sources.append(source)
        return f"\ue000{len(sources) - 1}\ue001"

    for entry in po:
        if entry.obsolete or not entry.msgid:
            continue
        if entry.msgid_plural:
            forms = sorted(entry.msgstr_plural) or [0, 1]
            entry.msgstr_plural = {i: slot(entry.msgid if i == 0 else entry.msgid_plural)
                                   for i in forms}
        else:
            entry.msgstr = slot(entry.msgid)
    rendered = str(po)
    if not rendered.endswith("\n"):
        rendered += "\n"
    parts: list[Part] = []
    pos = 0
    for match in _SENTINEL.finditer(rendered):
        source = sources[int(match.group(1))]
        parts.append(Part(rendered[pos:match.start()]))
        if _has_words(source):
            parts.append(Part(source, True, _po_quote))
        else:
            parts.append(Part(_po_quote(source)))  # "%d", "…": the source is its own msgstr
        pos = match.end()
    parts.append(Part(rendered[pos:]))
    return parts


SPLITTERS: dict[str, Callable[[str, str], list[Part]]] = {
    "json": split_json, "yaml": split_yaml, "po": split_po,
}
FORMAT_TYPES = {"json": "JSON", "yaml": "YAML", "po": "JSON"}
"""``{format_type}`` of the structured-data instruction: the block sent is JSON for .po too
(see :func:`structured_payload`)."""


# --- the structured-data instruction ----------------------------------------------------------


def structured_payload(values: list[str]) -> str:
    """The block sent with the structured-data instruction: the values as a JSON object of
    numbered strings (``{"1": "Save", "2": "Hello, {name}!"}``). Numbered keys let every
    answer be checked value by value; the file's own keys never reach the model."""
    return json.dumps({str(i): v for i, v in enumerate(values, 1)}, ensure_ascii=False,
                      indent=2)


_FENCED = re.compile(r"```[\w-]*\n(?P<body>.*?)\n?```", re.DOTALL)


def _json_object(answer: str) -> object:
    """The JSON object in an answer: the whole of it, else a fenced block in it, else the span
    from its first ``{`` to its last ``}`` (small models add "Here is the translation:")."""
    candidates = [answer]
    candidates += [m.group("body") for m in _FENCED.finditer(answer)]
    if "{" in answer:
        candidates.append(answer[answer.index("{"): answer.rindex("}") + 1])
    for text in candidates:
        try:
            return json.loads(text)
        except ValueError:
            continue
    return None


def read_structured_answer(answer: str, values: list[str]) -> list[str | None]:
    """Each value's translation from the model's answer, or None where it is missing, not a
    string, has other placeholders than its source, or the answer is not that JSON object."""
    data = _json_object(answer)
    if not isinstance(data, dict):
        return [None] * len(values)
    out: list[str | None] = []
    for i, source in enumerate(values, 1):
        got = data.get(str(i))
        ok = (isinstance(got, str) and got.strip() != ""
              and Counter(placeholders(got)) == Counter(placeholders(source)))
        out.append(got if ok else None)
    return out
