"""The LibreTranslate and DeepL APIs driven by the real clients, on the engine double.

A plain FastAPI app mounts the API over a real Translator (its own policy and client, like
app.py's), served by uvicorn on a real socket: the official ``deepl`` library
(``server_url=``) and ``libretranslatepy`` talk to it as they would to DeepL or a
LibreTranslate server, and raw httpx covers each field and error. The engine behind it is the
engine double (tests/support/engine_double.py) answering from a phrasebook
(tests/support/phrasebook.py), so each answer is known: what the API does with it is what is
tested. The real vLLM's round trip is tested in tests/test_e2e_translation.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.error
from collections.abc import Callable, Iterator
from pathlib import Path

import deepl
import httpx
import pytest
import srt
from libretranslatepy import LibreTranslateAPI

from tests.support.api_server import ApiApp, api_app
from tests.support.engine_double import EngineDouble, running_double
from tests.support.phrasebook import phrasebook
from tests.support.ports import free_port

pytestmark = pytest.mark.usefixtures("patient_deepl")

FR = "Bonjour, ma commande n'est toujours pas arrivée."
DE = "Guten Morgen, wann wird mein Paket geliefert?"
ES = "Hola, ¿puedo cambiar la dirección de envío?"
FR_EN = "Hello, my order has still not arrived."
DE_EN = "Good morning, when will my parcel be delivered?"
ES_EN = "Hello, can I change the shipping address?"
ANSWERS = phrasebook({
    FR: {"en": FR_EN, "de": "Hallo, meine Bestellung ist immer noch nicht angekommen."},
    DE: {"en": DE_EN},
    ES: {"en": ES_EN},
    "Please tell me your": {"de": "Bitte nennen Sie mir Ihre"},
    "Good morning": {"fr": "Bonjour", "zh": "早上好"},
    "dear customer": {"fr": "cher client", "zh": "亲爱的客户"},
    "Your parcel": {"fr": "Votre colis"},
    "has arrived": {"fr": "est arrivé"},
    "Bonjour et bienvenue.": {"en": "Hello and welcome."},
    "Merci de votre patience.": {"en": "Thank you for your patience."},
})
LINES = {"Bonjour.": "Hello.", "Merci.": "Thank you.", "Au revoir.": "Goodbye.",
         "À demain.": "See you tomorrow.", "Bonne nuit.": "Good night."}


def _api(double: EngineDouble, folder: Path) -> contextlib.AbstractContextManager[ApiApp]:
    settings = double.settings(window_max=2, cache_dir=folder)
    return api_app(settings, folder / "api-keys.db", free_port())


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiApp]:
    """The API on a double of its own for the module (the tests' keys keep them apart)."""
    folder = tmp_path_factory.mktemp("api")
    with running_double(answer=ANSWERS) as double, _api(double, folder) as app:
        yield app


def new_key(api: ApiApp, name: str, **limits: int) -> str:
    return api.store.create(name, per_minute=limits.pop("per_minute", 60), **limits)


def dl(api: ApiApp, key: str) -> deepl.Translator:
    # The trailing slash matters: the client joins "v2/translate" onto it (urljoin).
    return deepl.Translator(key, server_url=api.url + "/deepl/", send_platform_info=False)


async def _until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Wait for the app's own state (read, not pushed): checked every 50 ms, bounded."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.05)


def metric_lines(api: ApiApp, key_name: str) -> list[str]:
    body = api.metrics.render()[0].decode()
    return [line for line in body.splitlines()
            if line.startswith("hymt_api_requests_total") and f'key="{key_name}"' in line]


# --- DeepL, with the official client ----------------------------------------------------------


def test_deepl_client_translates_names_the_source_and_bills_characters(api: ApiApp) -> None:
    translator = dl(api, new_key(api, "deepl-basic"))
    one = translator.translate_text(FR, target_lang="EN-US")
    assert one.detected_source_lang == "FR"
    assert one.billed_characters == len(FR)
    assert one.text == FR_EN  # the engine's answer, as it gave it
    several = translator.translate_text([ES, DE], target_lang="EN-GB")
    assert [r.detected_source_lang for r in several] == ["ES", "DE"]
    assert [r.text for r in several] == [ES_EN, DE_EN]  # in the order sent
    usage = translator.get_usage()
    assert usage.character.count == len(FR) + len(ES) + len(DE)
    assert usage.character.limit == 1_000_000_000_000  # no quota on this key
    assert any('outcome="ok"' in line for line in metric_lines(api, "deepl-basic"))


def test_deepl_client_lists_38_sources_and_regional_targets(api: ApiApp) -> None:
    translator = dl(api, new_key(api, "deepl-languages"))
    sources = {lang.code for lang in translator.get_source_languages()}
    assert len(sources) == 38 and {"FR", "ZH", "ZH-HANT", "YUE", "BO"} <= sources
    targets = {lang.code: lang for lang in translator.get_target_languages()}
    assert {"EN-US", "EN-GB", "PT-BR", "PT-PT", "ZH-HANS", "ZH-HANT", "DE"} <= set(targets)
    assert targets["DE"].supports_formality is False


def test_deepl_glossary_is_created_applied_private_to_its_key_and_deleted(api: ApiApp) -> None:
    translator = dl(api, new_key(api, "deepl-glossary"))
    glossary = translator.create_glossary("support", source_lang="EN", target_lang="DE",
                                          entries={"order number": "Bestellnummer"})
    assert glossary.ready and glossary.entry_count == 1
    assert (glossary.source_lang, glossary.target_lang) == ("EN", "DE")
    assert translator.get_glossary_entries(glossary) == {"order number": "Bestellnummer"}
    assert [g.glossary_id for g in translator.list_glossaries()] == [glossary.glossary_id]
    result = translator.translate_text("Please tell me your order number.", source_lang="EN",
                                       target_lang="DE", glossary=glossary)
    assert result.text == "Bitte nennen Sie mir Ihre Bestellnummer.", result.text
    other = dl(api, new_key(api, "deepl-glossary-other"))
    with pytest.raises(deepl.GlossaryNotFoundException):
        other.get_glossary(glossary.glossary_id)
    translator.delete_glossary(glossary)
    assert translator.list_glossaries() == []


def test_deepl_html_keeps_tags_and_attributes(api: ApiApp) -> None:
    translator = dl(api, new_key(api, "deepl-html"))
    html = ('<p title="Greeting">Good morning, <b>dear customer</b>. '
            '<a href="https://example.com/?a=1&amp;b=2">Your parcel</a> has arrived.</p>'
            '<code>order_id = 42</code>')
    out = translator.translate_text(html, source_lang="EN", target_lang="FR",
                                    tag_handling="html").text
    assert out.startswith('<p title="Greeting">') and out.endswith(
        "</p><code>order_id = 42</code>"), out
    assert '<a href="https://example.com/?a=1&amp;b=2">' in out and "<b>" in out, out
    assert "Bonjour" in out and "<b>cher client</b>" in out and "est arrivé" in out, out
    assert "Good morning" not in out and "has arrived" not in out, out


def test_deepl_revoked_key_spent_quota_and_rate_limit(api: ApiApp,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deepl.http_client, "max_network_retries", 0)  # see the 429 itself
    revoked = new_key(api, "deepl-revoked")
    assert dl(api, revoked).translate_text("42", target_lang="DE").text == "42"  # no model call
    api.store.revoke("deepl-revoked")
    with pytest.raises(deepl.AuthorizationException):
        dl(api, revoked).translate_text("42", target_lang="DE")

    quota = dl(api, new_key(api, "deepl-quota", chars_per_month=len(FR) + 5))
    quota.translate_text(FR, target_lang="DE")
    with pytest.raises(deepl.QuotaExceededException):
        quota.translate_text(FR, target_lang="DE")
    usage = quota.get_usage()
    assert (usage.character.count, usage.character.limit) == (len(FR), len(FR) + 5)
    assert any('outcome="quota"' in line for line in metric_lines(api, "deepl-quota"))

    slow = dl(api, new_key(api, "deepl-slow", per_minute=2))
    for _ in range(2):
        slow.translate_text("42", target_lang="DE")
    with pytest.raises(deepl.TooManyRequestsException):
        slow.translate_text("42", target_lang="DE")
    body = api.metrics.render()[0].decode()
    assert 'key="deepl-slow",outcome="rate_limited"' in body
    assert "hymt-" not in body.replace("hymt_", "")  # names only, never a key


def test_deepl_raw_fields_and_errors(api: ApiApp) -> None:
    key = new_key(api, "deepl-raw")
    auth = {"Authorization": f"DeepL-Auth-Key {key}"}
    url = api.url + "/deepl/v2"
    with httpx.Client(timeout=300) as http:
        def post(body: dict, **kw) -> httpx.Response:
            return http.post(url + "/translate", json=body, headers=auth, **kw)

        big = http.post(url + "/translate", headers={**auth, "Content-Type": "application/json"},
                        content=json.dumps({"text": ["a" * 1_048_576], "target_lang": "DE"}))
        assert big.status_code == 413 and "131,072 bytes" in big.json()["message"]
        bad = post({"text": ["Hello"], "target_lang": "XX"})
        assert bad.status_code == 400 and "target_lang" in bad.json()["message"]
        assert post({"text": ["Hello"]}).status_code == 400
        assert post({"text": ["Hello"], "target_lang": "DE", "source_lang": "QQ"}
                    ).status_code == 400
        more = post({"text": ["Hello"], "target_lang": "DE", "formality": "more"})
        assert more.status_code == 400 and "formality" in more.json()["message"]
        prefer = post({"text": ["42"], "target_lang": "DE", "formality": "prefer_more"})
        assert prefer.status_code == 200
        assert post({"text": ["Hi"], "target_lang": "DE", "tag_handling": "md"}
                    ).status_code == 400
        broken = post({"text": ["<a><b>unclosed</a>"], "target_lang": "DE",
                       "tag_handling": "xml"})
        assert broken.status_code == 400 and "well-formed XML" in broken.json()["message"]
        no_source = post({"text": ["Hi"], "target_lang": "DE", "glossary_id": "x"})
        assert no_source.status_code == 400 and "source_lang" in no_source.json()["message"]
        unknown = post({"text": ["Hi"], "target_lang": "DE", "source_lang": "EN",
                        "glossary_id": "nope"})
        assert unknown.status_code == 404
        nokey = http.post(url + "/translate", json={"text": ["Hi"], "target_lang": "DE"})
        assert nokey.status_code == 403 and "key" in nokey.json()["message"]

        xml = post({"text": ['<doc><t id="1">Good morning</t><keep>Good morning</keep></doc>'],
                    "target_lang": "FR", "source_lang": "EN", "tag_handling": "xml",
                    "ignore_tags": ["keep"]})
        assert xml.status_code == 200, xml.text
        out = xml.json()["translations"][0]["text"]
        assert out.startswith('<doc><t id="1">') and out.endswith(
            "</t><keep>Good morning</keep></doc>"), out
        assert "Good morning</t>" not in out

        form = http.post(url + "/translate", data={"text": [FR, DE], "target_lang": "EN-US"},
                         headers=auth)
        assert form.status_code == 200, form.text
        got = form.json()["translations"]
        assert [t["detected_source_language"] for t in got] == ["FR", "DE"]
        assert [t["billed_characters"] for t in got] == [len(FR), len(DE)]


# --- LibreTranslate, with libretranslatepy and raw HTTP -------------------------------------


def test_libretranslatepy_translates_detects_and_lists(api: ApiApp) -> None:
    lt = LibreTranslateAPI(api.url + "/libretranslate", api_key=new_key(api, "lt-client"))
    out = lt.translate(FR, "fr", "en")
    assert out == FR_EN
    detected = lt.detect(DE)
    assert detected[0]["language"] == "de" and 50 <= detected[0]["confidence"] <= 100
    codes = {lang["code"] for lang in lt.languages()}
    assert len(codes) == 38 and {"zh-Hans", "zh-Hant", "yue", "en"} <= codes
    revoked = LibreTranslateAPI(api.url + "/libretranslate", api_key="hymt-not-a-key")
    with pytest.raises(urllib.error.HTTPError) as refused:
        revoked.translate(FR, "fr", "en")
    assert refused.value.code == 403
    assert json.loads(refused.value.read())["error"].startswith("Invalid API key")


def test_libretranslate_raw_fields(api: ApiApp) -> None:
    key = new_key(api, "lt-raw")
    url = api.url + "/libretranslate"
    with httpx.Client(timeout=300) as http:
        auto = http.post(url + "/translate", json={"q": FR, "source": "auto", "target": "en",
                                                   "api_key": key}).json()
        assert auto["detectedLanguage"]["language"] == "fr"
        assert auto["translatedText"] == FR_EN, auto
        batch = http.post(url + "/translate", json={"q": [ES, DE], "source": "auto",
                                                    "target": "en", "api_key": key}).json()
        assert [d["language"] for d in batch["detectedLanguage"]] == ["es", "de"]
        assert batch["translatedText"] == [ES_EN, DE_EN]
        html = http.post(url + "/translate", data={
            "q": '<p>Good morning, <b>dear customer</b>.</p>', "source": "en",
            "target": "zh-Hans", "format": "html", "api_key": key}).json()
        assert html["translatedText"].startswith("<p>"), html
        assert "<b>亲爱的客户</b>" in html["translatedText"], html
        assert "Good morning" not in html["translatedText"]
        alts = http.post(url + "/translate", json={"q": FR, "source": "fr", "target": "en",
                                                   "alternatives": 2, "api_key": key}).json()
        assert isinstance(alts["alternatives"], list) and len(alts["alternatives"]) <= 2
        assert alts["translatedText"] not in alts["alternatives"]
        assert "detectedLanguage" not in alts  # only for source=auto, as LibreTranslate does
        settings = http.get(url + "/frontend/settings").json()
        assert settings["keyRequired"] is True and ".srt" in settings["supportedFilesFormat"]


def test_libretranslate_errors(api: ApiApp) -> None:
    key = new_key(api, "lt-errors")
    url = api.url + "/libretranslate/translate"
    with httpx.Client(timeout=300) as http:
        def post(**fields: object) -> httpx.Response:
            return http.post(url, json={"api_key": key, **fields})

        missing = post(source="en", target="fr")
        assert missing.status_code == 400
        assert missing.json() == {"error": "Invalid request: missing q parameter"}
        unknown = post(q="Hello", source="en", target="xx")
        assert unknown.status_code == 400  # LibreTranslate's words (its codes: /languages)
        assert unknown.json() == {"error": "xx is not supported"}
        assert post(q="Hello", source="klingon", target="fr").status_code == 400
        assert post(q="Hello", source="en", target="fr", format="pdf").status_code == 400
        big = http.post(url, data={"q": "a" * 1_048_576, "source": "en", "target": "fr",
                                   "api_key": key})  # LibreTranslate's 400 over charLimit
        assert big.status_code == 400
        assert big.json()["error"] == ("Invalid request: request (1048576) exceeds text limit "
                                       "(200000)")
        keyless = http.post(url, json={"q": "Hi", "source": "en", "target": "fr"})
        assert keyless.status_code == 400  # LibreTranslate's answer to a missing key
        assert keyless.json() == {"error": "Please contact the server operator to get an API key"}
        slow_key = new_key(api, "lt-slow", per_minute=1)
        assert http.post(url, json={"q": "42", "source": "en", "target": "fr",
                                    "api_key": slow_key}).status_code == 200
        slow = http.post(url, json={"q": "42", "source": "en", "target": "fr",
                                    "api_key": slow_key})
        assert slow.status_code == 429 and slow.json()["error"].startswith("Slowdown:")
        assert int(slow.headers["Retry-After"]) >= 1


def test_libretranslate_translates_a_subtitle_file(api: ApiApp) -> None:
    key = new_key(api, "lt-file")
    subtitles = ("1\n00:00:01,000 --> 00:00:03,500\nBonjour et bienvenue.\n\n"
                 "2\n00:00:04,000 --> 00:00:06,000\nMerci de votre patience.\n")
    with httpx.Client(timeout=300) as http:
        answer = http.post(api.url + "/libretranslate/translate_file",
                           data={"source": "fr", "target": "en", "api_key": key},
                           files={"file": ("talk.srt", subtitles.encode(), "application/x-subrip")})
        assert answer.status_code == 200, answer.text
        link = answer.json()["translatedFileUrl"]
        assert link.startswith(api.url + "/libretranslate/download_file/")
        got = http.get(link)
        assert got.status_code == 200 and 'filename="talk.en.srt"' in got.headers[
            "content-disposition"]
        cues = list(srt.parse(got.text))
        assert [(c.index, c.start, c.end) for c in cues] == [
            (c.index, c.start, c.end) for c in srt.parse(subtitles)]
        assert [c.content for c in cues] == ["Hello and welcome.", "Thank you for your patience."]
        wrong = http.post(api.url + "/libretranslate/translate_file",
                          data={"source": "fr", "target": "en", "api_key": key},
                          files={"file": ("talk.gif", b"GIF89a", "image/gif")})
        assert wrong.status_code == 400 and ".srt" in wrong.json()["error"]


async def test_api_requests_reach_vllm_in_the_api_class_and_long_ones_as_bulk(
        engine: EngineDouble) -> None:
    """The priority each call carries, as the engine received it (vLLM's ``priority`` field)."""
    from hymt_chat.api.work import Job, run_job
    from hymt_chat.engine.client import ModelClient
    from hymt_chat.engine.policy import Policy
    from hymt_chat.engine.translator import Translator

    engine.answer = phrasebook({line: {"en": english} for line, english in LINES.items()}
                               | {FR: {"en": FR_EN}})
    settings = engine.settings(window_max=2)
    policy = Policy(window_max=2, deadline=settings.deadline, ranks=settings.priorities)
    translator = Translator(settings, ModelClient(settings), policy)
    [short] = await run_job(translator, Job([FR], "en", "fr"), user="api:t")
    assert [r.priority for r in engine.requests] == [25] and short.text == FR_EN
    lines = "\n".join(LINES)
    [long] = await run_job(translator, Job([lines], "en", "fr"), user="api:t")
    # More than 4 parts: bulk.
    assert [r.priority for r in engine.requests[1:]] == [30] * 5
    assert long.text.splitlines() == list(LINES.values())


async def test_a_client_that_hangs_up_cancels_its_model_calls_and_is_not_billed(
        tmp_path: Path) -> None:
    """A held engine keeps the call running until the client hangs up; the engine then sees
    it aborted (the app closed its connection), and the key is refunded."""
    long_text = " ".join([FR.rstrip(".") + ", et le suivi ne montre rien depuis lundi."] * 12)
    with running_double(answer=ANSWERS, hold=True) as double, _api(double, tmp_path) as api:
        key = new_key(api, "gone", chars_per_month=100_000)
        async with httpx.AsyncClient(timeout=120) as http:
            request = asyncio.create_task(http.post(
                api.url + "/deepl/v2/translate",
                headers={"Authorization": f"DeepL-Auth-Key {key}"},
                json={"text": [long_text], "target_lang": "DE", "source_lang": "FR"}))
            await double.until(lambda d: len(d.running) >= 1, "the model call")
            assert not request.done()  # the engine holds its answer
            request.cancel()
            with pytest.raises(asyncio.CancelledError):
                await request
        await double.until(lambda d: not d.running and not d.waiting and d.count("aborted") >= 1,
                           "the engine to see the abandoned calls aborted")
        await _until(lambda: api.policy.in_flight == 0, 30, "the abandoned calls to be cancelled")
        await _until(lambda: any('outcome="cancelled"' in line
                                for line in metric_lines(api, "gone")), 30, "the count")
        assert api.store.used("gone") == 0  # refunded: nothing was delivered
        assert double.count("finished") == 0
