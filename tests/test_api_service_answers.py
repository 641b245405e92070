"""Where DeepL's and LibreTranslate's own suites, clients and documents say how the service
answers, the API answers the same: each test names the line it follows.

One plain FastAPI app with the API mounted (tests/support/api_server.py) on the instant
stand-in model, served by uvicorn for the real clients (deepl-python, libretranslatepy), which
are synchronous. The stand-in echoes the text it is asked to translate: only the contract is
judged here. The family is the default one (Hunyuan-MT, no fusion model configured), so that
Best quality is *not* available, the case DeepL's quality setting must still be served in.

Sources: deepl-python at tag v1.30.0 (DeepLcom/deepl-python 84abaee), DeepL's API docs
(DeepLcom/api-docs 27999b3: api-reference/openapi.yaml, api-reference/translate.mdx), and
LibreTranslate's libretranslate/app.py (LibreTranslate/LibreTranslate 39429cb).
"""

from __future__ import annotations

import re
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import deepl
import httpx
import pytest
from deepl import util
from deepl.api_data import MultilingualGlossaryDictionaryEntries
from libretranslatepy import LibreTranslateAPI

from hymt_chat.engine.chimera import chimera_available
from hymt_chat.settings import Settings
from tests.support.api_server import ApiApp, api_app
from tests.support.ports import free_port
from tests.support.stub_model import StubModel, echo_source

PROTONENSTRAHL = "Protonenstrahl"  # deepl-python tests/conftest.py:487, example_text["DE"]
PROTON_BEAM = "proton beam"  # ... :489, example_text["EN"]


@dataclass
class Served:
    app: ApiApp
    key: str
    stub: StubModel
    settings: Settings

    @property
    def url(self) -> str:
        return self.app.url

    def deepl(self, key: str | None = None) -> deepl.DeepLClient:
        return deepl.DeepLClient(key or self.key, server_url=self.url,
                                 send_platform_info=False)

    def auth(self, key: str | None = None) -> dict[str, str]:
        return {"Authorization": f"DeepL-Auth-Key {key or self.key}"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("answers")
    with StubModel(answer=echo_source) as stub:
        settings = Settings(base_url=stub.base_url, api_key="k", model="stub",
                            cache_dir=folder, checks=False, rate_limit_calls="")
        with api_app(settings, folder / "keys.db", free_port()) as app:
            yield Served(app, app.store.create("suite", per_minute=10_000), stub, settings)


# --- model_type ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["quality_optimized", "prefer_quality_optimized"])
def test_quality_is_served_where_no_fusion_model_is_configured(served: Served,
                                                                kind: str) -> None:
    """DeepL: "All features and language pairs are compatible with all model_type values"
    (api-reference/translate.mdx:390); deepl-python's test_model_type
    (tests/test_translate_text.py:20-28) translates with each ModelType and asks only that
    ``model_type_used`` is named. Without Best quality the model's own answer is the best this
    server has: served in the API class (vLLM priority 25, not latency's interactive 0)."""
    assert not chimera_available(served.settings)  # the case the issue found refused
    before = len(served.stub.requests)
    text = {"quality_optimized": "Guten Morgen, wann kommt mein Paket?",
            "prefer_quality_optimized": "Guten Abend, wo bleibt meine Bestellung?"}[kind]
    result = served.deepl().translate_text(text, target_lang="EN-US", model_type=kind)
    assert result.model_type_used == "quality_optimized" and result.text == text
    assert [r["priority"] for r in served.stub.requests[before:]] == [25]
    assert served.stub.requests[before].get("n", 1) == 1  # one answer: no candidates to fuse


# --- glossaries ------------------------------------------------------------------------------


def test_v3_entries_are_tsv_without_a_trailing_newline(served: Served) -> None:
    """deepl-python's test_glossary_dictionary_replace
    (tests/test_multilingual_glossary.py:146-184), step by step: create, replace the pair's
    entries, then the entries equal ``util.convert_dict_to_tsv(entries)`` — ``"\\n".join`` of
    the lines (deepl/util.py:126-143), no newline after the last."""
    dl = served.deepl()
    created = dl.create_multilingual_glossary("replace", [
        MultilingualGlossaryDictionaryEntries("EN", "DE", {"Hello": "Hallo"})])
    try:
        entries = {"Apple": "Apfel"}
        replaced = dl.replace_multilingual_glossary_dictionary(
            created, MultilingualGlossaryDictionaryEntries("EN", "DE", entries))
        assert replaced.entry_count == len(entries)
        got = dl.get_multilingual_glossary_entries(created.glossary_id, "EN", "DE")
        assert len(got.dictionaries) == 1
        assert got.dictionaries[0].entries == util.convert_dict_to_tsv(entries) == "Apple\tApfel"
        two = {"Apple": "Apfel", "pear": "Birne"}
        dl.replace_multilingual_glossary_dictionary(
            created, MultilingualGlossaryDictionaryEntries("EN", "DE", two))
        got = dl.get_multilingual_glossary_entries(created.glossary_id, "EN", "DE")
        assert got.dictionaries[0].entries == "Apple\tApfel\npear\tBirne"
    finally:
        dl.delete_multilingual_glossary(created)


def test_v2_entries_are_the_same_tsv(served: Served) -> None:
    """v2's ``GET /v2/glossaries/{id}/entries`` answers the same TSV as v3, whose entries
    DeepL's OpenAPI shows as ``"Hello\\tGuten Tag"`` (openapi.yaml:1251): no newline after the
    last line."""
    dl = served.deepl()
    made = dl.create_glossary("v2", "EN", "DE", {"Apple": "Apfel", "pear": "Birne"})
    try:
        raw = httpx.get(f"{served.url}/v2/glossaries/{made.glossary_id}/entries",
                        headers=served.auth(), timeout=30)
        assert raw.status_code == 200 and raw.text == "Apple\tApfel\npear\tBirne"
        assert dl.get_glossary_entries(made) == {"Apple": "Apfel", "pear": "Birne"}
    finally:
        dl.delete_glossary(made)


# --- documents -------------------------------------------------------------------------------


@pytest.mark.parametrize("source_lang", [None, "DE"])
def test_a_document_already_in_the_target_language_fails_with_its_handle(
        served: Served, tmp_path: Path, source_lang: str | None) -> None:
    """deepl-python's test_document_failure_during_translation
    (tests/test_translate_document.py:189-208), word for word: a German document to DE
    raises DocumentTranslationException, "Source and target language" in its text, the
    document handle on it and printed as ``ID: <32 hex>, key: <64 hex>``. DeepL's status for
    it is ``error`` (openapi.yaml:1072-1077: "Source and target language are equal."); nothing
    is billed: the key's usage does not move."""
    key = served.app.store.create(f"same-{source_lang}", per_minute=100)
    dl = served.deepl(key)
    path, out = tmp_path / "example_document.txt", tmp_path / "out" / "example_document.txt"
    path.write_text(PROTONENSTRAHL)
    out.parent.mkdir()
    before = len(served.stub.requests)
    with pytest.raises(deepl.DocumentTranslationException) as failed:
        dl.translate_document_from_filepath(path, out, target_lang="DE",
                                            source_lang=source_lang)
    exception = failed.value
    assert "Source and target language" in str(exception)
    assert exception.document_handle is not None and exception.document_request is not None
    assert re.search("ID: [0-9A-F]{32}, key: [0-9A-F]{64}", str(exception))
    assert not out.exists()  # deepl-python removes its output file
    status = dl.translate_document_get_status(exception.document_handle)
    assert status.status == deepl.DocumentStatus.Status.ERROR
    assert status.error_message.startswith("Source and target language are equal.")
    assert dl.get_usage().character.count == 0
    assert len(served.stub.requests) == before  # the model was never asked


def test_an_unsupported_document_type_is_refused_in_deepls_words(served: Served,
                                                                 tmp_path: Path) -> None:
    """deepl-python's test_invalid_document (tests/test_translate_document.py:211-224; the
    CLI's, tests/test_cli.py:272-282): ``match="(Invalid file)|(file extension)"``. Our
    sentence, the kinds this server reads, follows DeepL's words."""
    path = tmp_path / "document.invalid"
    path.write_text(PROTON_BEAM)
    with pytest.raises(deepl.DeepLException, match="(Invalid file)|(file extension)") as bad:
        served.deepl().translate_document_from_filepath(path, tmp_path / "out.invalid",
                                                        target_lang="DE", source_lang="EN")
    assert ".docx" in str(bad.value) and "document.invalid" in str(bad.value)
    assert not isinstance(bad.value, deepl.DocumentTranslationException)  # refused at upload


# --- DeepL's limits, languages ---------------------------------------------------------------


def test_a_body_over_128_kib_is_413(served: Served) -> None:
    """DeepL: texts "within the request size limit (128KiB)" (openapi.yaml:550), a request over
    it answered 413 "The request size exceeds the limit" (openapi.yaml:3788-3789, the
    ``PayloadTooLarge`` response of /v2/translate), in DeepL's error shape (``message``), with
    a Content-Length or without one (chunked)."""
    text = "Protonenstrahl " * 14_000  # ~210 KB
    sized = httpx.post(f"{served.url}/v2/translate", headers=served.auth(), timeout=30,
                       json={"text": [text], "target_lang": "EN-US"})
    assert sized.status_code == 413 and "limit" in sized.json()["message"]

    def chunks() -> Iterator[bytes]:
        yield b'{"target_lang": "EN-US", "text": ["'
        for _ in range(14):
            yield text[:15_000].encode()
        yield b'"]}'

    chunked = httpx.post(f"{served.url}/deepl/v2/translate", timeout=30, content=chunks(),
                         headers={**served.auth(), "Content-Type": "application/json"})
    assert chunked.status_code == 413 and chunked.json()["message"]
    with pytest.raises(deepl.DeepLException, match="413"):
        served.deepl().translate_text(text, target_lang="EN-US")


def test_v3_languages_answers_in_deepls_shape(served: Served) -> None:
    """``GET /v3/languages?resource=…`` (openapi.yaml:2434-2530): a list of ``lang`` (BCP 47:
    ``en-US``, ``zh-Hant``), ``name``, ``usable_as_source``, ``usable_as_target``, ``status``
    and ``features`` (a feature present as a key; formality where /v2/languages says
    ``supports_formality``, api-reference/languages/migrate-from-v2-languages.mdx); the
    ``resource`` parameter is required; GET only. ``/v3/languages/resources`` names each
    resource's features and the side each needs (openapi.yaml:2326-2420)."""
    got = httpx.get(f"{served.url}/v3/languages", params={"resource": "translate_text"},
                    headers=served.auth(), timeout=30)
    assert got.status_code == 200
    langs = {lang["lang"]: lang for lang in got.json()}
    for lang in langs.values():
        assert set(lang) == {"lang", "name", "usable_as_source", "usable_as_target", "status",
                             "features"} and lang["status"] == "stable"
    assert langs["de"]["usable_as_source"] and langs["de"]["usable_as_target"]
    assert (langs["en"]["usable_as_source"], langs["en"]["usable_as_target"]) == (True, False)
    assert (langs["en-US"]["usable_as_source"], langs["en-US"]["usable_as_target"]) == (
        False, True)
    assert langs["en-US"]["name"] == "English (American)" and "zh-Hant" in langs
    dl = served.deepl()
    v2_sources = {s.code.lower() for s in dl.get_source_languages()}
    v2_targets = {t.code.lower(): t.supports_formality for t in dl.get_target_languages()}
    assert {c.lower() for c, v in langs.items() if v["usable_as_source"]} == v2_sources
    assert {c.lower() for c, v in langs.items() if v["usable_as_target"]} == set(v2_targets)
    for code, formality in v2_targets.items():
        match = next(v for c, v in langs.items() if c.lower() == code)
        assert ("formality" in match["features"]) == formality, code
    assert all(lang["features"]["glossary"] == {"status": "stable"} for lang in langs.values())

    def ask(**params: str) -> httpx.Response:
        return httpx.get(f"{served.url}/deepl/v3/languages", params=params,
                         headers=served.auth(), timeout=30)

    assert len(ask(resource="glossary").json()) == 38
    assert ask(resource="write").json() == []  # a resource this server has no part of
    for refused in (ask(), ask(resource="everything")):
        assert refused.status_code == 400 and "resource" in refused.json()["message"]
    posted = httpx.post(f"{served.url}/v3/languages", headers=served.auth(), timeout=30)
    assert posted.status_code == 405 and posted.headers["allow"] == "GET"
    resources = httpx.get(f"{served.url}/v3/languages/resources", headers=served.auth(),
                          timeout=30).json()
    text = next(r for r in resources if r["name"] == "translate_text")
    assert {"name": "formality", "needs_target_support": True} in text["features"]
    keyless = httpx.get(f"{served.url}/v3/languages?resource=translate_text", timeout=30)
    assert keyless.status_code == 403 and keyless.json()["message"]


# --- LibreTranslate's words ------------------------------------------------------------------


def test_libretranslate_says_invalid_json_format_and_invalid_api_key(served: Served) -> None:
    """app.py:99-103, ``get_json_dict``: a JSON body that is not an object is 400 "Invalid JSON
    format"; app.py:342-347, ``access_check``: an unknown key is 403 "Invalid API key". The
    sentences are LibreTranslate's word for word; ours is beside them in ``detail``."""
    root = f"{served.url}/libretranslate"
    listed = httpx.post(f"{root}/translate", json=["Hallo"], timeout=30,
                        params={"api_key": served.key})
    assert listed.status_code == 400 and listed.json()["error"] == "Invalid JSON format"
    assert "JSON object" in listed.json()["detail"]
    bad = httpx.post(f"{root}/translate", timeout=30, data={
        "q": PROTONENSTRAHL, "source": "de", "target": "en", "api_key": "hymt-unknown"})
    assert bad.status_code == 403 and bad.json()["error"] == "Invalid API key"
    assert "revoked" in bad.json()["detail"]
    with pytest.raises(urllib.error.HTTPError) as refused:  # what libretranslatepy raises
        LibreTranslateAPI(root, api_key="hymt-unknown").translate(PROTONENSTRAHL, "de", "en")
    assert refused.value.code == 403


def test_libretranslate_says_file_format_not_supported(served: Served) -> None:
    """app.py:983-984, ``translate_file``: an extension it does not read is 400 "Invalid
    request: file format not supported"; the formats this server reads follow."""
    answer = httpx.post(f"{served.url}/libretranslate/translate_file", timeout=30,
                        data={"source": "en", "target": "de", "api_key": served.key},
                        files={"file": ("document.invalid", PROTON_BEAM.encode())})
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error.startswith("Invalid request: file format not supported. ")
    assert ".srt" in error and "document.invalid" in error


def test_libretranslate_refuses_a_spent_quota_with_400(served: Served) -> None:
    """LibreTranslate has no monthly quota and no 456: what a key may not send it refuses with
    400 "Invalid request: …" (app.py:781-787, the key's ``char_limit``); its 429 "Slowdown:" is
    the per-minute limit (app.py:430-433), which stays 429 here."""
    key = served.app.store.create("lt-quota", per_minute=100, chars_per_month=20)
    fields = {"source": "de", "target": "en", "api_key": key}
    root = f"{served.url}/libretranslate"
    assert httpx.post(f"{root}/translate", data={**fields, "q": PROTONENSTRAHL},
                      timeout=30).status_code == 200
    spent = httpx.post(f"{root}/translate", data={**fields, "q": PROTONENSTRAHL}, timeout=30)
    assert spent.status_code == 400
    assert spent.json()["error"].startswith("Invalid request: ")
    assert "quota" in spent.json()["error"]
    slow = served.app.store.create("lt-slow", per_minute=1)
    first = httpx.post(f"{root}/translate", timeout=30,
                       data={**fields, "api_key": slow, "q": "42"})
    assert first.status_code == 200
    second = httpx.post(f"{root}/translate", timeout=30,
                        data={**fields, "api_key": slow, "q": "42"})
    assert second.status_code == 429 and second.json()["error"].startswith("Slowdown:")
