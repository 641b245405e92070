"""The Support-agent orchestrator with a scripted model: templates, checks, transcript, commands."""

from __future__ import annotations

import re

import pytest

from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.errors import CommandError, EmptyTextError, ModelUnavailableError
from hymt_chat.modes.agent.conversation import Conversation, CustomerLanguageUnknownError
from hymt_chat.modes.agent.glossary import GlossaryError
from hymt_chat.modes.agent.turns import (
    AgentOptions,
    handle_agent_message,
    is_universal,
    parse_agent_command,
    run_agent_command,
    turn_markdown,
)
from hymt_chat.settings import Settings

SPANISH = "Hola, el paquete JD123456789 ya llegó pero la caja está rota."


class Script:
    """A model client that answers from a function of the prompt and records every prompt."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    async def complete(self, prompt, *, max_tokens, n=1, temperature=None, top_p=None,
                       model=None, source="", **_request):
        self.prompts.append(prompt)
        result = self.answer(prompt, source)
        if isinstance(result, Exception):
            raise result
        return [result]


def _translator(answer) -> tuple[Translator, Script]:
    client = Script(answer)
    settings = Settings(base_url="http://127.0.0.1:9/v1", retries=False)
    return Translator(settings, client, Policy(retries=False)), client  # type: ignore[arg-type]


def _echo_english(prompt: str, source: str) -> str:
    """Stands for a translation into English that keeps the placeholders."""
    tokens = " ".join(re.findall(r"\[\d+\]", source))
    return f"Hello, the parcel {tokens} arrived but the box is broken."


async def test_customer_message_is_masked_translated_restored_and_kept():
    translator, client = _translator(_echo_english)
    conv = Conversation("en")
    result = await handle_agent_message(conv, SPANISH, translator)
    assert "JD123456789" not in client.prompts[0] and "[1]" in client.prompts[0]
    assert client.prompts[0].startswith("Translate the following segment into English")
    assert result.translation == "Hello, the parcel [1] arrived but the box is broken.".replace(
        "[1]", "JD123456789")
    assert result.route.direction == "customer->agent" and result.warnings == ()
    assert conv.transcript == [result.turn]
    assert result.turn.who == "customer" and result.turn.source == "es"


async def test_a_dropped_span_is_reported_on_the_turn():
    translator, _ = _translator(lambda p, s: "Hello, the parcel arrived but the box is broken.")
    conv = Conversation("en")
    result = await handle_agent_message(conv, SPANISH, translator)
    assert any("JD123456789" in w for w in result.warnings)
    assert "JD123456789" in turn_markdown(result)


async def test_a_lost_number_is_reported():
    translator, _ = _translator(lambda p, s: "Your refund arrives in days.")
    conv = Conversation("en", "es")
    result = await handle_agent_message(conv, "Your refund of 45 euros arrives in 3 days.",
                                        translator)
    # The translator's value checks name each lost value (the mode's own "Numbers missing"
    # line would say the same again, so it is left out).
    assert "The amount 45 euros is missing from this translation." in result.warnings
    assert "The duration 3 days is missing from this translation." in result.warnings
    assert not any("Numbers missing" in w for w in result.warnings)


async def test_glossary_terms_are_masked_with_their_replacement_by_default():
    translator, client = _translator(lambda p, s: "My [1] is [2]".replace("[1]", "[1]"))
    conv = Conversation("en", "zh")
    run_agent_command(conv, parse_agent_command("/glossary add 订单号 = order ID"))
    result = await handle_agent_message(conv, "我的订单号是JD123456789", translator)
    assert "订单号" not in client.prompts[0]
    assert result.translation == "My order ID is JD123456789"
    assert result.template == "official"


async def test_glossary_template_when_the_setting_asks_for_it():
    translator, client = _translator(lambda p, s: "My order number is [1]")
    conv = Conversation("en", "zh")
    run_agent_command(conv, parse_agent_command("/glossary add 订单号 = order ID"))
    options = AgentOptions(glossary_template=True)
    result = await handle_agent_message(conv, "我的订单号是JD123456789", translator, options)
    assert client.prompts[0].startswith("参考下面的翻译：\n订单号 翻译成 order ID")
    assert result.template == "terminology"
    assert any("does not use it" in w for w in result.warnings)


async def test_context_template_carries_the_last_turns():
    translator, client = _translator(lambda p, s: "Lo revisaré ahora.")
    conv = Conversation("en")
    await handle_agent_message(conv, "Hola, el paquete ya llegó pero la caja está rota.",
                               _translator(lambda p, s: "Hello, the box is broken.")[0])
    result = await handle_agent_message(conv, "I will look into it right now.", translator,
                                        use_context=True)
    # The context is given in the language being translated from (English here).
    assert client.prompts[0].startswith("Customer: Hello, the box is broken.\n")
    assert "参考上面的信息，把下面的文本翻译成西班牙语" in client.prompts[0]
    assert result.template == "context"


async def test_back_translation_of_the_agents_reply_is_scored():
    def model(prompt: str, source: str) -> str:
        if "into Spanish" in prompt:
            return "Su reembolso de 45 euros llega mañana."
        return "Your refund of 54 euros arrives tomorrow."

    translator, client = _translator(model)
    conv = Conversation("en", "es")
    result = await handle_agent_message(conv, "Your refund of 45 euros arrives tomorrow.",
                                        translator, back_translate=True)
    # Three prompts: the back-translation's "54 euros" fails the amount check against its
    # source ("45 euros") and is asked for once more (the checks' repair), still wrong.
    assert len(client.prompts) == 3 and result.model_calls == 2
    assert client.prompts[1] == client.prompts[2]
    assert result.turn.back_translation == "Your refund of 54 euros arrives tomorrow."
    assert result.back is not None and result.back.flagged
    assert any("Numbers differ" in w for w in result.warnings)
    assert "Back\\-translation into English" in turn_markdown(result)


async def test_a_customers_message_is_checked_by_its_back_translation_too():
    """The agent relies on the customer's message as much as the customer on the reply: it
    is translated back into the customer's language and judged; the agent's page does not
    show that back-translation (the customer's language), only what the verdict found."""
    translator, client = _translator(_echo_english)
    conv = Conversation("en")
    result = await handle_agent_message(conv, SPANISH, translator, back_translate=True)
    assert "into English" in client.prompts[0] and "into Spanish" in client.prompts[-1]
    assert result.back is not None and result.turn.back_translation is not None
    assert "Back\\-translation" not in turn_markdown(result)


async def test_only_spans_are_not_sent_to_the_model():
    translator, client = _translator(_echo_english)
    conv = Conversation("en", "es")
    result = await handle_agent_message(conv, "JD123456789", translator, back_translate=True)
    assert client.prompts == [] and result.translation == "JD123456789"
    assert result.template == "none"


@pytest.mark.parametrize("text", ["ok", "OK!", "👍", "?!", "Okay."])
async def test_universal_messages_are_passed_through(text):
    translator, client = _translator(lambda p, s: "¡Claro! ¿Cómo puedo ayudarte hoy?")
    conv = Conversation("en", "es")
    result = await handle_agent_message(conv, text, translator)
    assert client.prompts == [] and result.translation == text.strip()
    assert result.route.direction == "agent->customer" and conv.transcript[-1] is result.turn


async def test_errors_leave_the_transcript_unchanged():
    translator, _ = _translator(lambda p, s: ModelUnavailableError("down"))
    conv = Conversation("en", "es")
    with pytest.raises(ModelUnavailableError):
        await handle_agent_message(conv, "Let me check your order right away.", translator)
    with pytest.raises(EmptyTextError):
        await handle_agent_message(conv, " \u200b ", translator)
    with pytest.raises(CustomerLanguageUnknownError):
        await handle_agent_message(Conversation("en"), "Let me check it.", translator)
    assert conv.transcript == []


def test_commands():
    conv = Conversation("en")
    assert parse_agent_command("Hello there") is None
    assert parse_agent_command("/usr/bin is a folder") is None
    reply = run_agent_command(conv, parse_agent_command("/customer Spanish"))
    assert reply.banner_changed and "Customer: Spanish" in str(reply.text)
    assert "Customer: Spanish" in str(run_agent_command(conv, parse_agent_command("/customer")).text)
    assert run_agent_command(conv, parse_agent_command("German", "agent")).banner_changed
    assert conv.agent_language == "de"
    assert "empty" in str(run_agent_command(conv, parse_agent_command("/glossary")).text)
    with pytest.raises(GlossaryError):
        parse_agent_command("/glossary add a = b = c")
    assert "Nothing to download" in str(run_agent_command(conv, parse_agent_command("/transcript")).text)
    with pytest.raises(CommandError):
        run_agent_command(conv, parse_agent_command("/customer German"))


async def test_transcript_command_offers_two_files():
    translator, _ = _translator(_echo_english)
    conv = Conversation("en")
    await handle_agent_message(conv, SPANISH, translator)
    reply = run_agent_command(conv, parse_agent_command("/transcript"))
    assert [f.name.rsplit(".", 1)[1] for f in reply.files] == ["csv", "md"]
    assert b"JD123456789" in reply.files[0].content


def test_is_universal():
    assert is_universal("ok") and is_universal(" 42 ") and is_universal("🙏🙏")
    assert not is_universal("ok thanks") and not is_universal("vale")


def test_options_come_from_settings_fields_when_they_exist():
    assert AgentOptions.from_settings(None) == AgentOptions()

    class Fields:
        glossary_template = True
        agent_context_turns = 2
        agent_drift_threshold = 0.6

    options = AgentOptions.from_settings(Fields())  # type: ignore[arg-type]
    assert options.glossary_template and options.context_turns == 2
    assert options.drift_threshold == 0.6 and options.context_chars == 800


async def test_an_answer_in_the_wrong_language_is_reported():
    translator, _ = _translator(lambda p, s: "我们退还了包裹费用给您的信用卡。")
    conv = Conversation("en", "es")
    result = await handle_agent_message(conv, "We have refunded the parcel fee to your card.",
                                        translator)
    assert any("looks like Chinese, not Spanish" in w for w in result.warnings)


async def test_a_back_translation_that_fails_holds_the_reply_as_not_checked(caplog):
    """The check's own call fails: the reply is neither lost nor waved through; it carries
    "could not be checked" with the reason, and the log says it too."""
    def model(prompt: str, source: str) -> str | Exception:
        if "into Spanish" in prompt:
            return "Su pedido sale hoy."
        return ModelUnavailableError("the model server is down")

    translator, _ = _translator(model)
    conv = Conversation("en", "es")
    result = await handle_agent_message(conv, "Your order ships today.", translator,
                                        back_translate=True)
    assert result.translation == "Su pedido sale hoy." and result.verdict.hold
    assert result.turn.back_translation is None and conv.transcript == [result.turn]
    assert any("could not be checked" in w and "back-translation failed" in w
               for w in result.warnings)
    assert "could not be checked" in caplog.text


async def test_a_check_that_raises_holds_the_reply_as_not_checked(monkeypatch, caplog):
    """A bug in a meaning check does not stop the conversation: held, said, logged."""
    def broken(*_args: object, **_kwargs: object) -> tuple[()]:
        raise RuntimeError("a checker bug")

    monkeypatch.setattr("hymt_chat.text.verdict.meaning_findings", broken)

    def model(prompt: str, source: str) -> str:
        return "Su pedido sale hoy." if "into Spanish" in prompt else "Your order ships today."

    translator, _ = _translator(model)
    conv = Conversation("en", "es")
    result = await handle_agent_message(conv, "Your order ships today.", translator,
                                        back_translate=True)
    assert result.verdict.hold and result.verdict.reason == "a check failed: RuntimeError"
    assert any("could not be checked" in w for w in result.warnings)
    assert "RuntimeError: a checker bug" in caplog.text


async def test_a_flipped_reply_is_held_and_a_reworded_one_is_not():
    """The desk's two cases through the mode itself: "Please send me a photo" read back as
    "I cannot provide a photo" is held for its negation; "Yes, of course." as "Yes, sure." is
    not held."""
    book = {"I am sorry. Please send me a photo of the box.":
            "Lo siento, pero no puedo proporcionar una foto de la caja.",
            "Lo siento, pero no puedo proporcionar una foto de la caja.":
            "I am sorry, but I cannot provide a photo of the box.",
            "Yes, of course.": "Sí, claro.", "Sí, claro.": "Yes, sure."}
    translator, _ = _translator(lambda prompt, source: book[prompt.split("\n\n", 1)[-1]])
    conv = Conversation("en", "es")
    flipped = await handle_agent_message(conv, "I am sorry. Please send me a photo of the box.",
                                         translator, back_translate=True)
    kept = await handle_agent_message(conv, "Yes, of course.", translator, back_translate=True)
    assert flipped.verdict.hold and [f.kind for f in flipped.verdict.findings] == ["negation"]
    assert "“cannot”" in flipped.warnings[0]
    assert not kept.verdict.hold and kept.warnings == ()
