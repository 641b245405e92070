"""Features use the family's own instructions: glossary, tone, context, sampling, Best quality.

The agent tests script the model's answers (a client that records prompts, as in
test_agent_turns.py); the sampling test sends real HTTP to a stand-in server that records each
request body (vLLM does not echo sampling back; tests/test_e2e_families.py reads it in vLLM's
own request log).
"""

from __future__ import annotations

import re

import pytest

from hymt_chat.engine.chimera import best_note, chimera_available, translate_best
from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.families import forget_served_model
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.agent.turns import (
    handle_agent_message,
    parse_agent_command,
    run_agent_command,
    turn_meta,
)
from hymt_chat.modes.chat import CommandError
from hymt_chat.settings import Settings
from tests.support.stub_model import StubModel


@pytest.fixture(autouse=True)
def _no_served_model():
    forget_served_model()
    yield
    forget_served_model()


class Script:
    def __init__(self, answer) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    async def complete(self, prompt, *, max_tokens, n=1, source="", **_request):
        self.prompts.append(prompt)
        return [self.answer(prompt, source)] * n


def _translator(answer, family: str, **settings) -> tuple[Translator, Script]:
    client = Script(answer)
    s = Settings(base_url="http://127.0.0.1:9/v1", retries=False, model_family=family,
                 **settings)
    return Translator(s, client, Policy(retries=False)), client  # type: ignore[arg-type]


# --- glossary ---------------------------------------------------------------------------------


async def test_hy_mt2_glossary_goes_through_its_terminology_instruction():
    translator, client = _translator(lambda p, s: "What is my order ID?", "hy-mt2")
    conv = Conversation("en", "zh")
    run_agent_command(conv, parse_agent_command("/glossary add 订单号 = order ID"))
    result = await handle_agent_message(conv, "我的订单号是多少？", translator)
    assert client.prompts == ["参考下面的翻译：\n订单号 翻译成 order ID\n将以下文本翻译为英语，"
                              "注意只需要输出翻译后的结果，不要额外解释：\n\n我的订单号是多少？"]
    assert result.template == "terminology" and result.translation == "What is my order ID?"
    assert result.warnings == ()


async def test_a_term_the_instruction_did_not_carry_is_sent_again_masked():
    def model(prompt: str, source: str) -> str:
        if prompt.startswith("参考下面的翻译"):
            return "What is my order number?"  # ignored the glossary
        return "What is my " + " ".join(re.findall(r"\[\d+\]", source)) + "?"

    translator, client = _translator(model, "hy-mt1.5")
    conv = Conversation("en", "zh")
    run_agent_command(conv, parse_agent_command("/glossary add 订单号 = order ID"))
    result = await handle_agent_message(conv, "我的订单号是多少？", translator)
    assert len(client.prompts) == 2 and "订单号" not in client.prompts[1]
    assert result.translation == "What is my order ID?"
    assert result.template == "terminology, then masking" and result.model_calls == 2
    assert "terminology, then masking template" in turn_meta(result)


async def test_hunyuan_mt_keeps_masking_by_default():
    translator, client = _translator(lambda p, s: "What is my [1]?", "hunyuan-mt")
    conv = Conversation("en", "zh")
    run_agent_command(conv, parse_agent_command("/glossary add 订单号 = order ID"))
    result = await handle_agent_message(conv, "我的订单号是多少？", translator)
    assert client.prompts[0].startswith("把下面的文本翻译成英语") and "[1]" in client.prompts[0]
    assert result.translation == "What is my order ID?" and result.template == "official"


# --- tone -------------------------------------------------------------------------------------


async def test_tone_goes_through_the_style_instruction_for_the_agents_replies_only():
    translator, client = _translator(lambda p, s: "Estimado cliente, lo revisaré.", "hy-mt2")
    conv = Conversation("en", "es")
    reply = run_agent_command(conv, parse_agent_command("/tone formal"), translator.family)
    assert conv.tone == "formal" and "formal" in reply.text
    result = await handle_agent_message(conv, "I will look into it.", translator)
    assert client.prompts[-1] == ("Please translate the following text into Spanish. Note that "
                                  "the translation style must strictly conform to [formal]:\n\n"
                                  "I will look into it.")
    assert result.template == "style"
    await handle_agent_message(conv, "Gracias por su ayuda con el pedido.", translator)
    assert client.prompts[-1].startswith("Translate the following text into English.")


async def test_tone_into_chinese_uses_the_chinese_style_words():
    translator, client = _translator(lambda p, s: "好的，我马上查看。", "hy-mt2")
    conv = Conversation("en", "zh", tone="friendly")
    await handle_agent_message(conv, "Sure, I will check right away.", translator)
    assert client.prompts[-1] == ("请将以下文本翻译为中文。\n注意翻译的风格要严格符合【亲切友好】\n\n"
                                  "Sure, I will check right away.")


async def test_a_family_without_style_says_so_and_translates_plainly():
    translator, client = _translator(lambda p, s: "Je vais regarder.", "hy-mt1.5")
    conv = Conversation("en", "fr")
    reply = run_agent_command(conv, parse_agent_command("/tone friendly"), translator.family)
    assert "HY-MT1.5 has no style instruction" in reply.text
    result = await handle_agent_message(conv, "I will look.", translator)
    assert result.template == "official"
    assert client.prompts[-1].startswith("Translate the following segment into French")


async def test_a_tone_the_family_cannot_apply_does_not_block_the_context():
    translator, client = _translator(lambda p, s: "Je vais regarder.", "hy-mt1.5")
    conv = Conversation("en", "fr", tone="formal")
    await handle_agent_message(conv, "Bonjour, mon colis est arrivé cassé hier soir.",
                               _translator(lambda p, s: "Hello, my parcel arrived broken.",
                                           "hy-mt1.5")[0])
    result = await handle_agent_message(conv, "I will look.", translator, use_context=True)
    assert result.template == "context" and client.prompts[-1].startswith(
        "Customer: Hello, my parcel arrived broken.\n参考上面的信息，把下面的文本翻译成法语")


def test_tone_is_kept_in_the_conversation_state_and_checked():
    conv = Conversation("en", "es")
    run_agent_command(conv, parse_agent_command("/tone Friendly"))
    again = Conversation.from_dict(conv.to_dict())
    assert again.tone == "friendly" and conv.to_dict()["tone"] == "friendly"
    assert Conversation.from_dict({**conv.to_dict(), "tone": None}).tone == "neutral"
    assert "Tone: friendly" in run_agent_command(conv, parse_agent_command("/tone")).text
    with pytest.raises(CommandError, match="use /tone neutral | formal | friendly"):
        run_agent_command(conv, parse_agent_command("/tone sarcastic"))
    assert conv.tone == "friendly"  # a bad name changes nothing


# --- context ----------------------------------------------------------------------------------


async def test_hy_mt2_context_goes_through_its_background_instruction():
    translator, client = _translator(lambda p, s: "Lo revisaré ahora.", "hy-mt2")
    conv = Conversation("en")
    await handle_agent_message(conv, "Hola, el paquete ya llegó pero la caja está rota.",
                               _translator(lambda p, s: "Hello, the box is broken.", "hy-mt2")[0])
    result = await handle_agent_message(conv, "I will look into it right now.", translator,
                                        use_context=True)
    assert client.prompts[0] == (
        "[Background Information]\nCustomer: Hello, the box is broken.\n\nPlease translate the "
        "following text into Spanish, taking the provided background information into "
        "consideration.\n\n[Source Text]\nI will look into it right now.")
    assert result.template == "context"


# --- sampling sent to the server ----------------------------------------------------------------


@pytest.mark.parametrize(("family", "model", "expected"), [
    ("hunyuan-mt", "stub", {"temperature": 0.7, "top_p": 0.6, "top_k": 20,
                            "repetition_penalty": 1.05}),
    ("hy-mt1.5", "stub", {"temperature": 0.7, "top_p": 0.6, "top_k": 20,
                          "repetition_penalty": 1.05}),
    ("hy-mt2", "tencent/Hy-MT2-7B", {"temperature": 0.7, "top_p": 0.6, "top_k": 20,
                                     "repetition_penalty": 1.05}),
    ("auto", "tencent/Hy-MT2-30B-A3B", {"temperature": 0.7, "top_p": 1.0, "top_k": -1,
                                        "repetition_penalty": 1.0}),
])
async def test_the_sampling_sent_is_the_familys_for_the_model_size(family, model, expected):
    with StubModel() as stub:
        settings = Settings(base_url=stub.base_url, model=model, model_family=family,
                            retries=False)
        client = ModelClient(settings)
        translator = Translator(settings, client, Policy(retries=False))
        await translator.translate("Hello there, friend.", "fr", "en")
        await client.aclose()
    body = stub.requests[-1]
    assert {k: body[k] for k in expected} == expected
    assert body["messages"] == [{"role": "user", "content": stub.prompts[-1]}]
    if "Hy-MT2" in model:
        assert stub.prompts[-1].startswith("Translate the following text into French.")


async def test_a_setting_overrides_one_sampling_value_and_the_cap_applies():
    with StubModel() as stub:
        settings = Settings(base_url=stub.base_url, model="tencent/Hy-MT2-30B-A3B",
                            temperature=0.1, retries=False)
        client = ModelClient(settings)
        await client.complete("x", max_tokens=9000)
        await client.aclose()
    body = stub.requests[-1]
    assert (body["temperature"], body["top_p"], body["top_k"]) == (0.1, 1.0, -1)
    assert body["max_tokens"] == 4096  # Hy-MT2's published cap


async def test_auto_reads_the_served_models_root_from_v1_models():
    with StubModel() as stub:
        settings = Settings(base_url=stub.base_url, retries=False)  # no HYMT_MODEL: listed
        client = ModelClient(settings)
        assert await client.model_name() == "stub"
        await client.aclose()
    # The stub serves "stub-model": no family, so the default stays.
    assert Translator(settings, client).family.name == "hunyuan-mt"


# --- Best quality -----------------------------------------------------------------------------


async def test_best_quality_with_hy_mt2_keeps_its_own_candidates_consensus():
    answers = iter(["Bonjour tout le monde.", "Salut tout le monde.", "Bonjour tout le monde."])

    class Candidates(Script):
        async def complete(self, prompt, *, max_tokens, n=1, source="", **_request):
            self.prompts.append(prompt)
            return [next(answers) for _ in range(n)]

    client = Candidates(None)
    settings = Settings(base_url="http://127.0.0.1:9/v1", retries=False, model_family="hy-mt2",
                        chimera_candidates=3)
    translator = Translator(settings, client, Policy(retries=False))  # type: ignore[arg-type]
    assert chimera_available(settings)  # no fusion model needed
    result = await translate_best(translator, "Hello everyone.", "fr", "en",
                                  fusion=client, fusion_policy=translator.policy)  # type: ignore[arg-type]
    assert result.text == "Bonjour tout le monde." and result.fusion_calls == 0
    assert client.prompts[0].startswith("Translate the following text into French.")
    assert best_note(result) == ("Best quality: the consensus of 2 Hy-MT2 candidate "
                                 "translations (Hunyuan-MT-Chimera fuses Hunyuan-MT-7B's only).")
    assert not chimera_available(Settings(model_family="hunyuan-mt"))
