"""The API inside a real Chainlit server (catch-all page route and all), on the real demo
model: a key made with the real command line, the official deepl client through it."""

from __future__ import annotations

import subprocess
import sys

import deepl
import httpx
import pytest

from hymt_chat.lang.detect import detect_language
from tests.conftest import ROOT, free_port
from tests.support.chainlit_app import app_env, running_app

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("patient_deepl")]

APP = ROOT / "app.py"


def test_the_api_answers_inside_chainlit_with_a_key_from_the_cli(demo_server, tmp_path) -> None:
    env = app_env(demo_server.env(), HYMT_CACHE_DIR=str(tmp_path / "cache"),
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
        result = translator.translate_text("Bonjour, ma commande n'est toujours pas arrivée.",
                                           target_lang="EN-US")
        assert result.detected_source_lang == "FR" and detect_language(result.text) == "en"
    assert "API (/libretranslate, /deepl): 1 key(s)" in log.read_text()
