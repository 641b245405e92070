"""Support agent end to end on the real vLLM server with the demo model.

Six turns in three languages keep the right pair at every turn, protected spans survive the
round trip, and a span the model drops is reported. Greedy decoding (temperature 0) keeps the
small model's answers stable from run to run.
"""

from __future__ import annotations

import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.lang.detect import detect_language
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.agent.protect import plain_text, strip_tokens
from hymt_chat.modes.agent.turns import handle_agent_message, parse_agent_command, run_agent_command

pytestmark = pytest.mark.slow


def _translator(server, client_class=ModelClient) -> Translator:
    settings = server.settings(temperature=0.0)
    return Translator(settings, client_class(settings), Policy(deadline=settings.deadline))


def _language(text: str) -> str | None:
    """The language of a translation, ignoring the spans we put back."""
    return detect_language(plain_text(text))


async def test_six_turns_three_languages_keep_the_pair(demo_server):
    translator = _translator(demo_server)
    conv = Conversation("en")
    assert conv.banner().startswith("Agent: English ⇄ Customer: not known yet")

    # 1. The customer writes Spanish: into English, and Spanish is remembered.
    t1 = await handle_agent_message(
        conv, "Hola, mi pedido JD123456789 llegó ayer pero la caja está rota.", translator)
    assert (t1.route.direction, t1.route.source, t1.route.target) == ("customer->agent", "es", "en")
    assert conv.banner() == "Agent: English ⇄ Customer: Spanish"
    assert _language(t1.translation) == "en", t1.translation
    assert "JD123456789" in t1.translation and t1.warnings == (), t1

    # 2. The agent replies in English: into Spanish, checked by a back-translation.
    t2 = await handle_agent_message(
        conv, "Please send a photo of the box to support@example.com.", translator,
        back_translate=True)
    assert (t2.route.direction, t2.route.source, t2.route.target) == ("agent->customer", "en", "es")
    assert _language(t2.translation) == "es", t2.translation
    assert "support@example.com" in t2.translation
    assert t2.turn.back_translation and _language(t2.turn.back_translation) == "en"
    assert t2.back is not None and 0.0 <= t2.back.score <= 1.0

    # 3. The customer again, in Spanish.
    t3 = await handle_agent_message(conv, "Gracias, ¿y cuándo llegará el nuevo?", translator)
    assert (t3.route.direction, t3.route.source) == ("customer->agent", "es")
    assert _language(t3.translation) == "en", t3.translation

    # 4. A short "ok": not trusted to detection; the agent's, to the remembered Spanish, and
    # the same in every language, so not sent (the demo model answers it instead).
    t4 = await handle_agent_message(conv, "ok", translator)
    assert (t4.route.direction, t4.route.target) == ("agent->customer", "es")
    assert t4.translation == "ok" and t4.model_calls == 0
    assert conv.customer_language == "es"

    # 5. The customer switches to French: followed, and said.
    t5 = await handle_agent_message(
        conv, "Bonjour, je n'ai toujours pas reçu mon colis et personne ne répond au téléphone.",
        translator)
    assert (t5.route.direction, t5.route.source, t5.route.target) == ("customer->agent", "fr", "en")
    assert t5.route.pair_changed and "French" in (t5.route.note or "")
    assert _language(t5.translation) == "en", t5.translation

    # 6. The agent's reply now goes to French; the URL comes back as written.
    url = "https://track.example.com/o/JD123456789"
    t6 = await handle_agent_message(conv, f"You can follow your parcel here: {url}", translator)
    assert (t6.route.direction, t6.route.target) == ("agent->customer", "fr")
    assert _language(t6.translation) == "fr", t6.translation
    assert url in t6.translation and t6.warnings == (), t6

    assert [t.who for t in conv.transcript] == ["customer", "agent", "customer", "agent",
                                                "customer", "agent"]
    reply = run_agent_command(conv, parse_agent_command("/transcript"))
    assert b"JD123456789" in reply.files[0].content and len(reply.files) == 2


class DroppingClient(ModelClient):
    """The real server's answer with the first placeholder removed: a deliberate drop."""

    async def complete(self, prompt, **kwargs):
        answers = await super().complete(prompt, **kwargs)
        return [a.replace("[1]", "", 1) for a in answers]


async def test_a_span_the_model_drops_is_reported(demo_server):
    translator = _translator(demo_server, DroppingClient)
    conv = Conversation("en", "es")
    result = await handle_agent_message(
        conv, "Your order ORD-2024-001 ships tomorrow.", translator)
    assert "ORD-2024-001" not in result.translation
    assert "[1]" not in strip_tokens(result.translation)
    assert any("ORD-2024-001" in w for w in result.warnings), result.warnings
    assert conv.transcript[-1].warnings == result.warnings


async def test_glossary_terms_reach_the_customer_on_the_real_model(demo_server):
    """Masking, not the model's goodwill, keeps the agreed terms: both kinds of entry."""
    translator = _translator(demo_server)
    conv = Conversation("en", "es")
    for line in ("/glossary add JD-Express", "/glossary add pedido = order number"):
        run_agent_command(conv, parse_agent_command(line))
    customer = await handle_agent_message(
        conv, "Hola, mi pedido con JD-Express llegó roto.", translator, side="customer")
    assert "order number" in customer.translation, customer.translation
    assert "JD-Express" in customer.translation, customer.translation
    agent = await handle_agent_message(
        conv, "Your parcel travels with JD-Express and arrives tomorrow.", translator,
        side="agent")
    assert "JD-Express" in agent.translation, agent.translation  # never translated
    assert _language(agent.translation) == "es", agent.translation
