"""A refused file is said in the page's language: what went wrong, with the kinds the app reads
named as people name them ("Word, PDF, images…"), never as MIME types. The errors keep their
English (``str(err)``: logs, the API, the CLI) and carry their page sentence (``err.said``).
The same three refusals in a real French browser: tests/test_file_errors_browser.py."""

from __future__ import annotations

import io
import re

import pikepdf
import pytest

from hymt_chat.errors import InputTooLongError
from hymt_chat.modes import documents
from hymt_chat.modes.documents import DOCUMENT_TYPES, KIND_WORDS, accepted_kinds, upload_mime
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.session import Upload
from hymt_chat.modes.translator_session import TranslatorSession
from hymt_chat.text import formats
from hymt_chat.words.catalogs import catalog
from hymt_chat.words.source import CHAT
from tests.support.sessions import RecordingScreen, services
from tests.support.stub_model import StubModel

# The languages whose file sentences were written by hand (the others come as drafts).
REVIEWED = ("fr", "es", "de", "zh", "ja")
# The keys of the file sentences and the kinds' names (hymt_chat/words/source.py).
FILE_KEYS = ("file_kind", "kind_text", "kind_word", "kind_powerpoint", "kind_excel", "kind_pdf",
             "kind_pictures", "kind_subtitles", "kind_web", "kind_ebooks", "kind_opendocument",
             "kind_markdown", "kind_strings", "file_too_big", "file_empty", "file_no_text",
             "file_binary", "file_not_utf8", "file_data_invalid", "srt_invalid", "srt_empty",
             "too_long", "upload_unreadable", "picture_only", "file_damaged", "file_protected",
             "file_old_office", "file_macros", "file_unsafe", "file_too_much", "pdf_no_header",
             "pdf_pages", "pdf_no_pages", "pdf_page_size", "pdf_old_compression", "pdf_scans",
             "pdf_no_text", "pdf_write", "picture_too_big", "picture_no_ocr", "picture_script",
             "picture_failed", "picture_no_text")
MIME = re.compile(r"\b(?:application|text|image|audio|video)/[\w.+-]+")


def _refusal(name: str, data: bytes) -> Exception:
    with pytest.raises(Exception) as caught:
        documents.load_document(name, data)
    return caught.value


def _pdf(password: str | None = None) -> bytes:
    pdf = pikepdf.new()
    pdf.add_blank_page()
    out = io.BytesIO()
    pdf.save(out, encryption=pikepdf.Encryption(user=password, owner=password)
             if password else False)
    return out.getvalue()


def test_every_kind_the_app_reads_is_named_once_in_the_order_people_look_for_it():
    kinds = {kind for kind, _ in DOCUMENT_TYPES.values()}
    assert kinds <= set(KIND_WORDS)  # a new format must be named for the refusal
    named = [s.key for s in accepted_kinds()]
    assert len(named) == len(set(named)) == len({KIND_WORDS[k] for k in kinds})
    assert named[:6] == ["kind_text", "kind_word", "kind_powerpoint", "kind_excel", "kind_pdf",
                         "kind_pictures"]
    english = PageText().listed(accepted_kinds())
    assert english.startswith("text, Word, PowerPoint, Excel, PDF, pictures, subtitles")
    assert english.endswith(", and app strings (JSON, YAML, PO, XLIFF)")


def test_a_refused_kind_is_said_in_french_naming_the_kinds_not_mime_types():
    err = _refusal("setup.exe", b"MZ\x90\x00")
    french = PageText.of("fr").error(err)
    assert french == ("Je ne peux pas traduire «\u00a0setup.exe\u00a0»\u00a0: ce n'est pas un "
                      "type de fichier que je lis. Acceptés\u00a0: texte, Word, PowerPoint, "
                      "Excel, PDF, images, sous-titres, pages web, livres numériques, "
                      "OpenDocument, Markdown et textes d'applications (JSON, YAML, PO, XLIFF).")
    assert not MIME.search(french) and ".docx" not in french
    japanese = PageText.of("ja").error(err)
    assert japanese.startswith("「setup.exe」は翻訳できません。") and "テキスト、Word、" in japanese
    # the English of the error itself is unchanged: the API and the CLI list the extensions
    assert ".docx" in str(err) and "'setup.exe' (.exe) is not one of them" in str(err)


def test_an_empty_file_and_a_broken_pdf_say_what_is_wrong_in_french():
    fr = PageText.of("fr")
    assert fr.error(_refusal("vide.txt", b"")) == \
        "«\u00a0vide.txt\u00a0» est vide\u00a0: il n'y a rien à traduire."
    assert fr.error(_refusal("vide.txt", b"\n \t\n")) == fr.error(_refusal("vide.txt", b""))
    assert fr.error(_refusal("casse.pdf", b"GIF89a, not a PDF at all")) == \
        "«\u00a0casse.pdf\u00a0» n'est pas un PDF (il n'a pas d'en-tête PDF)."
    assert fr.error(_refusal("casse.pdf", b"%PDF-1.7\n" + b"\x00garbage" * 50)).startswith(
        "«\u00a0casse.pdf\u00a0» est endommagé")
    protected = fr.error(_refusal("secret.pdf", _pdf(password="s3cret")))
    assert protected.startswith("«\u00a0secret.pdf\u00a0» est protégé par un mot de passe")


@pytest.mark.parametrize(("name", "data", "key"), [
    ("big.txt", b"a" * (documents.MAX_FILE_BYTES + 1), "file_too_big"),
    ("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00", "file_binary"),
    ("latin.txt", "café".encode("latin-1"), "file_not_utf8"),
    ("talk.srt", b"not subtitles at all", "srt_invalid"),
    ("data.json", b"{", "file_data_invalid"),
    ("lettre.docx", b"not a zip", "file_damaged"),
    ("lettre.docm", b"", "file_macros"),
    ("image.png", b"not a picture", "file_damaged"),
])
def test_each_file_refusal_names_its_page_sentence_and_the_file(name, data, key):
    err = _refusal(name, data)
    assert err.said is not None and err.said.key == key
    for code in REVIEWED:
        said = PageText.of(code).error(err)
        assert "{{" not in said and str(err) != said
        if "{{name}}" in CHAT[key]:
            assert name in said


def test_an_english_page_says_what_the_error_says():
    for name, data in (("vide.txt", b""), ("casse.pdf", b"nope"), ("x.txt", b"a\x00b")):
        err = _refusal(name, data)
        assert PageText().error(err) == str(err).replace("This file", f"'{name}'")
    too_long = InputTooLongError(250_000, 200_000)
    assert PageText().error(too_long) == str(too_long)
    assert PageText.of("fr").error(too_long).startswith(
        "Le texte fait 250\u202f000 caractères\u00a0; la limite est de 200\u202f000")
    assert PageText.of("de").error(_refusal("big.txt", b"a" * 3_000_000)).startswith(
        "„big.txt“ ist 2,9 MB groß")


def test_a_format_error_is_said_with_the_files_name_whatever_part_failed():
    with pytest.raises(formats.FormatError) as caught:
        formats.read_source("livre.epub", b"PK\x05\x06" + b"\x00" * 18)  # an empty zip
    assert caught.value.said is not None and caught.value.said.slots["name"] == "livre.epub"
    assert PageText.of("es").error(caught.value).startswith("«livre.epub» está dañado")


@pytest.mark.parametrize("code", REVIEWED)
def test_the_file_sentences_are_written_in_each_reviewed_language(code):
    said = catalog(code).messages
    brands = {"kind_word", "kind_powerpoint", "kind_excel", "kind_pdf", "kind_opendocument",
              "kind_markdown"}
    for key in FILE_KEYS:
        assert said.get(f"chat|{key}"), (code, key)
        if key not in brands:
            assert said[f"chat|{key}"] != CHAT[key], (code, key)


def test_only_a_pdf_a_viewer_can_open_is_kept_as_a_pdf():
    assert upload_mime("casse.pdf", "application/pdf", b"not a pdf") == "application/octet-stream"
    assert upload_mime("vide.pdf", "application/pdf", b"") == "application/octet-stream"
    assert upload_mime("ok.pdf", "application/pdf", _pdf()) == "application/pdf"
    assert upload_mime("secret.pdf", "application/pdf",
                       _pdf(password="s3cret")) == "application/octet-stream"
    assert upload_mime("photo.png", "image/png", b"whatever") == "image/png"  # not ours to judge
    assert upload_mime("setup.exe", "application/x-msdownload", b"MZ") == \
        "application/x-msdownload"


async def test_a_french_tab_is_told_in_french_and_nothing_is_sent(tmp_path):
    with StubModel() as stub:
        screen = RecordingScreen()
        session = TranslatorSession(services(stub, tmp_path), screen, session_id="s1",
                                    user_key="addr:1", page=PageText.of("fr"))
        for name, data in (("setup.exe", b"MZ"), ("vide.txt", b""), ("casse.pdf", b"nope")):
            path = tmp_path / name
            path.write_bytes(data)
            await session.message("", None, uploads=[Upload(str(path), name)])
            said = screen.last().markdown.replace("\\", "")
            assert said.startswith(("Je ne peux pas traduire «\u00a0setup.exe",
                                    "«\u00a0vide.txt\u00a0» est vide",
                                    "«\u00a0casse.pdf\u00a0» n'est pas un PDF")), said
            assert not MIME.search(said)
        await session.settled()
        assert stub.prompts == []
