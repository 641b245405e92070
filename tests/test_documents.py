"""File translation keeps structure: SRT numbering and timestamps, Markdown code and markers.

A fake 'model' (the translate callback) shows exactly what would be sent.
"""

import asyncio
import random
import re

import pytest
import srt

from hymt_chat.errors import HymtError, NotTextError
from hymt_chat.modes.documents import (
    MAX_FILE_BYTES,
    TEXT_CHUNK_CHARS,
    DocumentError,
    load_document,
    output_name,
    read_upload,
    translate_document,
)


class Fake:
    """A 'model' that marks what it was given, so tests see exactly what was sent."""

    def __init__(self, fn=None, jitter=False):
        self.calls: list[str] = []
        self.fn = fn or (lambda text: f"«{text.upper()}»")
        self.jitter = jitter

    async def __call__(self, text, *, on_progress=None):
        self.calls.append(text)
        if self.jitter:
            await asyncio.sleep(random.random() / 100)
        return self.fn(text)


def translate(name, content, fake=None, **kw):
    doc = load_document(name, content.encode() if isinstance(content, str) else content)
    fake = fake or Fake()
    out = asyncio.run(translate_document(doc, fake, **kw))
    return doc, out, fake


# --- SRT ---------------------------------------------------------------------------------------

SRT = (
    "1\r\n00:00:01,000 --> 00:00:03,200\r\nHello, how are you?\r\n\r\n"
    "2\r\n00:00:04,000 --> 00:00:06,500  X1:100 X2:200\r\n<i>I am fine,</i>\r\nthank you.\r\n\r\n"
    "7\r\n00:01:00.5 --> 00:01:02,000\r\n♪ ♪\r\n\r\n"
    "8\r\n01:00:00,000 --> 01:00:05,000\r\nThis is a rather long subtitle line that goes on\r\n"
    "and on for a while.\r\n\r\n"
)


def _frame(text):
    """Everything but the cue text: numbers, timing lines and blank lines, in order."""
    lines = text.replace("\r\n", "\n").split("\n")
    return [line for line in lines if re.fullmatch(r"\d+|.*-->.*|", line)]


def test_srt_numbering_and_timestamps_are_untouched():
    doc, out, fake = translate("movie.srt", SRT)
    encoded = doc.encode(out).decode()
    assert _frame(encoded) == _frame(SRT)  # byte for byte, odd timestamps and positions included
    assert "\r\n" in encoded and "\n" not in encoded.replace("\r\n", "")  # CRLF kept
    cues = list(srt.parse(encoded))
    assert [c.index for c in cues] == [1, 2, 7, 8]
    assert [c.start for c in cues] == [c.start for c in srt.parse(SRT)]


def test_srt_translates_each_cue_text_once_with_its_lines_joined():
    _, out, fake = translate("movie.srt", SRT)
    assert fake.calls[0] == "Hello, how are you?"
    assert fake.calls[1] == "<i>I am fine,</i> thank you."  # two lines, one sentence
    assert "♪ ♪" not in fake.calls  # nothing to translate in a music cue
    assert "«HELLO, HOW ARE YOU?»" in out
    assert "\n♪ ♪\n" in out


def test_srt_formatting_tags_survive_even_if_the_model_mangles_them():
    fake = Fake(lambda text: text.upper())  # turns <i> into <I>
    _, out, _ = translate("movie.srt", SRT, fake)
    assert "<i>I AM FINE,</i>" in out  # tags copied, the text around them translated


def test_srt_long_cue_is_put_back_on_two_lines():
    _, out, _ = translate("movie.srt", SRT, Fake(lambda t: t))
    last = list(srt.parse(out))[-1].content
    assert len(last.split("\n")) == 2


def test_not_an_srt_file_is_refused_clearly():
    with pytest.raises(DocumentError, match="not a valid SRT"):
        load_document("bad.srt", b"just some text\nwithout any timing\n")


# --- Markdown ----------------------------------------------------------------------------------

MD = """---
title: Guide
---
# Getting started #

Install the tool with `pip install hymt` and open the [docs](https://example.com/docs_v2).
This line continues the paragraph.

## Steps

1. Download the file
2. Run it:

   ```bash
   ./run --fast   # keep as is
   ```

- [ ] check the logs
- nested:
    - inner item

> Tip: read this first.

```python
print("Hello, world")  # code is never translated
```

    indented code stays
    as it is

| Name | Value |
|------|------:|
| speed | `fast` |

***
"""


def test_markdown_code_blocks_are_not_sent_and_not_changed():
    _, out, fake = translate("guide.md", MD)
    sent = "\n".join(fake.calls)
    for code in ('print("Hello, world")', "./run --fast", "indented code stays", "title: Guide"):
        assert code not in sent
        assert code in out
    assert '```python\nprint("Hello, world")  # code is never translated\n```\n' in out
    assert "    indented code stays\n    as it is\n" in out


def test_markdown_markers_and_blank_lines_are_kept():
    _, out, _ = translate("guide.md", MD)
    lines = out.split("\n")
    assert lines[3] == "# «GETTING STARTED» #"
    assert "## «STEPS»" in lines
    assert "1. «DOWNLOAD THE FILE»" in lines
    assert "- [ ] «CHECK THE LOGS»" in lines
    assert "    - «INNER ITEM»" in lines
    assert "> «TIP: READ THIS FIRST.»" in lines
    assert "|------|------:|" in lines and "***" in lines
    assert "| «NAME» | «VALUE» |" in lines
    assert "| «SPEED» | `fast` |" in lines  # a code-only cell is not sent
    # Same blank-line layout as the original (paragraph lines are joined into one).
    assert out.count("\n\n") == MD.count("\n\n")


def test_markdown_paragraph_lines_are_translated_together():
    _, _, fake = translate("guide.md", MD)
    assert any(call.endswith("This line continues the paragraph.") for call in fake.calls)


def test_markdown_inline_code_and_urls_survive_a_careless_model():
    _, out, fake = translate("guide.md", MD, Fake(lambda t: t.upper()))
    assert "`pip install hymt`" in out
    assert "](https://example.com/docs_v2)" in out
    assert "INSTALL THE TOOL WITH" in out  # the prose around them is still translated


def test_markdown_inline_code_kept_by_the_model_is_translated_in_one_piece():
    fake = Fake(lambda t: f"[{t}]" if "`" not in t else t.replace("Install", "Installez"))
    _, out, _ = translate("guide.md", MD, fake)
    assert "Installez the tool with `pip install hymt`" in out
    assert sum("`pip install hymt`" in call for call in fake.calls) == 1


# --- plain text --------------------------------------------------------------------------------


def test_txt_is_translated_whole():
    text = "\n\nFirst line.\nSecond line.\n\nThird.\n"
    _, out, fake = translate("notes.txt", text)
    assert fake.calls == ["First line.\nSecond line.\n\nThird."]
    assert out == "\n\n«FIRST LINE.\nSECOND LINE.\n\nTHIRD.»\n"


def test_long_txt_is_cut_between_paragraphs_in_order_with_progress():
    paragraphs = [f"Paragraph {i}. " + "word " * 400 for i in range(60)]
    text = "\n\n".join(paragraphs) + "\n"
    assert len(text) > 2 * TEXT_CHUNK_CHARS
    seen = []
    _, out, fake = translate("long.txt", text, Fake(lambda t: t, jitter=True),
                             on_progress=lambda done, total: seen.append((done, total)))
    assert out == text  # an identity 'model' gives the file back: order and blank lines kept
    assert len(fake.calls) > 2 and all(len(c) <= TEXT_CHUNK_CHARS for c in fake.calls)
    assert seen[0] == (0, len(fake.calls)) and seen[-1] == (len(fake.calls), len(fake.calls))


def test_an_error_that_is_not_the_model_s_stops_the_document():
    async def broken(text, *, on_progress=None):
        if "thank" in text:
            raise HymtError("a bug of ours")
        return text

    doc = load_document("movie.srt", SRT.encode())
    with pytest.raises(HymtError, match="a bug of ours"):
        asyncio.run(translate_document(doc, broken))


# --- uploads -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["photo.gif", "scan.tiff", "README", "archive.srt.zip"])
def test_only_the_supported_types_are_accepted(name):
    listed = (r"\.docx, \.epub, \.html, \.jpg, \.json, \.md, \.odp, \.ods, \.odt, \.pdf, "
              r"\.png, \.po, \.pptx, \.srt, \.txt, \.webp, \.xlf, \.xlsx, \.yaml")
    with pytest.raises(DocumentError, match=listed):
        load_document(name, b"hello")


def test_binary_content_is_refused_even_with_a_text_extension():
    with pytest.raises(NotTextError):
        load_document("image.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(NotTextError):
        load_document("latin1.txt", "café".encode("latin-1"))


def test_oversized_and_empty_files_are_refused(tmp_path):
    with pytest.raises(DocumentError, match="limit is 2 MB"):
        load_document("big.txt", b"a" * (MAX_FILE_BYTES + 1))
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * (MAX_FILE_BYTES + 1))
    with pytest.raises(DocumentError, match="limit is 2 MB"):
        read_upload(big, "big.txt")
    with pytest.raises(DocumentError, match="empty"):
        load_document("empty.md", b" \n\n \t\n")


def test_utf8_bom_and_utf16_files_are_read():
    doc = load_document("bom.txt", b"\xef\xbb\xbfHello")
    assert doc.text == "Hello"
    doc = load_document("u16.txt", "Grüße".encode("utf-16"))
    assert doc.text == "Grüße"


def test_output_name_keeps_the_kind_and_adds_the_target():
    assert output_name("talk.srt", "zh-Hant") == "talk.zh-Hant.srt"
    assert output_name("../../etc/notes.md", "fr") == "notes.fr.md"


def test_markdown_fences_nested_in_lists_and_quotes_are_code_too():
    md = "- item one\n    ```sh\n    make test\n    ```\n- item two\n\n> ```\n> quoted code\n> ```\n"
    _, out, fake = translate("nested.md", md)
    assert "make test" not in "".join(fake.calls) and "quoted code" not in "".join(fake.calls)
    assert out == md.replace("item one", "«ITEM ONE»").replace("item two", "«ITEM TWO»")
