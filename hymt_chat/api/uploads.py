"""An API upload read as a document, its refusal worded so that each dialect can answer with
its service's own words before ours.

Clients and scripts match the services' texts: deepl-python's suite expects an unsupported
file to raise a message matching ``(Invalid file)|(file extension)`` (tests/
test_translate_document.py::test_invalid_document, and its CLI's test_cli.py:282), and
LibreTranslate answers ``Invalid request: file format not supported`` (libretranslate/app.py,
``translate_file``: the extension checked against its supported formats). Our sentence (the
formats this server reads, or why a kind is refused) comes with them, never instead.
"""

from __future__ import annotations

from pathlib import PurePath

from hymt_chat.modes import documents

__all__ = ["UnsupportedKindError", "load_upload"]


class UnsupportedKindError(documents.DocumentError):
    """A file whose extension is not one of the kinds this server translates."""

    def __init__(self, suffix: str, sentence: str) -> None:
        self.suffix, self.sentence = suffix, sentence
        super().__init__(sentence)


def load_upload(name: str, data: bytes, *, max_chars: int) -> documents.Document:
    """:func:`documents.load_document`, an unsupported kind raised as
    :class:`UnsupportedKindError` (CPU and parsing: call it from a worker thread)."""
    suffix = PurePath(name).suffix.lower()
    try:
        return documents.load_document(name, data, max_chars=max_chars)
    except documents.DocumentError as err:
        if suffix in documents.DOCUMENT_TYPES:
            raise
        raise UnsupportedKindError(suffix, str(err)) from None
