"""The translation memory through both API dialects (a real HTTP server over the real
translator; the model is the stand-in of tests/support/stub_model.py): a repeated text is
answered without a model call in either dialect, said in ``X-Hymt-Memory``; the bodies are
unchanged (the official clients parse them); ``X-Hymt-Memory: off`` keeps a request out of it;
LibreTranslate's alternatives are the model's own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import deepl
import httpx
import pytest

from hymt_chat.settings import Settings
from tests.support.api_server import ApiApp, api_app
from tests.support.ports import free_port
from tests.support.stub_model import StubModel, echo_source

TEXT = "Thank you for waiting, your order is on its way."
ANSWER = "Gracias por esperar, su pedido está en camino."


@pytest.fixture
def stub() -> Iterator[StubModel]:
    with StubModel(lambda p: ANSWER if echo_source(p).strip() == TEXT else "Otra cosa.") as m:
        yield m


@pytest.fixture
def api(stub: StubModel, tmp_path: Path) -> Iterator[tuple[ApiApp, str]]:
    settings = Settings(base_url=stub.base_url, api_key="k", model="stub", cache_dir=tmp_path)
    with api_app(settings, tmp_path / "keys.db", free_port(), memory=True) as app:
        yield app, app.store.create("weblate", per_minute=100)


def _libre(app: ApiApp, key: str, **extra: object) -> httpx.Response:
    headers = extra.pop("headers", {})
    return httpx.post(f"{app.url}/libretranslate/translate", timeout=30, headers=headers,
                      json={"q": TEXT, "source": "en", "target": "es", "api_key": key, **extra})


def test_both_dialects_answer_a_repeat_from_the_memory_and_say_so(api, stub) -> None:
    app, key = api
    first = _libre(app, key)
    assert first.status_code == 200
    assert first.json() == {"translatedText": ANSWER, "hymt_flags": []}  # no finding: []
    assert (first.headers["X-Hymt-Memory"], first.headers["X-Hymt-Memory-Segments"]) == (
        "miss", "0/1")
    again = _libre(app, key)
    assert again.json() == first.json()  # the body as LibreTranslate's clients parse it
    assert (again.headers["X-Hymt-Memory"], again.headers["X-Hymt-Memory-Segments"]) == (
        "hit", "1/1")
    deepl_answer = httpx.post(f"{app.url}/deepl/v2/translate", timeout=30,
                              headers={"Authorization": f"DeepL-Auth-Key {key}"},
                              json={"text": [TEXT], "source_lang": "EN", "target_lang": "ES"})
    assert deepl_answer.headers["X-Hymt-Memory"] == "hit"
    assert deepl_answer.json()["translations"][0]["text"] == ANSWER
    client = deepl.Translator(key, server_url=f"{app.url}/deepl/")  # the official client
    assert client.translate_text(TEXT, source_lang="EN", target_lang="ES").text == ANSWER
    assert len(stub.prompts) == 1


def test_a_request_can_keep_out_of_the_memory(api, stub) -> None:
    app, key = api
    _libre(app, key)
    off = _libre(app, key, headers={"X-Hymt-Memory": "off"})
    assert off.headers["X-Hymt-Memory"] == "off" and len(stub.prompts) == 2
    other = httpx.post(f"{app.url}/libretranslate/translate", timeout=30,
                       headers={"X-Hymt-Memory": "off"},
                       json={"q": "Something else entirely, please.", "source": "en",
                             "target": "es", "api_key": key})
    assert other.status_code == 200
    again = httpx.post(f"{app.url}/libretranslate/translate", timeout=30,
                       json={"q": "Something else entirely, please.", "source": "en",
                             "target": "es", "api_key": key})
    assert again.headers["X-Hymt-Memory"] == "miss"  # the request that was off kept nothing


def test_alternatives_are_asked_of_the_model(api, stub) -> None:
    app, key = api
    _libre(app, key)
    with_alternatives = _libre(app, key, alternatives=2)
    assert with_alternatives.status_code == 200, with_alternatives.text
    assert with_alternatives.json()["translatedText"] == ANSWER
    assert len(stub.prompts) == 3  # the first from the memory, the two alternatives asked
    assert with_alternatives.headers["X-Hymt-Memory-Segments"] == "1/1"


def test_a_deployment_without_the_memory_says_off(stub, tmp_path: Path) -> None:
    settings = Settings(base_url=stub.base_url, api_key="k", model="stub", cache_dir=tmp_path)
    with api_app(settings, tmp_path / "keys.db", free_port(), memory=False) as app:
        key = app.store.create("weblate", per_minute=100)
        for _ in range(2):
            assert _libre(app, key).headers["X-Hymt-Memory"] == "off"
    assert len(stub.prompts) == 2
