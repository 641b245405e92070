"""The checks' findings reach API callers in both dialects, where the official clients ignore
them: each translation's ``hymt_flags`` (a list of ``{"kind", "message"}``, empty when every
check passed) and the answer's ``X-Hymt-Flags`` (how many in all).

Through the real HTTP surface: a plain FastAPI app with the API mounted over a real Translator
(tests/support/api_server.py), whose checks (hymt_chat/text/checks.py) judge the answers of the
engine double (tests/support/engine_double.py). Its phrasebook answers "14 Tagen" with "8 days"
and "12. März" with "13 March" every time, so the one repair gets the same wrong answer and the
finding stays. What the checks say of each pair (:func:`check_translation`) is what the API
must answer.

Why the clients never notice (the installed versions, the lines they read an answer with):

- deepl-python 1.32.0 reads each ``translations[]`` item's own fields by name and nothing else
  (deepl/translator.py:587-607: ``translation.get("text")``, ``"detected_source_language"``,
  ``"billed_characters"``, ``"model_type_used"``), and its HTTP layer hands back the status and
  the body alone, never a header (deepl/http_client.py:174-181: ``return
  response.status_code, response.text``; deepl/translator.py:155-168 parses that body).
- libretranslatepy 2.1.4 returns ``json.loads(response_str)["translatedText"]``
  (libretranslatepy/api.py:60-62) and reads no header.
- deep-translator 1.11.4 returns ``res["translatedText"]`` (deep_translator/libre.py:101-105),
  and its ``translate_batch`` is ``translate`` once per text (deep_translator/base.py:171-183).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import deepl
import httpx
import pytest
from deep_translator import LibreTranslator
from libretranslatepy import LibreTranslateAPI

from hymt_chat.api.keys import KeyStore
from hymt_chat.service.web import ApiCors
from hymt_chat.text.checks import check_translation
from tests.support.api_server import ApiApp, api_app, build_app, serving
from tests.support.engine_double import running_double
from tests.support.phrasebook import phrasebook
from tests.support.ports import free_port

pytestmark = pytest.mark.usefixtures("patient_deepl")

LATE = "Bitte senden Sie das Paket innerhalb von 14 Tagen zurück."
LATE_EN = "Please return the parcel within 8 days."  # a duration changed
DAY = "Die Lieferung kommt am 12. März."
DAY_EN = "The delivery arrives on 13 March."  # a date changed
CLEAN = "Guten Morgen, wann wird mein Paket geliefert?"
CLEAN_EN = "Good morning, when will my parcel be delivered?"
TWO = f"{LATE} {DAY}"  # one segment (short enough), two findings
TWO_EN = f"{LATE_EN} {DAY_EN}"
ANSWERS = phrasebook({LATE: {"en": LATE_EN}, DAY: {"en": DAY_EN}, CLEAN: {"en": CLEAN_EN}})
ELSEWHERE = "https://some-page.example"


def flags(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    """What the checks say of each (source, answer) pair, as ``hymt_flags`` lists them."""
    return [{"kind": f.kind, "message": f.message}
            for source, answer in pairs for f in check_translation(source, answer, "de", "en")]


def test_the_expected_flags_are_real_findings() -> None:
    """The oracle itself: each changed value is a finding naming it, the clean answer none
    (else every test below could pass on two empty lists)."""
    assert [(f["kind"], "14 Tagen" in f["message"]) for f in flags((LATE, LATE_EN))] == [
        ("duration", True)]
    assert [(f["kind"], "12. März" in f["message"]) for f in flags((DAY, DAY_EN))] == [
        ("date", True)]
    assert sorted(f["kind"] for f in flags((TWO, TWO_EN))) == ["date", "duration"]
    assert flags((CLEAN, CLEAN_EN)) == []


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("flags")


@pytest.fixture(scope="module")
def api(folder: Path) -> Iterator[ApiApp]:
    with running_double(answer=ANSWERS) as double, api_app(
            double.settings(window_max=2, cache_dir=folder), folder / "api-keys.db",
            free_port()) as app:
        yield app


def new_key(api: ApiApp, name: str) -> str:
    """A key of its own per test (a path in its name is written with dots: names are plain)."""
    return api.store.create(name.strip("/").replace("/", "."), per_minute=600)


def deepl_post(api: ApiApp, key: str, path: str, texts: list[str],
               as_form: bool = False) -> httpx.Response:
    fields: dict[str, Any] = {"text": texts, "source_lang": "DE", "target_lang": "EN-US"}
    return httpx.post(api.url + path, headers={"Authorization": f"DeepL-Auth-Key {key}"},
                      timeout=120, data=fields if as_form else None,
                      json=None if as_form else fields)


def libre_post(api: ApiApp, key: str, path: str, q: str | list[str],
               **more: str) -> httpx.Response:
    fields = {"q": q, "source": "de", "target": "en", "api_key": key, **more}
    return httpx.post(api.url + path, json=fields, timeout=120)


# --- DeepL ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "as_form"), [("/v2/translate", False),
                                               ("/deepl/v2/translate", True)],
                         ids=["root-json", "deepl-form"])
def test_deepl_items_carry_their_flags_and_the_header_counts_them(
        api: ApiApp, path: str, as_form: bool) -> None:
    """Each ``translations[]`` item has its text's findings; DeepL's own fields are as before."""
    got = deepl_post(api, new_key(api, f"deepl-flags{path}"), path, [TWO, CLEAN, LATE], as_form)
    assert got.status_code == 200, got.text
    items = got.json()["translations"]
    assert [item["hymt_flags"] for item in items] == [
        flags((TWO, TWO_EN)), [], flags((LATE, LATE_EN))]
    assert got.headers["X-Hymt-Flags"] == "3"
    assert [{k: v for k, v in item.items() if k != "hymt_flags"} for item in items] == [
        {"detected_source_language": "DE", "text": text, "billed_characters": len(source)}
        for text, source in ((TWO_EN, TWO), (CLEAN_EN, CLEAN), (LATE_EN, LATE))]


def test_a_clean_deepl_translation_says_none(api: ApiApp) -> None:
    got = deepl_post(api, new_key(api, "deepl-clean"), "/v2/translate", [CLEAN])
    assert got.json()["translations"][0]["hymt_flags"] == []
    assert got.headers["X-Hymt-Flags"] == "0"


def test_deepl_python_reads_the_flagged_answer_unchanged(api: ApiApp) -> None:
    """The same texts through deepl.Translator: the answers as the model gave them, DeepL's
    fields right, nothing raised over the extra field (deepl/translator.py:587-607)."""
    key = new_key(api, "deepl-client")
    raw = deepl_post(api, key, "/deepl/v2/translate", [TWO])
    assert raw.json()["translations"][0]["hymt_flags"]  # the client is sent the field
    client = deepl.Translator(key, server_url=api.url + "/deepl/", send_platform_info=False)
    results = client.translate_text([TWO, CLEAN, LATE], source_lang="DE", target_lang="EN-US")
    assert isinstance(results, list)
    assert [(r.text, r.detected_source_lang, r.billed_characters) for r in results] == [
        (TWO_EN, "DE", len(TWO)), (CLEAN_EN, "DE", len(CLEAN)), (LATE_EN, "DE", len(LATE))]
    one = client.translate_text(LATE, source_lang="DE", target_lang="EN-GB")
    assert not isinstance(one, list) and one.text == LATE_EN


# --- LibreTranslate ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/libretranslate/translate", "/libretranslatetranslate",
                                  "/libretranslate//translate"])
def test_libretranslate_answers_flags_beside_the_text(api: ApiApp, path: str) -> None:
    """One text: a list beside ``translatedText``; the paths clients join all answer it."""
    got = libre_post(api, new_key(api, f"libre-one{path}"), path, TWO)
    assert got.status_code == 200, got.text
    assert got.json() == {"translatedText": TWO_EN, "hymt_flags": flags((TWO, TWO_EN))}
    assert got.headers["X-Hymt-Flags"] == "2"


def test_a_libretranslate_batch_has_a_list_per_text(api: ApiApp) -> None:
    got = libre_post(api, new_key(api, "libre-batch"), "/libretranslate/translate",
                     [LATE, CLEAN, DAY])
    assert got.json() == {"translatedText": [LATE_EN, CLEAN_EN, DAY_EN],
                          "hymt_flags": [flags((LATE, LATE_EN)), [], flags((DAY, DAY_EN))]}
    assert got.headers["X-Hymt-Flags"] == "2"


def test_a_clean_libretranslate_translation_says_none(api: ApiApp) -> None:
    got = libre_post(api, new_key(api, "libre-clean"), "/libretranslate/translate", CLEAN)
    assert got.json() == {"translatedText": CLEAN_EN, "hymt_flags": []}
    assert got.headers["X-Hymt-Flags"] == "0"


def test_html_flags_come_in_the_texts_order(api: ApiApp) -> None:
    """Each text slot is a translation of its own; their findings come in document order."""
    got = libre_post(api, new_key(api, "libre-html"), "/libretranslate/translate",
                     f"<p>{LATE}</p><p><b>{DAY}</b></p>", format="html")
    assert got.json() == {"translatedText": f"<p>{LATE_EN}</p><p><b>{DAY_EN}</b></p>",
                          "hymt_flags": flags((LATE, LATE_EN), (DAY, DAY_EN))}
    assert got.headers["X-Hymt-Flags"] == "2"


def test_libretranslate_clients_read_the_flagged_answer_unchanged(api: ApiApp) -> None:
    """libretranslatepy (api.py:60-62) and deep-translator (libre.py:101-105) take
    ``translatedText`` out of the very answer that carries ``hymt_flags``."""
    key = new_key(api, "libre-clients")
    root = api.url + "/libretranslate"
    assert libre_post(api, key, "/libretranslate/translate", LATE).json()["hymt_flags"]
    assert LibreTranslateAPI(root, api_key=key).translate(TWO, "de", "en") == TWO_EN
    deep = LibreTranslator(source="de", target="en", api_key=key, custom_url=root + "/")
    assert deep.translate(LATE) == LATE_EN
    assert deep.translate_batch([TWO, CLEAN]) == [TWO_EN, CLEAN_EN]


def test_a_translated_file_carries_the_whole_files_flags(api: ApiApp) -> None:
    """``/translate_file`` answers ``translatedFileUrl`` (what clients read) and the findings of
    every part of the file beside it, each with its part, counted in the header; the file is
    the translation."""
    key = new_key(api, "libre-file")
    got = httpx.post(api.url + "/libretranslate/translate_file", timeout=120,
                     data={"source": "de", "target": "en", "api_key": key},
                     files={"file": ("note.txt", f"{TWO}\n\n{CLEAN}\n".encode(), "text/plain")})
    assert got.status_code == 200, got.text
    body = got.json()
    assert set(body) == {"translatedFileUrl", "hymt_flags"}
    # A .txt of this size is one part: each finding names it, as the chat's summary does.
    assert body["hymt_flags"] == [{**flag, "part": 1} for flag in flags((TWO, TWO_EN))]
    assert got.headers["X-Hymt-Flags"] == "2"
    assert httpx.get(body["translatedFileUrl"], timeout=30).text == f"{TWO_EN}\n\n{CLEAN_EN}\n"


# --- Browsers ---------------------------------------------------------------------------------


@contextlib.contextmanager
def behind_cors(folder: Path, origin: str) -> Iterator[tuple[str, str]]:
    """The API behind the app's ApiCors (as web.py installs it), on a double of its own."""
    with running_double(answer=ANSWERS) as double:
        store = KeyStore(folder / "cors-keys.db")
        app, _, _ = build_app(double.settings(window_max=2, cache_dir=folder), store)
        app.add_middleware(ApiCors, origins=frozenset({origin}))
        try:
            with serving(app, free_port()) as url:
                yield url, store.create("cors", per_minute=600)
        finally:
            store.close()


def test_a_page_on_another_origin_may_read_the_header(folder: Path) -> None:
    """A browser hides every answer header the CORS answer does not expose: both dialects
    expose ``X-Hymt-Flags`` (the field needs nothing: it is in the body)."""
    with behind_cors(folder, ELSEWHERE) as (url, key):
        libre = httpx.post(url + "/libretranslate/translate", headers={"Origin": ELSEWHERE},
                           json={"q": LATE, "source": "de", "target": "en", "api_key": key},
                           timeout=120)
        dl = httpx.post(url + "/v2/translate", timeout=120,
                        headers={"Origin": ELSEWHERE, "Authorization": f"DeepL-Auth-Key {key}"},
                        json={"text": [LATE], "source_lang": "DE", "target_lang": "EN-US"})
    for answer in (libre, dl):
        assert answer.status_code == 200, answer.text
        exposed = answer.headers["Access-Control-Expose-Headers"].lower().split(", ")
        assert "x-hymt-flags" in exposed and answer.headers["X-Hymt-Flags"] == "1"
