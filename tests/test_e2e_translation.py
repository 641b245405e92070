"""The translator and the translate CLI end to end, on the real vLLM server with the demo model."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hymt_chat.client import ModelClient
from hymt_chat.detect import detect_language
from hymt_chat.policy import Policy
from hymt_chat.translator import Translator

pytestmark = pytest.mark.slow

FRENCH = "Bonjour, je voudrais réserver une table pour deux personnes ce soir, s'il vous plaît."
CHINESE = "您好，我的订单号是JD123456789，想查询物流状态。"


def _translator(server, **overrides) -> Translator:
    settings = server.settings(**overrides)
    return Translator(settings, ModelClient(settings), Policy(deadline=settings.deadline))


async def test_french_to_english_comes_back_in_english(demo_server):
    result = await _translator(demo_server).translate(FRENCH, "en")
    assert result.source == "fr" and result.detected
    assert detect_language(result.text) == "en", result.text
    assert result.segments == 1 and not result.same_language


async def test_chinese_to_english_keeps_the_order_number(demo_server):
    result = await _translator(demo_server).translate(CHINESE, "en", "zh")
    assert detect_language(result.text) == "en", result.text
    assert "JD123456789" in result.text


async def test_already_in_target_language_does_not_call_the_model(demo_server):
    translator = _translator(demo_server, base_url="http://127.0.0.1:9/v1")  # unreachable
    result = await translator.translate("This sentence is already written in plain English.", "en")
    assert result.same_language and result.segments == 0
    assert result.text == "This sentence is already written in plain English."


def _long_english_text() -> str:
    sentences = [
        "The delivery arrived two days late.", "Please check the tracking number again.",
        "Our support team answers within one hour.", "The invoice was sent to your e-mail.",
        "We apologise for the inconvenience.", "Your refund has been approved today.",
        "The new model ships next month.", "Thank you for your patience.",
    ]
    paragraphs = []
    i = 0
    while sum(len(p) + 2 for p in paragraphs) < 10_000:
        paragraphs.append(" ".join(sentences[(i + k) % len(sentences)] for k in range(6)))
        i += 1
    return "\n\n".join(paragraphs)


async def test_ten_thousand_characters_come_back_whole(demo_server):
    text = _long_english_text()
    assert len(text) >= 10_000
    paragraphs = text.split("\n\n")
    progress: list[tuple[int, int]] = []
    result = await _translator(demo_server, deadline=1800).translate(
        text, "fr", "en", on_progress=lambda done, total: progress.append((done, total))
    )
    out_paragraphs = result.text.split("\n\n")
    assert len(out_paragraphs) == len(paragraphs)  # paragraph structure kept
    assert result.segments >= len(paragraphs)  # every paragraph was translated
    assert all(p.strip() for p in out_paragraphs)  # none lost
    assert progress[-1] == (result.segments, result.segments)
    assert sum(detect_language(p) == "fr" for p in out_paragraphs) >= 0.8 * len(paragraphs)


def _cli(*args: str, env: dict[str, str], stdin: bytes | None = None):
    return subprocess.run([sys.executable, "-m", "hymt_chat.cli", *args], env=env, input=stdin,
                          capture_output=True, timeout=300)


def test_cli_translates_argument_and_stdin(demo_server):
    env = demo_server.env()
    out = _cli("translate", "--to", "en", FRENCH, env=env)
    assert out.returncode == 0, out.stderr
    text = out.stdout.decode()
    assert detect_language(text) == "en" and text.count("\n") == 1  # only the translation

    out = _cli("translate", "--to", "english", "--from", "zh", "-", env=env,
               stdin=CHINESE.encode())
    assert out.returncode == 0, out.stderr
    assert detect_language(out.stdout.decode()) == "en"


def test_cli_base_url_flag_reaches_the_server(demo_server):
    env = {**demo_server.env(), "HYMT_BASE_URL": "http://127.0.0.1:9/v1"}
    out = _cli("translate", "--to", "en", "--base-url", demo_server.endpoint.base_url, FRENCH,
               env=env)
    assert out.returncode == 0, out.stderr
