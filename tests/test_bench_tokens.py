"""The benchmark-only setting that gives the app's model calls raw vLLM's work: a fixed number
of tokens each (``max_tokens`` with vLLM's ``ignore_eos``), through the app's real path
(Translator -> policy -> client), so that ``benchmarks/gpu.py`` compares like with like."""

from __future__ import annotations

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.settings import Settings
from tests.support.stub_model import StubModel


async def _sent(**overrides: object) -> dict[str, object]:
    """The body of the one call a translation of a short French line made."""
    with StubModel(answer=lambda prompt: "Good evening, everyone.") as stub:
        settings = Settings(base_url=stub.base_url, api_key="k", model="stub", checks=False,
                            **overrides)
        client = ModelClient(settings)
        result = await Translator(settings, client, Policy()).translate("Bonsoir à tous.", "en")
        await client.aclose()
    assert result.text == "Good evening, everyone."
    (body,) = stub.requests
    return body


async def test_every_call_decodes_the_fixed_tokens_when_a_benchmark_asks():
    body = await _sent(bench_tokens=300)
    assert body["max_tokens"] == 300 and body["ignore_eos"] is True


async def test_no_call_ignores_the_end_of_its_answer_otherwise():
    body = await _sent()
    assert "ignore_eos" not in body
    assert isinstance(body["max_tokens"], int) and body["max_tokens"] < 300  # sized from the text
