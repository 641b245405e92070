"""The API inside a real Chainlit server (catch-all page route and all): a key made with the
real command line, the official deepl client through it. The engine is the engine double
(tests/support/engine_double.py) answering from a phrasebook; the real vLLM's round trip is
tested in tests/test_e2e_translation.py."""

from __future__ import annotations

import subprocess
import sys

import deepl
import httpx
import pytest

from tests.conftest import ROOT
from tests.support.chainlit_app import app_env, running_app
from tests.support.engine_double import EngineDouble
from tests.support.phrasebook import phrasebook, source_text
from tests.support.ports import free_port

pytestmark = pytest.mark.usefixtures("patient_deepl")

APP = ROOT / "app.py"
FR = "Bonjour, ma commande n'est toujours pas arrivée."
FR_EN = "Hello, my order has still not arrived."


def test_the_api_answers_inside_chainlit_with_a_key_from_the_cli(engine: EngineDouble,
                                                                  tmp_path) -> None:
    engine.answer = phrasebook({FR: {"en": FR_EN}})
    env = app_env(engine.env(), HYMT_CACHE_DIR=str(tmp_path / "cache"),
                  HYMT_API_KEYS_PATH=str(tmp_path / "keys.db"), PYTHONPATH=str(ROOT))
    made = subprocess.run([sys.executable, "-m", "hymt_chat.cli.main", "api-key", "create",
                           "chat-app", "--per-minute", "10"], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=True)
    key = made.stdout.strip()
    assert made.stdout == key + "\n" and key.startswith("hymt-")
    log = tmp_path / "app.log"
    with running_app(env, free_port(), log, app=APP) as url:
        page = httpx.get(url + "/", timeout=30)
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        langs = httpx.get(url + "/libretranslate/languages", timeout=30)
        assert langs.headers["content-type"] == "application/json" and len(langs.json()) == 38
        translator = deepl.Translator(key, server_url=url + "/deepl/", send_platform_info=False)
        result = translator.translate_text(FR, target_lang="EN-US")
        assert result.detected_source_lang == "FR" and result.text == FR_EN
    assert [source_text(p) for p in engine.prompts] == [FR]  # through the app's own client
    assert "API (/libretranslate, /deepl): 1 key(s)" in log.read_text()
