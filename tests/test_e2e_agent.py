"""Support agent end to end, on the engine double (tests/support/engine_double.py).

Six turns in three languages keep the right pair at every turn, protected spans survive the
round trip, and a span the model drops is reported. The double answers from a phrasebook
(tests/support/phrasebook.py) that keeps the placeholders it is sent, as a good model does;
one test's double drops a placeholder instead. The prompts are read from the requests the
double received. The real vLLM's round trip is tested in tests/test_e2e_translation.py.
"""

from __future__ import annotations

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.agent.protect import strip_tokens
from hymt_chat.modes.agent.turns import handle_agent_message, parse_agent_command, run_agent_command
from tests.support.engine_double import EngineDouble, running_double
from tests.support.phrasebook import phrasebook, source_text

ANSWERS = phrasebook({
    "Hola, mi pedido [1] llegó ayer pero la caja está rota.":
        {"en": "Hello, my order [1] arrived yesterday but the box is broken."},
    "Please send a photo of the box to [1].":
        {"es": "Por favor, envíe una foto de la caja a [1]."},
    "Por favor, envíe una foto de la caja a [1].":
        {"en": "Please send a photo of the box to [1]."},
    "Gracias, ¿y cuándo llegará el nuevo?": {"en": "Thank you, and when will the new one arrive?"},
    "Bonjour, je n'ai toujours pas reçu mon colis et personne ne répond au téléphone.":
        {"en": "Hello, I still have not received my parcel and nobody answers the phone."},
    "You can follow your parcel here: [1]": {"fr": "Vous pouvez suivre votre colis ici : [1]"},
    "Hola, mi [1] con [2] llegó roto.": {"en": "Hello, my [1] with [2] arrived broken."},
    "Your parcel travels with [1] and arrives tomorrow.":
        {"es": "Su paquete viaja con [1] y llega mañana."},
    "Your order [1] ships tomorrow.": {"es": "Su pedido [1] se envía mañana."},
})


def _translator(server) -> Translator:
    settings = server.settings()
    return Translator(settings, ModelClient(settings), Policy(deadline=settings.deadline))


async def test_six_turns_three_languages_keep_the_pair(engine: EngineDouble):
    engine.answer = ANSWERS
    translator = _translator(engine)
    conv = Conversation("en")
    assert conv.banner().startswith("Agent: English ⇄ Customer: not known yet")

    # 1. The customer writes Spanish: into English, and Spanish is remembered.
    t1 = await handle_agent_message(
        conv, "Hola, mi pedido JD123456789 llegó ayer pero la caja está rota.", translator)
    assert (t1.route.direction, t1.route.source, t1.route.target) == ("customer->agent", "es", "en")
    assert conv.banner() == "Agent: English ⇄ Customer: Spanish"
    assert t1.translation == "Hello, my order JD123456789 arrived yesterday but the box is broken."
    assert t1.warnings == (), t1
    assert source_text(engine.prompts[0]) == (  # the order number never reached the model
        "Hola, mi pedido [1] llegó ayer pero la caja está rota.")

    # 2. The agent replies in English: into Spanish, checked by a back-translation.
    t2 = await handle_agent_message(
        conv, "Please send a photo of the box to support@example.com.", translator,
        back_translate=True)
    assert (t2.route.direction, t2.route.source, t2.route.target) == ("agent->customer", "en", "es")
    assert t2.translation == "Por favor, envíe una foto de la caja a support@example.com."
    assert t2.turn.back_translation == "Please send a photo of the box to support@example.com."
    assert t2.back is not None and 0.0 <= t2.back.score <= 1.0

    # 3. The customer again, in Spanish.
    t3 = await handle_agent_message(conv, "Gracias, ¿y cuándo llegará el nuevo?", translator)
    assert (t3.route.direction, t3.route.source) == ("customer->agent", "es")
    assert t3.translation == "Thank you, and when will the new one arrive?"

    # 4. A short "ok": not trusted to detection; the agent's, to the remembered Spanish, and
    # the same in every language, so not sent.
    sent = len(engine.requests)
    t4 = await handle_agent_message(conv, "ok", translator)
    assert len(engine.requests) == sent
    assert (t4.route.direction, t4.route.target) == ("agent->customer", "es")
    assert t4.translation == "ok" and t4.model_calls == 0
    assert conv.customer_language == "es"

    # 5. The customer switches to French: followed, and said.
    t5 = await handle_agent_message(
        conv, "Bonjour, je n'ai toujours pas reçu mon colis et personne ne répond au téléphone.",
        translator)
    assert (t5.route.direction, t5.route.source, t5.route.target) == ("customer->agent", "fr", "en")
    assert t5.route.pair_changed and "French" in (t5.route.note or "")
    assert t5.translation == (
        "Hello, I still have not received my parcel and nobody answers the phone.")

    # 6. The agent's reply now goes to French; the URL comes back as written.
    url = "https://track.example.com/o/JD123456789"
    t6 = await handle_agent_message(conv, f"You can follow your parcel here: {url}", translator)
    assert (t6.route.direction, t6.route.target) == ("agent->customer", "fr")
    assert t6.translation == f"Vous pouvez suivre votre colis ici : {url}", t6
    assert t6.warnings == (), t6

    assert [t.who for t in conv.transcript] == ["customer", "agent", "customer", "agent",
                                                "customer", "agent"]
    reply = run_agent_command(conv, parse_agent_command("/transcript"))
    assert b"JD123456789" in reply.files[0].content and len(reply.files) == 2


def _dropping(prompt: str) -> str:
    """The phrasebook's answer with the first placeholder removed: a deliberate drop."""
    return ANSWERS(prompt).replace("[1]", "", 1)


async def test_a_span_the_model_drops_is_reported():
    conv = Conversation("en", "es")
    with running_double(answer=_dropping) as double:
        result = await handle_agent_message(
            conv, "Your order ORD-2024-001 ships tomorrow.", _translator(double))
    assert double.requests  # the model was asked (and dropped the span each time)
    assert "ORD-2024-001" not in result.translation
    assert "[1]" not in strip_tokens(result.translation)
    assert any("ORD-2024-001" in w for w in result.warnings), result.warnings
    assert conv.transcript[-1].warnings == result.warnings


async def test_glossary_terms_reach_the_customer(engine: EngineDouble):
    """Masking, not the model's goodwill, keeps the agreed terms: both kinds of entry."""
    engine.answer = ANSWERS
    translator = _translator(engine)
    conv = Conversation("en", "es")
    for line in ("/glossary add JD-Express", "/glossary add pedido = order number"):
        run_agent_command(conv, parse_agent_command(line))
    customer = await handle_agent_message(
        conv, "Hola, mi pedido con JD-Express llegó roto.", translator, side="customer")
    assert customer.translation == "Hello, my order number with JD-Express arrived broken."
    assert "pedido" not in engine.prompts[0] and "JD-Express" not in engine.prompts[0]
    agent = await handle_agent_message(
        conv, "Your parcel travels with JD-Express and arrives tomorrow.", translator,
        side="agent")
    assert agent.translation == "Su paquete viaja con JD-Express y llega mañana."  # as written
