"""``/libretranslate`` answers as LibreTranslate does: a conformance check written from its
``libretranslate/app.py``, ``language.py`` and API tests (LibreTranslate/LibreTranslate at
39429cb, 2026-07-24; lines cited in each test), and its real clients.

The real app (``chainlit run app.py``: its catch-all page route, its door and CORS) on an
*instant stand-in model* whose answers are marked ``EN:`` — a stand-in on purpose: what is judged
is the API's contract (paths, status codes, bodies, headers), not a translation. One app for the
module: open to 127.0.0.1 without a key (``HYMT_API_OPEN_LOCAL``, what a laptop runs), a key for
the rest, 127.0.0.1 a trusted proxy so that ``X-Forwarded-For`` can make a caller from
elsewhere, ``HYMT_MAX_INPUT_CHARS`` small so that the limits are cheap to reach.
"""

from __future__ import annotations

import threading
import urllib.error
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pypdfium2 as pdfium
import pytest
from deep_translator import LibreTranslator
from libretranslatepy import LibreTranslateAPI

from hymt_chat.api.keys import KeyStore
from hymt_chat.api.libre_spec import PATHS
from hymt_chat.service.web_guard import LIBRE_ENDPOINTS
from tests.support import pdf_files
from tests.support.browser import new_page
from tests.support.tabs import app

LIMIT = 2000  # HYMT_MAX_INPUT_CHARS, LibreTranslate's charLimit here
LISTED = "https://tools.example"  # HYMT_API_ORIGINS
ELSEWHERE = "https://some-page.example"  # any other web page
KEY_NEEDED = "Please contact the server operator to get an API key"
FR = "Bonjour, ma commande n'est toujours pas arrivée."
# LibreTranslate's answer to FR, and ours beside it: the checks' findings, none here
# (tests/test_api_flags.py)
TRANSLATED = {"translatedText": "EN:" + FR, "hymt_flags": []}


@dataclass
class Lt:
    url: str  # the app's base URL
    key: str

    @property
    def root(self) -> str:
        return self.url + "/libretranslate"


@pytest.fixture(scope="module")
def lt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lt]:
    folder = tmp_path_factory.mktemp("lt")
    store = KeyStore(folder / "keys.db")
    key = store.create("contract", per_minute=10_000)
    store.close()
    with app(folder, HYMT_API_OPEN_LOCAL="1", HYMT_API_KEYS_PATH=str(folder / "keys.db"),
             HYMT_TRUSTED_PROXIES="127.0.0.1", HYMT_API_ORIGINS=LISTED,
             HYMT_MAX_INPUT_CHARS=str(LIMIT), HYMT_RATE_LIMIT="", HYMT_RATE_LIMIT_CHARS="",
             HYMT_RATE_LIMIT_CALLS="") as (url, _stub):
        yield Lt(url, key)


def post(lt: Lt, path: str, **kwargs: object) -> httpx.Response:
    return httpx.post(lt.root + path, timeout=60, **kwargs)  # type: ignore[arg-type]


FAR = {"X-Forwarded-For": "10.1.2.3"}  # a caller from elsewhere (127.0.0.1 is a trusted proxy)


# --- paths -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "status", "allow"), [
    ("GET", "/translate", 405, "POST"),  # the issue's: 200 and the chat page's HTML before
    ("GET", "/detect", 405, "POST"),
    ("GET", "/translate_file", 405, "POST"),
    ("POST", "/spec", 405, "GET"),
    ("POST", "/health", 405, "GET"),
    ("POST", "/languages", 405, "GET"),
    ("GET", "/suggest", 405, "POST"),
    ("DELETE", "/frontend/settings", 405, "GET"),
    ("GET", "/nowhere", 404, None),
    ("GET", "/translate/more", 404, None),
    ("GET", "", 404, None),
    ("GET", "/", 404, None),
    ("POST", "/v2/translate", 404, None),
])
def test_every_path_under_the_root_answers_json_never_the_page(
        lt: Lt, method: str, path: str, status: int, allow: str | None) -> None:
    """LibreTranslate answers a known path's wrong method 405 and an unknown path 404, never a
    page: its own tests, test_api_spec.py:7-10 (POST /spec), test_api_health.py:8-11 (POST
    /health), test_api_detect_language.py:23-26 (GET /detect); app.py:422-437 gives its errors
    the body ``{"error": description}``, the shape every error here has."""
    got = httpx.request(method, lt.root + path, timeout=30)
    assert got.status_code == status
    assert got.headers["content-type"] == "application/json"
    assert set(got.json()) == {"error"} and got.json()["error"]
    assert got.headers.get("allow") == allow


def test_clients_reach_it_with_and_without_the_slash(lt: Lt) -> None:
    """How the real clients join a base URL: libretranslatepy adds a trailing slash when the
    URL has none (libretranslatepy/api.py 2.1.4, ``__init__``: ``if self.url[-1] != "/"``) and
    appends ``translate``; deep-translator's LibreTranslator appends ``translate`` to the URL as
    given (deep_translator/libre.py:89-91 at fa67ada: ``self._base_url + translate_endpoint``,
    its fields in the query string), so ``…/libretranslate`` becomes ``…/libretranslatetranslate``.
    A base URL with its slash joined to ``/translate`` gives ``//``. All of them translate."""
    for base in (lt.root, lt.root + "/"):
        client = LibreTranslateAPI(base, api_key=lt.key)
        assert client.translate(FR, "fr", "en") == "EN:" + FR
        assert client.detect(FR)[0]["language"] == "fr"
        assert len(client.languages()) == 38
        deep = LibreTranslator(source="fr", target="en", api_key=lt.key, custom_url=base)
        assert deep.translate(FR) == "EN:" + FR
        assert deep.translate_batch([FR, FR]) == ["EN:" + FR] * 2
    doubled = httpx.post(lt.url + "/libretranslate//translate", timeout=60,
                         data={"q": FR, "source": "fr", "target": "en", "api_key": lt.key})
    assert doubled.json() == TRANSLATED
    refused = LibreTranslateAPI(lt.root, api_key="hymt-not-a-key")
    with pytest.raises(urllib.error.HTTPError) as bad:
        refused.translate(FR, "fr", "en")
    assert bad.value.code == 403


# --- /health, /spec, /suggest -----------------------------------------------------------------


def test_health_spec_and_suggest_answer_as_libretranslate_does(lt: Lt) -> None:
    """``GET /health`` is ``{"status": "ok"}`` (app.py:540-560; test_api_health.py:1-5).
    ``GET /spec`` is a Swagger 2.0 document (app.py:1321-1331: flask-swagger's document of the
    routes, ``info`` with title, version, description and license, ``basePath``) whose paths
    are LibreTranslate's documented ones (the routes of app.py with a YAML docstring), each
    with its method. ``POST /suggest`` with suggestions off is 403 "Suggestions are disabled on
    this server." (app.py:1284-1285), and ``/frontend/settings`` says ``suggestions: false``
    (app.py:1212)."""
    health = httpx.get(lt.root + "/health", timeout=30)
    assert health.status_code == 200 and health.json() == {"status": "ok"}
    spec = httpx.get(lt.root + "/spec", timeout=30).json()
    assert spec["swagger"] == "2.0" and spec["basePath"] == "/libretranslate"
    assert {"title", "version", "description", "license"} <= set(spec["info"])
    assert set(spec["paths"]) == set(PATHS) == {
        "/translate", "/translate_file", "/detect", "/languages", "/frontend/settings",
        "/suggest", "/health"}
    assert {"/" + name for name in LIBRE_ENDPOINTS} == set(PATHS) | {"/spec"}  # every one
    for path, methods in spec["paths"].items():
        other = "GET" if "post" in methods else "POST"
        allowed = httpx.request(other, lt.root + path, timeout=30)  # 405: what the route takes
        assert allowed.headers["allow"] == ", ".join(m.upper() for m in methods), path
        for method in methods.values():
            for answer in method["responses"].values():
                ref = answer["schema"]["$ref"].rsplit("/", 1)[1]
                assert ref in spec["definitions"], (path, ref)
    suggest = post(lt, "/suggest", data={"q": "Hello", "s": "Hola", "source": "en",
                                         "target": "es"})
    assert suggest.status_code == 403
    assert suggest.json() == {"error": "Suggestions are disabled on this server."}
    assert httpx.get(lt.root + "/frontend/settings", timeout=30).json()["suggestions"] is False


# --- where clients and the contract part easily ----------------------------------------------


def test_detect_never_answers_an_empty_list(lt: Lt) -> None:
    """LibreTranslate's detection falls back to English at confidence 0 when it finds nothing
    (language.py:94-97: ``return [{"confidence": 0.0, "language": "en"}]``); its test expects at
    least one entry with both fields for "Hello" (test_api_detect_language.py:4-12) and 400
    with an error for no ``q`` (:15-20)."""
    for text in ("42", "?!", "Hello", "ok", "   "):
        found = post(lt, "/detect", data={"q": text})
        assert found.status_code == 200, (text, found.text)
        assert len(found.json()) >= 1 and {"confidence", "language"} == set(found.json()[0])
    assert post(lt, "/detect", data={"q": "42"}).json() == [{"confidence": 0.0,
                                                              "language": "en"}]
    missing = post(lt, "/detect")
    assert missing.status_code == 400 and "error" in missing.json()


def test_auto_source_names_a_language_never_auto(lt: Lt) -> None:
    """With ``source=auto``, ``detectedLanguage`` is a detection's language, or English at
    confidence 0 when the text has nothing to detect (app.py:792-803, 845-846, 868-869); a batch
    has one entry per text."""
    one = post(lt, "/translate", data={"q": "42", "source": "auto", "target": "de"}).json()
    assert one["detectedLanguage"] == {"confidence": 0.0, "language": "en"}
    batch = post(lt, "/translate", json={"q": ["42", FR], "source": "auto", "target": "en"})
    detected = batch.json()["detectedLanguage"]
    assert [d["language"] for d in detected] == ["en", "fr"] and detected[0]["confidence"] == 0


def test_a_missing_key_is_400_and_a_bad_one_403(lt: Lt) -> None:
    """LibreTranslate refuses a request that needs a key and has none with 400 "Please contact
    the server operator to get an API key" (app.py:380-387), and an unknown key with 403
    "Invalid API key" (app.py:342-347). Here a key is needed from anywhere but 127.0.0.1."""
    fields = {"q": FR, "source": "fr", "target": "en"}
    none = post(lt, "/translate", data=fields, headers=FAR)
    assert none.status_code == 400 and none.json() == {"error": KEY_NEEDED}
    assert post(lt, "/detect", data={"q": FR}, headers=FAR).json() == {"error": KEY_NEEDED}
    bad = post(lt, "/translate", data={**fields, "api_key": "hymt-unknown"}, headers=FAR)
    assert bad.status_code == 403 and bad.json()["error"].startswith("Invalid API key")
    good = post(lt, "/translate", data={**fields, "api_key": lt.key}, headers=FAR)
    assert good.json() == TRANSLATED


def test_a_page_elsewhere_without_a_key_is_never_the_local_caller(lt: Lt) -> None:
    """Our security decision, LibreTranslate's mechanism: with ``--require-api-key-origin``, a
    request without a key whose ``Origin`` does not match is answered 400 "Please contact the
    server operator to get an API key" (app.py:352-356, 380-387). Here a browser page on
    another origin (not this server's, not in HYMT_API_ORIGINS) never spends the keyless local
    allowance of HYMT_API_OPEN_LOCAL, though its request comes from 127.0.0.1; with a key it is
    served like anyone."""
    fields = {"q": FR, "source": "fr", "target": "en"}

    def from_(origin: str | None, **extra: str) -> httpx.Response:
        headers = {"Origin": origin} if origin else {}
        return post(lt, "/translate", data={**fields, **extra}, headers=headers)

    assert from_(None).json() == TRANSLATED  # curl, a script: local
    assert from_(lt.url).status_code == 200  # this server's own page
    assert from_(LISTED).status_code == 200  # HYMT_API_ORIGINS: the operator's tools
    for page in (ELSEWHERE, "null", "http://localhost:1"):  # "null": a sandboxed frame, file://
        refused = from_(page)
        assert refused.status_code == 400 and refused.json() == {"error": KEY_NEEDED}, page
        assert refused.headers["access-control-allow-origin"] == "*"  # the page can read why
    assert from_(ELSEWHERE, api_key=lt.key).json() == TRANSLATED


def test_cors_is_any_origin_without_credentials_for_libretranslate_only(lt: Lt) -> None:
    """LibreTranslate's CORS (app.py:562-573, an ``after_request`` of its own, not flask-cors):
    ``Access-Control-Allow-Origin: *``, headers ``Authorization, Content-Type``, methods ``GET,
    POST``, max age 20 days. Its ``Allow-Credentials: true`` beside ``*`` is ignored by
    browsers (Fetch standard: no credentials with a wildcard), so none is sent here. The chat's
    paths keep their own origin list and DeepL's keep HYMT_API_ORIGINS."""
    def preflight(path: str, origin: str = ELSEWHERE) -> httpx.Response:
        return httpx.options(lt.url + path, timeout=30, headers={
            "Origin": origin, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type"})

    libre = preflight("/libretranslate/translate")
    assert libre.status_code == 200 and libre.headers["access-control-allow-origin"] == "*"
    assert "POST" in libre.headers["access-control-allow-methods"]
    assert libre.headers["access-control-max-age"] == str(20 * 86400)
    assert "access-control-allow-credentials" not in libre.headers
    joined = preflight("/libretranslatetranslate")  # deep-translator's join, the same door
    assert joined.headers["access-control-allow-origin"] == "*"
    answer = httpx.get(lt.root + "/languages", headers={"Origin": ELSEWHERE}, timeout=30)
    assert answer.headers["access-control-allow-origin"] == "*"
    assert preflight("/deepl/v2/translate").status_code == 403  # not listed for DeepL
    assert preflight("/deepl/v2/translate", LISTED).headers[
        "access-control-allow-origin"] == LISTED
    chat = httpx.get(lt.url + "/project/settings", headers={"Origin": ELSEWHERE}, timeout=30)
    assert chat.status_code == 403
    # One CORS layer's headers on the APIs' answers: Vary names Origin once, and nothing
    # speaks of credentials (the chat's own CORS, inside, answers these requests too).
    for answered in (answer, httpx.post(lt.url + "/deepl/v2/translate", timeout=30,
                                        headers={"Origin": LISTED},
                                        data={"text": "Bonjour", "target_lang": "EN"})):
        varied = [v.strip().lower() for h in answered.headers.get_list("vary")
                  for v in h.split(",")]
        assert varied.count("origin") == 1, varied
        assert "access-control-allow-credentials" not in answered.headers


def test_char_limit_and_the_body_limit_agree(lt: Lt) -> None:
    """``charLimit`` (app.py:1208) is what a text may hold; over it LibreTranslate answers 400
    "Invalid request: request (N) exceeds text limit (L)" (app.py:781-787), never 413 (it has
    no body cap). Here a text of charLimit characters is taken at any encoding (emoji,
    form-encoded: 12 bytes each), one more is LibreTranslate's 400, and a body too large for
    any text allowed gets the same 400."""
    settings = httpx.get(lt.root + "/frontend/settings", timeout=30).json()
    assert settings["charLimit"] == LIMIT
    emoji = "😀" * LIMIT
    at_limit = post(lt, "/translate", data={"q": emoji, "source": "en", "target": "fr"})
    assert at_limit.status_code == 200, at_limit.text
    over = post(lt, "/translate", data={"q": "a" * (LIMIT + 1), "source": "en", "target": "fr"})
    assert over.status_code == 400
    assert over.json() == {"error": f"Invalid request: request ({LIMIT + 1}) exceeds text "
                                    f"limit ({LIMIT})"}
    huge = post(lt, "/translate", data={"q": "a" * 200_000, "source": "en", "target": "fr"})
    assert huge.status_code == 400 and "exceeds text limit" in huge.json()["error"]


def test_alternatives_below_zero_are_none_and_a_word_is_refused(lt: Lt) -> None:
    """``num_alternatives = max(0, int(num_alternatives))``; not a number: 400 "Invalid
    request: alternatives parameter is not a number" (app.py:746-749); ``alternatives`` is in
    the answer only when more than 0 were asked (app.py:870-871)."""
    fields = {"q": FR, "source": "fr", "target": "en"}
    negative = post(lt, "/translate", data={**fields, "alternatives": "-1"})
    assert negative.json() == TRANSLATED
    word = post(lt, "/translate", data={**fields, "alternatives": "some"})
    assert word.status_code == 400
    assert word.json() == {"error": "Invalid request: alternatives parameter is not a number"}


def test_a_repeated_form_q_is_read_once_and_a_json_list_is_a_batch(lt: Lt) -> None:
    """A form is read with ``request.values.get("q")`` (app.py:733): Werkzeug's first value,
    one text, not a batch; only a JSON list is one (app.py:762, ``isinstance(q, list)``;
    test_api_translate.py:18-32)."""
    form = post(lt, "/translate", data={"q": [FR, "Merci."], "source": "fr", "target": "en"})
    assert form.json() == TRANSLATED
    batch = post(lt, "/translate", json={"q": [FR, "Merci."], "source": "fr", "target": "en"})
    assert batch.json() == {"translatedText": ["EN:" + FR, "EN:Merci."],
                            "hymt_flags": [[], []]}
    one = post(lt, "/translate", json={"q": [FR], "source": "fr", "target": "en"})
    assert one.json() == {"translatedText": ["EN:" + FR], "hymt_flags": [[]]}


def test_libretranslates_own_api_tests_over_http(lt: Lt) -> None:
    """LibreTranslate's own API tests (libretranslate/tests/test_api/), each assertion asked of
    this server over HTTP: translate a form (test_api_translate.py:4-15), a batch (:18-32), an
    unsupported target 400 "zz is not supported" (:35-47), a missing ``q`` (:50-61; both word
    for word); the languages, the
    frontend settings and the spec 200 (test_api_get_languages.py, test_api_frontend_settings.py
    :1-4, test_api_spec.py:1-4)."""
    form = post(lt, "/translate", data={"q": "Hello", "source": "en", "target": "es",
                                        "format": "text"})
    assert form.status_code == 200 and "translatedText" in form.json()
    batch = post(lt, "/translate", json={"q": ["Hello", "World"], "source": "en",
                                         "target": "es", "format": "text"})
    assert batch.status_code == 200 and len(batch.json()["translatedText"]) == 2
    unsupported = post(lt, "/translate", data={"q": "Hello", "source": "en", "target": "zz",
                                               "format": "text"})
    assert unsupported.status_code == 400
    assert unsupported.json() == {"error": "zz is not supported"}
    missing = post(lt, "/translate", data={"source": "en", "target": "es", "format": "text"})
    assert missing.status_code == 400
    assert missing.json() == {"error": "Invalid request: missing q parameter"}
    for path in ("/languages", "/frontend/settings", "/spec"):
        assert httpx.get(lt.root + path, timeout=30).status_code == 200, path


def test_translate_file_takes_a_pdf_and_gives_a_pdf_back(lt: Lt) -> None:
    """``/translate_file`` (libretranslate/app.py ``translate_file``: multipart ``file``,
    ``source``, ``target``; the answer's ``translatedFileUrl`` downloads the file) with a text
    PDF: the same two pages come back, each block the stand-in's (``EN:``) answer."""
    source = pdf_files.two_pages()
    answer = post(lt, "/translate_file", data={"source": "de", "target": "en"},
                  files={"file": ("vertrag.pdf", source, "application/pdf")})
    assert answer.status_code == 200, answer.text
    got = httpx.get(answer.json()["translatedFileUrl"], timeout=30)
    assert got.status_code == 200 and got.headers["content-type"] == "application/pdf"
    assert 'filename="vertrag.en.pdf"' in got.headers["content-disposition"]
    document = pdfium.PdfDocument(got.content)
    pages = [page.get_textpage().get_text_range() for page in document]
    document.close()
    assert len(pages) == 2 and all("EN:" in page for page in pages)
    assert "EN:Rental agreement" in pages[0]


# --- a browser page on another origin -------------------------------------------------------


class _Page(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!doctype html><title>another origin</title><p>tools"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


FETCHES = """async ([root, key]) => {
  const call = async (path, body) => {
    try {
      const r = await fetch(root + path, {method: "POST", body: JSON.stringify(body),
                                          headers: {"Content-Type": "application/json"}});
      return [r.status, await r.json()];
    } catch (e) { return ["refused", String(e)]; }
  };
  const fields = {q: "Bonjour, ma commande n'est toujours pas arrivée.", source: "auto",
                  target: "en"};
  return {keyed: await call("/libretranslate/translate", {...fields, api_key: key}),
          keyless: await call("/libretranslate/translate", fields),
          chat: await call("/project/settings", {})};
}"""


@pytest.mark.slow
def test_a_browser_page_on_another_origin_translates_with_fetch(lt: Lt, browser) -> None:
    """A real chromium page served from another origin calls ``fetch()`` on
    ``/libretranslate/translate`` (a JSON body: a CORS preflight first), as web tools do with
    LibreTranslate, whose CORS lets any origin read its answers (app.py:562-573): with a key it
    translates; without one it reads LibreTranslate's 400 (not the local caller's allowance:
    app.py:352-356, 380-387); the chat's own paths stay closed to it."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    page = new_page(browser)
    try:
        page.goto(f"http://localhost:{server.server_address[1]}/")
        got = page.evaluate(FETCHES, [lt.url, lt.key])
    finally:
        page.close()
        server.shutdown()
        server.server_close()
    assert got["keyed"][0] == 200
    assert got["keyed"][1]["translatedText"] == "EN:" + FR
    assert got["keyed"][1]["detectedLanguage"]["language"] == "fr"
    assert got["keyless"] == [400, {"error": KEY_NEEDED}]
    assert got["chat"][0] == "refused"  # no CORS for it: the page cannot read the chat's paths
