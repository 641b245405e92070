"""The DeepL dialect judged by DeepL's own Python client and its documented contract, against the
real app (Chainlit, its catch-all page route and the guards) on an instant stand-in model: only
the API's contract is judged here, the translations themselves in tests/test_e2e_api.py.

The stand-in echoes the text it is given (after the instruction), so an answer shows what the
model was sent: a glossary's placeholder, and each prompt is recorded (the style and
personalization instructions of Hy-MT2, the family this app is told it serves).

Where a behaviour comes from (deepl-python 1.30 read at DeepLcom/deepl-python 2cdf70f; 1.32 from PyPI runs here):
* ``deepl/translator.py`` ``_api_call``: ``urllib.parse.urljoin(self._server_url, url)`` with
  ``url = "v2/translate"``, so ``server_url="http://host/deepl"`` lands on ``/v2/translate``.
* ``tests/test_translate_text.py``: ``test_model_type`` (``model_type_used`` is not None),
  ``test_split_sentences_basic`` (``split_sentences="invalid"`` raises, naming the field),
  ``test_formality`` (DE takes ``less``/``more``; EN-US refuses ``more``; ``prefer_*`` falls
  back), ``test_custom_instructions``.
* ``tests/test_glossary.py`` / ``tests/test_multilingual_glossary.py``:
  ``INVALID_GLOSSARY_ID = "invalid_glossary_id"`` raises ``DeepLException`` but not
  ``GlossaryNotFoundException``; ``NONEXISTENT_GLOSSARY_ID`` (a UUID) raises
  ``GlossaryNotFoundException``; ``test_glossary_create_large`` sends 10,000 entries.
"""

from __future__ import annotations

import io
import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import deepl
import docx
import httpx
import openpyxl
import pikepdf
import pptx
import pypdfium2 as pdfium
import pytest
from deepl.api_data import MultilingualGlossaryDictionaryEntries as Dict
from lxml import etree
from lxml import html as lxml_html

from hymt_chat.api.keys import open_store
from tests.conftest import ROOT
from tests.support import pdf_files
from tests.support.office_files import PAGE, XLIFF12, docx_letter, pptx_sheet, upper
from tests.support.stub_model import StubModel, echo_source
from tests.support.tabs import app

INVALID_GLOSSARY_ID = "invalid_glossary_id"  # deepl-python tests/test_glossary.py:9
NONEXISTENT_GLOSSARY_ID = "96ab91fd-e715-41a1-adeb-5d701f84a483"  # ... :10
DE = "Guten Morgen, wann kommt mein Paket?"
JS = ROOT / "tests" / "js"


@dataclass
class Running:
    url: str
    key: str
    stub: StubModel


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Running]:
    folder: Path = tmp_path_factory.mktemp("deepl")
    keys = folder / "api-keys.db"
    store = open_store(keys)
    key = store.create("suite", per_minute=10_000)
    store.close()
    with app(folder, answer=echo_source, HYMT_API_KEYS_PATH=str(keys),
             HYMT_MODEL_FAMILY="hy-mt2", HYMT_RATE_LIMIT_CALLS="") as (url, stub):
        yield Running(url, key, stub)


def client(run: Running, suffix: str = "/deepl/") -> deepl.DeepLClient:
    return deepl.DeepLClient(run.key, server_url=run.url + suffix, send_platform_info=False)


def raw(run: Running, method: str, path: str, **kwargs: object) -> httpx.Response:
    headers = {"Authorization": f"DeepL-Auth-Key {run.key}"}
    return httpx.request(method, run.url + path, headers=headers, timeout=30, **kwargs)  # type: ignore[arg-type]


# --- where the API lives -----------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["", "/", "/deepl", "/deepl/"])
def test_every_server_url_spelling_translates(running: Running, suffix: str) -> None:
    """DeepL's docs write ``server_url`` without a trailing slash; the client's urljoin then
    drops ``/deepl`` and calls the host root, where DeepL itself lives: both answer."""
    result = client(running, suffix).translate_text(DE, target_lang="EN-US")
    assert result.text == DE and result.detected_source_lang == "DE"


@pytest.mark.parametrize("suffix", ["", "/deepl", "/deepl/"])
def test_deepl_python_runs_its_public_surface(running: Running, suffix: str) -> None:
    """Lists, languages, usage, a v2 glossary's life and the errors, at each base URL."""
    dl = client(running, suffix)
    texts = dl.translate_text(["Bonjour tout le monde", "42"], target_lang="DE")
    assert [(r.text, r.detected_source_lang) for r in texts] == [
        ("Bonjour tout le monde", "FR"), ("42", "EN")]
    assert len(dl.get_source_languages()) == 38
    assert {"EN-US", "EN-GB", "PT-BR", "ZH-HANS"} <= {t.code for t in dl.get_target_languages()}
    assert dl.get_usage().character.count > 0
    pairs = {(p.source_lang, p.target_lang) for p in dl.get_glossary_languages()}
    assert ("en", "de") in pairs and len(pairs) == 38 * 37  # lower case, as DeepL answers
    made = dl.create_glossary("desk", "EN", "DE", {"refund": "Erstattung"})
    assert dl.get_glossary(made.glossary_id).entry_count == 1
    assert dl.get_glossary_entries(made) == {"refund": "Erstattung"}
    dl.delete_glossary(made)
    with pytest.raises(deepl.GlossaryNotFoundException):
        dl.get_glossary(made.glossary_id)
    with pytest.raises(deepl.DeepLException, match="target_lang"):
        dl.translate_text("Hallo", target_lang="XX", source_lang="DE")
    with pytest.raises(deepl.AuthorizationException):
        deepl.Translator("hymt-nobody", server_url=running.url + suffix,
                         send_platform_info=False).get_usage()


@pytest.mark.parametrize("method, path, status", [
    ("GET", "/deepl/v2/nothing", 404), ("GET", "/v3/nothing/at/all", 404),
    ("GET", "/deepl", 404), ("GET", "/deepl/", 404), ("POST", "/v2", 404),
    ("PUT", "/deepl/v2/translate", 405), ("PATCH", "/v2/glossaries", 405),
    ("POST", "/deepl/v3/glossaries/96ab91fd-e715-41a1-adeb-5d701f84a483/entries", 405),
])
def test_no_path_under_the_deepl_roots_answers_the_chat_page(running: Running, method: str,
                                                            path: str, status: int) -> None:
    """Chainlit's catch-all would answer these GETs with the chat page's HTML (200): DeepL
    answers 404/405 with a JSON ``message``, which is what its clients read."""
    response = raw(running, method, path)
    assert response.status_code == status, response.text[:200]
    assert response.headers["content-type"] == "application/json"
    assert response.json()["message"]
    if status == 405:
        assert response.headers["allow"] and method not in response.headers["allow"]


def test_endpoints_deepl_has_and_this_server_does_not_say_so(running: Running) -> None:
    for path in ("/v2/write/rephrase", "/deepl/v3/style_rules", "/v3/translation_memories"):
        response = raw(running, "POST", path, json={"text": ["x"]})
        assert response.status_code == 404 and "does not offer" in response.json()["message"]
    with pytest.raises(deepl.DeepLException):
        client(running).rephrase_text("Hello", target_lang="EN-US")


def test_the_chat_page_is_still_the_chat_page(running: Running) -> None:
    page = httpx.get(running.url + "/", timeout=30)
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]


def test_a_page_on_a_foreign_origin_is_refused_in_deepls_error_shape(running: Running) -> None:
    """The app's door refuses a DeepL path from a browser page on an origin not listed in
    HYMT_API_ORIGINS (403) before any route: its body carries ``message``, the field every
    DeepL error has and deepl-python's ``_raise_for_status`` appends to its exception
    (deepl/translator.py:179-180 at v1.30.0), beside ``detail`` and ``error``."""
    for path in ("/v2/translate", "/deepl/v2/translate", "/v3/glossaries"):
        refused = httpx.post(running.url + path, timeout=30,
                             json={"text": ["Hallo"], "target_lang": "EN-US"},
                             headers={"Authorization": f"DeepL-Auth-Key {running.key}",
                                      "Origin": "https://some-page.example"})
        assert refused.status_code == 403, path
        assert refused.json()["message"] == "This origin may not use the app."


# --- /v2/translate's options -------------------------------------------------------------------


def test_model_type_is_answered_and_latency_goes_in_the_interactive_class(
        running: Running) -> None:
    """latency_optimized: the interactive class (vLLM priority 0, ahead of API work at 25);
    quality_optimized: Best quality (Hy-MT2: the consensus of several candidates, no fusion
    model needed; the model's own answer where there is none: tests/test_deepl_options.py).
    DeepL names ``model_type_used`` whenever it was asked, and only then."""
    dl = client(running)
    before = len(running.stub.requests)
    fast = dl.translate_text(DE + " 1", target_lang="EN-US", model_type="latency_optimized")
    assert fast.model_type_used == "latency_optimized"
    assert running.stub.requests[before]["priority"] == 0
    before = len(running.stub.requests)
    plain = dl.translate_text(DE + " 2", target_lang="EN-US")
    assert plain.model_type_used is None and running.stub.requests[before]["priority"] == 25
    before = len(running.stub.requests)
    best = dl.translate_text(DE + " 3", target_lang="EN-US", model_type="quality_optimized")
    assert best.model_type_used == "quality_optimized" and best.text == DE + " 3"
    assert running.stub.requests[before].get("n", 1) > 1  # several candidates at once
    prefer = dl.translate_text(DE + " 4", target_lang="EN-US",
                               model_type="prefer_quality_optimized")
    assert prefer.model_type_used == "quality_optimized"
    with pytest.raises(deepl.DeepLException, match="model_type"):
        dl.translate_text(DE, target_lang="EN-US", model_type="fastest")


def test_split_sentences_takes_deepls_values_only(running: Running) -> None:
    dl = client(running)
    for value in ("0", "1", "nonewlines"):
        assert dl.translate_text(DE, target_lang="EN-US", split_sentences=value).text == DE
    with pytest.raises(deepl.DeepLException, match="split_sentences"):
        dl.translate_text(DE, target_lang="EN-US", split_sentences="invalid")


def test_formality_becomes_hy_mt2s_style_instruction(running: Running) -> None:
    dl = client(running)
    targets = {lang.code: lang.supports_formality for lang in dl.get_target_languages()}
    assert targets["DE"] is True and targets["EN-US"] is False and targets["TR"] is False
    before = len(running.stub.prompts)
    dl.translate_text("Hello, where is my parcel?", target_lang="DE", formality="more")
    dl.translate_text("Hello, where is my order?", target_lang="DE", formality="less")
    sent = running.stub.prompts[before:]
    assert "must strictly conform to [formal]" in sent[0]
    assert "must strictly conform to [informal]" in sent[1]
    before = len(running.stub.prompts)
    dl.translate_text("Hello, where is my box?", target_lang="TR", formality="prefer_more")
    assert "conform to" not in running.stub.prompts[before]  # the default prompt
    with pytest.raises(deepl.DeepLException, match="formality"):
        dl.translate_text("Hello", target_lang="EN-US", formality="more")
    with pytest.raises(deepl.DeepLException, match="formality"):
        dl.translate_text("Hello", target_lang="DE", formality="invalid")


def test_custom_instructions_become_hy_mt2s_numbered_preferences(running: Running) -> None:
    before = len(running.stub.prompts)
    client(running).translate_text(
        "Your parcel ships tomorrow.", target_lang="DE",
        custom_instructions=["Use informal language", "Be concise"])
    prompt = running.stub.prompts[before]
    assert "[Translation Tasks]\n1. Use informal language\n2. Be concise\n3. Translate" in prompt
    with pytest.raises(deepl.DeepLException, match="custom instruction"):
        client(running).translate_text("Hi", target_lang="DE",
                                       custom_instructions=["x" * 301])


def test_xml_tag_handling_takes_a_doctype(running: Running) -> None:
    """DeepL answers 200 for a text that starts ``<!DOCTYPE html>`` with tag_handling=xml."""
    text = "<!DOCTYPE html><html><body><p>Guten Morgen</p></body></html>"
    result = client(running).translate_text(text, target_lang="EN-US", source_lang="DE",
                                            tag_handling="xml")
    assert result.text == text


def test_an_entity_declared_in_the_doctype_is_never_expanded(running: Running) -> None:
    text = '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e; Hallo</x>'
    response = raw(running, "POST", "/v2/translate", json={
        "text": [text], "target_lang": "EN-US", "tag_handling": "xml"})
    assert "root:" not in response.text
    assert response.status_code in (200, 400)


# --- glossaries, v2 and v3 ---------------------------------------------------------------------


def test_a_glossary_of_10000_entries_is_kept_whole(running: Running) -> None:
    """deepl-python's test_glossary_create_large: 10,000 entries (neither 413 nor 400)."""
    entries = {f"Source-${i}": f"Target-${i}" for i in range(10_000)}
    dl = client(running)
    made = dl.create_glossary("large", "EN", "DE", entries)
    try:
        assert made.entry_count == 10_000 and dl.get_glossary_entries(made) == entries
        result = dl.translate_text("Ship Source-$9999 today", source_lang="EN",
                                   target_lang="DE", glossary=made)
        assert result.text == "Ship Target-$9999 today"
    finally:
        dl.delete_glossary(made)


def test_a_malformed_glossary_id_is_not_a_missing_one(running: Running) -> None:
    dl = client(running)
    for call in (dl.get_glossary, dl.get_multilingual_glossary):
        with pytest.raises(deepl.DeepLException) as bad:
            call(INVALID_GLOSSARY_ID)
        assert not isinstance(bad.value, deepl.GlossaryNotFoundException)
        with pytest.raises(deepl.GlossaryNotFoundException):
            call(NONEXISTENT_GLOSSARY_ID)


def test_a_multilingual_glossary_lives_its_whole_life(running: Running) -> None:
    """create (two pairs) -> get/list -> merge entries (PATCH) -> rename -> replace a pair
    (PUT) -> entries -> translate with it -> delete a pair -> delete: deepl-python's
    DeepLClient against /v3/glossaries, each step's answer parsed by the client."""
    dl = client(running, "")  # the host root, DeepL's own layout
    made = dl.create_multilingual_glossary("support", [
        Dict("EN", "DE", {"parcel": "Paket", "order": "Bestellung"}),
        Dict("DE", "EN", {"Paket": "parcel"})])
    assert [(d.source_lang, d.target_lang, d.entry_count) for d in made.dictionaries] == [
        ("EN", "DE", 2), ("DE", "EN", 1)]
    assert dl.get_multilingual_glossary(made.glossary_id).name == "support"
    assert made.glossary_id in [g.glossary_id for g in dl.list_multilingual_glossaries()]
    assert made.glossary_id in [g.glossary_id for g in dl.list_glossaries()]  # v2 sees it

    merged = dl.update_multilingual_glossary_dictionary(
        made, Dict("EN", "DE", {"order": "Auftrag", "refund": "Erstattung"}))
    assert merged.dictionaries[0].entry_count == 3
    assert dl.update_multilingual_glossary_name(made, "desk").name == "desk"
    replaced = dl.replace_multilingual_glossary_dictionary(
        made, Dict("DE", "EN", {"Rechnung": "invoice"}))
    assert replaced.entry_count == 1
    entries = dl.get_multilingual_glossary_entries(made, "EN", "DE").dictionaries[0].entries
    assert deepl.util.convert_tsv_to_dict(entries) == {"parcel": "Paket", "order": "Auftrag", "refund": "Erstattung"}

    result = dl.translate_text("Where is my parcel?", source_lang="EN", target_lang="DE",
                               glossary=made.glossary_id)
    assert result.text == "Where is my Paket?"
    with pytest.raises(deepl.DeepLException, match="no dictionary"):
        dl.translate_text("Hola", source_lang="ES", target_lang="DE", glossary=made.glossary_id)

    dl.delete_multilingual_glossary_dictionary(made, source_lang="DE", target_lang="EN")
    assert len(dl.get_multilingual_glossary(made.glossary_id).dictionaries) == 1
    dl.delete_multilingual_glossary(made)
    with pytest.raises(deepl.GlossaryNotFoundException):
        dl.get_multilingual_glossary(made.glossary_id)


def test_glossary_routes_need_a_key_and_keep_to_it(running: Running) -> None:
    response = httpx.get(running.url + "/v3/glossaries", timeout=30)
    assert response.status_code == 403 and response.json()["message"]
    other = deepl.DeepLClient("hymt-unknown", server_url=running.url,
                              send_platform_info=False)
    with pytest.raises(deepl.AuthorizationException):
        other.list_multilingual_glossaries()


# --- deepl-node, DeepL's Node client (npm, pinned in tests/js/package-lock.json) ---------------


def node_surface(running: Running, server_url: str) -> dict:
    """tests/js/deepl_surface.mjs: every public call of deepl-node's DeepLClient, each answer
    (or error class) as JSON."""
    done = subprocess.run(["node", str(JS / "deepl_surface.mjs"), server_url, running.key],
                          capture_output=True, text=True, timeout=120, cwd=JS)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("suffix", ["", "/deepl", "/deepl/"])
def test_deepl_node_runs_its_public_surface(running: Running, suffix: str) -> None:
    """deepl-node joins paths with axios' baseURL (src/client.ts: ``baseURL: this.serverUrl``),
    so each spelling reaches the same routes. What each answer must be, from its types
    (dist/types.d.ts) and errors (dist/errors.d.ts): a ``GET /v3/glossaries`` answered with
    the chat page would fail deepl-node on ``'<!doctype' is not valid JSON``."""
    got = node_surface(running, running.url + suffix)
    assert got["text"] == {"text": "Guten Morgen, wann wird mein Paket geliefert?",
                           "detected": "de", "billed": 45}
    assert got["texts"] == [["Bonjour tout le monde", "fr"], ["Hola amigo, ¿cómo estás?", "es"],
                            ["42", "en"]]  # DeepL names a language for every text
    assert got["modelType"] == "latency_optimized"
    assert got["sources"] == 38 and "en-US" in got["targets"] and "de" in got["targets"]
    assert got["usage"]["count"] > 0 and got["usage"]["limit"] > 0
    assert got["badTarget"]["error"] == "DeepLError" and "xx" in got["badTarget"]["message"]
    assert got["v2glossary"] == {"count": 1, "listed": True, "entries": {"parcel": "Paket"},
                                 "used": "Where is my Paket?",
                                 "gone": "GlossaryNotFoundError"}
    assert got["v3glossary"] == {"pairs": [["en", "de", 1], ["de", "en", 1]], "listed": True,
                                 "entries": {"Bestellung": "order"}}
    assert got["document"] == {"done": True, "billed": 45,
                               "text": "Guten Morgen, wann wird mein Paket geliefert?"}
    assert got["missingGlossary"]["error"] == "GlossaryNotFoundError"
    assert got["rephrase"]["error"] == "DeepLError"
    assert "does not offer" in got["rephrase"]["message"]
    assert got["badKey"]["error"] == "AuthorizationError"


# --- /v2/document, through deepl-python's translate_document_from_filepath --------------------


Walked = tuple[list, list]  # (the structure: formatting, tags, numbers; the texts)


def _runs(items: list[tuple]) -> Walked:
    """Neighbouring runs of the same formatting merged (a tab may start a run of its own)."""
    merged: list[list] = []
    for text, *form in items:
        if merged and merged[-1][1:] == form:
            merged[-1][0] += text
        else:
            merged.append([text, *form])
    return [m[1:] for m in merged], [m[0] for m in merged]


def _docx_walk(data: bytes) -> Walked:
    d = docx.Document(io.BytesIO(data))
    paragraphs = list(d.paragraphs) + [p for t in d.tables for row in t.rows
                                       for c in row.cells for p in c.paragraphs]
    paragraphs += d.sections[0].header.paragraphs + d.sections[0].footer.paragraphs
    walked = [_runs([(r.text, r.bold, r.italic, r.underline) for r in p.runs])
              for p in paragraphs]
    return [w[0] for w in walked], [w[1] for w in walked]


def _pptx_walk(data: bytes) -> Walked:
    forms: list = []
    texts: list = []
    for slide in pptx.Presentation(io.BytesIO(data)).slides:
        for shape in slide.shapes:
            frames = [shape.text_frame] if shape.has_text_frame else []
            if shape.has_table:
                frames = [c.text_frame for row in shape.table.rows for c in row.cells]
            for p in (p for f in frames for p in f.paragraphs):
                form, text = _runs([(r.text, r.font.bold) for r in p.runs])
                forms.append(form)
                texts.append(text)
        texts.append(slide.notes_slide.notes_text_frame.text)
    return forms, texts


def _xlsx_file() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Prices"
    sheet.append(["Blue chair", 259, "=B1*2"])
    sheet.append(["Only today", 3.5, "Ships in a week"])
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def _xlsx_walk(data: bytes) -> Walked:
    sheet = openpyxl.load_workbook(io.BytesIO(data))["Prices"]
    cells = [c.value for row in sheet.iter_rows() for c in row]
    return ([c for c in cells if not isinstance(c, str) or c.startswith("=")],
            [c for c in cells if isinstance(c, str) and not c.startswith("=")])


def _html_walk(data: bytes) -> Walked:
    tree = lxml_html.document_fromstring(data)
    elements = [el for el in tree.iter() if isinstance(el.tag, str)]
    def kept(el: lxml_html.HtmlElement) -> bool:  # as written: code, translate="no" (HTML5)
        return (el.tag in ("script", "style", "pre") or el.get("translate") == "no"
                or "notranslate" in el.get("class", ""))

    return ([(el.tag, sorted(el.attrib), el.text if kept(el) else "") for el in elements],
            [(el.text or "").strip() for el in elements if not kept(el)])


def _xliff_walk(data: bytes) -> list:
    root = etree.fromstring(data)
    return [(el.get("state"), "".join(el.itertext()))
            for el in root.iter("{*}target")]


def _upper(item: object) -> object:
    if isinstance(item, str):
        return item.upper()
    return [_upper(x) for x in item]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name, make, walk", [
    ("letter.docx", docx_letter, _docx_walk), ("sheet.pptx", pptx_sheet, _pptx_walk),
    ("prices.xlsx", _xlsx_file, _xlsx_walk), ("page.html", lambda: PAGE, _html_walk),
])
def test_deepl_python_translates_a_document_of_each_kind(running: Running, tmp_path: Path,
                                                         name: str, make, walk) -> None:
    """deepl-python's translate_document_from_filepath: upload, status until done, download;
    the file comes back the same kind, every text part translated (the stand-in upper-cases),
    every run's formatting, number and formula as it was — walked with the format's own
    library on both sides."""
    source, out = tmp_path / name, tmp_path / f"out-{name}"
    source.write_bytes(make())
    running.stub.answer = lambda prompt: upper(echo_source(prompt))
    try:
        status = client(running).translate_document_from_filepath(
            source, out, target_lang="DE", source_lang="EN")
    finally:
        running.stub.answer = echo_source
    assert status.done and status.billed_characters > 0
    (form_in, texts_in), (form_out, texts_out) = walk(source.read_bytes()), walk(out.read_bytes())
    assert form_out == form_in
    assert texts_out == _upper(texts_in) and texts_out != texts_in


def test_an_xliff_comes_back_with_its_targets_filled(running: Running, tmp_path: Path) -> None:
    """XLIFF 1.2 (OASIS, section 2.3 ``state``): every ``<target>`` filled and marked
    ``translated``; DeepL translates .xlf the same way."""
    source, out = tmp_path / "strings.xlf", tmp_path / "out.xlf"
    source.write_bytes(XLIFF12)
    client(running).translate_document_from_filepath(source, out, target_lang="DE")
    targets = _xliff_walk(out.read_bytes())
    assert targets and all(state == "translated" and text for state, text in targets)


def test_deepl_python_translates_a_pdf_in_place_and_as_docx_on_request(running: Running,
                                                                         tmp_path: Path) -> None:
    """deepl-python's translate_document (open files: it sends the file's own name; its
    ``filename`` is only for bytes, translator.py ``translate_document_upload``): a two-page PDF made with
    reportlab comes back two pages whose text, read back with PDFium, is the stand-in's
    translation of each block, its picture and link kept; ``output_format="docx"`` gives a Word
    file (DeepL's API: "PDF files can be converted to DOCX", the only cross-kind output this
    server offers)."""
    source = pdf_files.two_pages()
    path = tmp_path / "agreement.pdf"
    path.write_bytes(source)
    running.stub.answer = lambda prompt: upper(echo_source(prompt))
    try:
        with path.open("rb") as src, io.BytesIO() as out:
            status = client(running).translate_document(src, out, target_lang="DE",
                                                        source_lang="EN")
            data = out.getvalue()
        with path.open("rb") as src, io.BytesIO() as out:
            client(running).translate_document(src, out, target_lang="DE", source_lang="EN",
                                               output_format="docx")
            word = docx.Document(io.BytesIO(out.getvalue()))
    finally:
        running.stub.answer = echo_source
    assert status.done and status.billed_characters > 0
    document = pdfium.PdfDocument(data)
    pages = [" ".join(page.get_textpage().get_text_range().split()) for page in document]
    document.close()
    assert len(pages) == 2
    assert pdf_files.PAGE_ONE[1].upper() in pages[0] and pdf_files.PAGE_ONE[1] not in pages[0]
    assert "BLUE CHAIR" in pages[1] and pdf_files.PAGE_TWO[0].upper() in pages[1]
    with pikepdf.open(io.BytesIO(source)) as before, pikepdf.open(io.BytesIO(data)) as after:
        images = [[i.read_raw_bytes() for i in p.get_images().values()] for p in (before.pages[0],
                                                                           after.pages[0])]
        assert images[0] == images[1] != []
        links = [[str(a.A.URI) for a in p.obj.get("/Annots", []) if a.get("/Subtype") == "/Link"]
                 for p in (before.pages[0], after.pages[0])]
        assert links[0] == links[1] == [pdf_files.LINK]
    assert "RENTAL AGREEMENT" in [p.text for p in word.paragraphs]


def test_the_document_api_keeps_deepls_contract(running: Running) -> None:
    """Download once (then gone: 404); a wrong key is not found; not ready is 503
    (deepl-python's DocumentNotReadyException); output_format only the same kind; a corrupt
    file is refused at the upload with a sentence, nothing kept."""
    handle = client(running).translate_document_upload(
        b"Guten Morgen, wann kommt mein Paket?", target_lang="EN-US", filename="note.txt")
    dl = client(running)
    for _ in range(100):
        if dl.translate_document_get_status(handle).done:
            break
    first = raw(running, "POST", f"/v2/document/{handle.document_id}/result",
                data={"document_key": handle.document_key})
    assert first.status_code == 200 and first.text == "Guten Morgen, wann kommt mein Paket?"
    again = raw(running, "POST", f"/v2/document/{handle.document_id}/result",
                data={"document_key": handle.document_key})
    assert again.status_code == 404 and again.json()["message"]
    wrong = raw(running, "POST", f"/v2/document/{handle.document_id}",
                data={"document_key": "0" * 64})
    assert wrong.status_code == 404
    with pytest.raises(deepl.DeepLException, match="output_format"):
        dl.translate_document_upload(b"Hallo", target_lang="EN-US", filename="a.txt",
                                     output_format="docx")
    with pytest.raises(deepl.DeepLException):
        dl.translate_document_upload(b"PK\x03\x04 not a zip", target_lang="EN-US",
                                     filename="broken.docx")
