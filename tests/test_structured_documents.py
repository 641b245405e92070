"""JSON, YAML and .po files: keys, placeholders and plural forms byte for byte, values translated.

The translate callback is a fake (as in test_documents.py: the structure is what is tested);
tests/test_e2e_families.py sends such files to the real model.
"""

from __future__ import annotations

import json

import polib
import pytest
import yaml

from hymt_chat.modes.documents import (
    DocumentError,
    StructuredCall,
    load_document,
    translate_document,
)
from hymt_chat.modes.structured import placeholders, read_structured_answer, structured_payload

JSON_FILE = (
    '{\n  "title": "Save changes",\n  "count": 3,\n'
    '  "greeting": "Hello, {name}! You have %d messages.",\n'
    '  "nested": {"ok": true, "label": "Cancel", "url": "https://example.com/x"},\n'
    '  "list": ["One item", "%(count)d files", "${user} left"]\n}\n'
)
YAML_FILE = (
    "# comment kept\napp:\n  title: Save changes   # trailing comment\n  enabled: yes\n"
    "  when: 2024-01-01\n  msg: \"Hello, {name}!\"\n  long: |\n    Line one\n    Line two\n"
    "  base: &b Shared text\n  copy: *b\n  items:\n    - First item\n    - 42\nnext: Done\n"
)
PO_FILE = r'''# Translator comment
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\n"

#: src/app.py:10
msgctxt "button"
msgid "Save"
msgstr ""

#, python-format
msgid "%(count)d file"
msgid_plural "%(count)d files"
msgstr[0] ""
msgstr[1] ""
msgstr[2] ""

msgid "Hello, {name}!"
msgstr ""
'''


async def shout(text: str, **_kw) -> str:
    """Stands for a translation that keeps placeholders: upper-cases the words around them."""
    out, pos = [], 0
    for ph in placeholders(text):
        at = text.index(ph, pos)
        out += [text[pos:at].upper(), ph]
        pos = at + len(ph)
    return "".join(out) + text[pos:].upper()


async def test_json_values_are_translated_and_everything_else_kept():
    doc = load_document("ui.json", JSON_FILE.encode())
    out = await translate_document(doc, shout)
    assert out == JSON_FILE.replace("Save changes", "SAVE CHANGES").replace(
        "Hello, {name}! You have %d messages.", "HELLO, {name}! YOU HAVE %d MESSAGES.").replace(
        '"Cancel"', '"CANCEL"').replace('"https://example.com/x"', '"HTTPS://EXAMPLE.COM/X"'
    ).replace("One item", "ONE ITEM").replace("%(count)d files", "%(count)d FILES").replace(
        "${user} left", "${user} LEFT")
    assert list(json.loads(out)) == list(json.loads(JSON_FILE))


async def test_a_placeholder_the_model_changes_is_put_back_by_translating_around_it():
    async def breaks(text: str, **_kw) -> str:
        return text.replace("{name}", "{nom}").upper()

    doc = load_document("ui.json", b'{"greeting": "Hello, {name}!"}')
    out = json.loads(await translate_document(doc, breaks))
    assert "{name}" in out["greeting"] and out["greeting"].startswith("HELLO")


async def test_yaml_keeps_comments_keys_types_and_anchors():
    doc = load_document("app.yml", YAML_FILE.encode())
    out = await translate_document(doc, shout)
    assert "# comment kept\napp:\n  title: \"SAVE CHANGES\"   # trailing comment\n" in out
    assert "  enabled: yes\n  when: 2024-01-01\n" in out and "    - 42\n" in out
    assert "  base: &b Shared text\n  copy: *b\n" in out  # anchored: kept as written
    data = yaml.safe_load(out)
    assert data["app"]["long"] == "LINE ONE\nLINE TWO\n" and data["next"] == "DONE"
    assert data["app"]["msg"] == "HELLO, {name}!"
    assert list(data["app"]) == list(yaml.safe_load(YAML_FILE)["app"])


async def test_po_fills_msgstr_and_every_plural_form_keeping_the_header():
    doc = load_document("fr.po", PO_FILE.encode())
    out = await translate_document(doc, shout)
    assert '"Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n%10>=2' in out
    po = polib.pofile(out)
    original = polib.pofile(PO_FILE)
    assert [(e.msgctxt, e.msgid, e.msgid_plural) for e in po] == [
        (e.msgctxt, e.msgid, e.msgid_plural) for e in original]
    assert po.metadata == original.metadata
    save, files, hello = po
    assert save.msgstr == "SAVE" and save.occurrences == [("src/app.py", "10")]
    assert files.msgstr_plural == {0: "%(count)d FILE", 1: "%(count)d FILES",
                                   2: "%(count)d FILES"}
    assert "python-format" in files.flags and hello.msgstr == "HELLO, {name}!"


@pytest.mark.parametrize(("name", "data", "message"), [
    ("bad.json", b'{"a": "b",}', "not valid JSON"),
    ("bad.yaml", b"a: [b\n", "not valid YAML"),
    ("bad.po", b'msgid "a"\nfoo bar\n', r"not a valid gettext .po file \(Syntax error"),
    ("notes.po", b"just some notes\n", "not a valid gettext .po file"),
    ("empty.po", b'msgid ""\nmsgstr ""\n"Language: fr\\n"\n', "it has no messages"),
])
def test_malformed_files_are_refused_with_the_reason(name, data, message):
    with pytest.raises(DocumentError, match=message):
        load_document(name, data)


async def test_the_structured_instruction_fills_what_came_back_intact_the_rest_goes_alone():
    blocks: list[str] = []

    async def send(block: str, format_type: str) -> str:
        blocks.append(block)
        data = json.loads(block)
        # Value 2 comes back with its placeholder translated: not accepted.
        return "```json\n" + json.dumps({k: v.replace("{name}", "{nom}").upper()
                                         for k, v in data.items()}) + "\n```"

    singles: list[str] = []

    async def one(text: str, **_kw) -> str:
        singles.append(text)
        return await shout(text)

    call = StructuredCall(send)
    doc = load_document("ui.json", b'{"a": "Save", "b": "Hello, {name}!", "c": "Cancel"}')
    out = json.loads(await translate_document(doc, one, structured=call))
    assert out == {"a": "SAVE", "b": "HELLO, {name}!", "c": "CANCEL"}
    assert (call.blocks, call.values, call.accepted) == (1, 3, 2) and singles == ["Hello, {name}!"]
    assert json.loads(blocks[0]) == {"1": "Save", "2": "Hello, {name}!", "3": "Cancel"}


async def test_blocks_are_cut_by_size_and_a_failed_block_goes_value_by_value():
    from hymt_chat.errors import ModelBusyError

    async def busy(block: str, format_type: str) -> str:
        raise ModelBusyError("busy")

    call = StructuredCall(busy, block_chars=10)
    doc = load_document("ui.json", b'{"a": "Save changes", "b": "Cancel", "c": "Quit"}')
    out = json.loads(await translate_document(doc, shout, structured=call))
    assert out == {"a": "SAVE CHANGES", "b": "CANCEL", "c": "QUIT"} and call.blocks == 2


def test_answers_that_are_not_the_numbered_object_are_refused_value_by_value():
    values = ["Save", "%d files"]
    assert read_structured_answer('{"1": "Enregistrer", "2": "%d fichiers"}', values) == [
        "Enregistrer", "%d fichiers"]
    assert read_structured_answer('{"1": "Enregistrer", "2": "fichiers"}', values) == [
        "Enregistrer", None]
    assert read_structured_answer("Voici la traduction", values) == [None, None]
    # What the demo model answered: a sentence, then the object in a fence.
    assert read_structured_answer('Voici la traduction :\n\n```json\n{"1": "Enregistrer", '
                                  '"2": "%d fichiers"}\n```', values) == [
        "Enregistrer", "%d fichiers"]
    assert read_structured_answer('["Enregistrer"]', values) == [None, None]
    assert structured_payload(values) == '{\n  "1": "Save",\n  "2": "%d files"\n}'


def test_placeholders_of_the_common_formats_and_no_false_percent():
    assert placeholders("%s %d %(count)d %1$s %.2f {name} {0} {{var}} ${var}") == [
        "%s", "%d", "%(count)d", "%1$s", "%.2f", "{name}", "{0}", "{{var}}", "${var}"]
    assert placeholders("100% sure, 50 % off") == []
