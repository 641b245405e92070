"""Support agent: who wrote a message, which way it goes, and what the pair remembers."""

from __future__ import annotations

import pytest

from hymt_chat.errors import CommandError, UnknownLanguageError
from hymt_chat.modes.agent.conversation import (
    Conversation,
    CustomerLanguageUnknownError,
    build_context,
    short_word_languages,
)

SPANISH = "Hola, el paquete ya llegó pero la caja está rota."
ENGLISH = "Let me check your order right away."
FRENCH = "Bonjour, je voudrais changer l'adresse de livraison."


def _with_customer(lang: str = "es", agent: str = "en") -> Conversation:
    conv = Conversation(agent)
    conv.set_customer_language(lang)
    return conv


def test_customer_message_sets_the_customer_language():
    conv = Conversation("en")
    route = conv.route(SPANISH)
    assert (route.direction, route.source, route.target) == ("customer->agent", "es", "en")
    assert route.side == "customer" and route.pair_changed
    assert conv.customer_language == "es"
    assert "Spanish" in (route.note or "")


def test_agent_reply_goes_to_the_remembered_customer_language():
    conv = Conversation("en")
    conv.route(SPANISH)
    route = conv.route(ENGLISH)
    assert (route.direction, route.source, route.target) == ("agent->customer", "en", "es")
    assert not route.pair_changed and route.note is None


def test_agent_reply_before_the_customer_language_is_known_says_what_to_do():
    with pytest.raises(CustomerLanguageUnknownError, match="/customer"):
        Conversation("en").route(ENGLISH)


def test_customer_switching_language_is_followed_and_said():
    conv = Conversation("en")
    conv.route(SPANISH)
    route = conv.route(FRENCH)
    assert (route.direction, route.source) == ("customer->agent", "fr")
    assert conv.customer_language == "fr" and route.pair_changed
    assert "now writes French (was Spanish)" in (route.note or "")
    assert conv.route(ENGLISH).target == "fr"


def test_unsure_long_message_uses_the_conversation_languages_as_priors():
    # langdetect: 71 % Portuguese, 29 % Spanish. With a Spanish customer it is theirs.
    text = "Hola, mi pedido no ha llegado todavía."
    conv = _with_customer("es")
    route = conv.route(text)
    assert (route.direction, route.source) == ("customer->agent", "es")
    assert conv.customer_language == "es"
    # A Spanish-speaking agent's own sentence is theirs.
    conv = _with_customer("fr", agent="es")
    assert conv.route(text).direction == "agent->customer"


def test_english_that_langdetect_calls_french_is_settled_by_common_words():
    conv = _with_customer("es")
    assert conv.route("Let me check it.").direction == "agent->customer"  # fr 0.57, de 0.43
    with pytest.raises(CustomerLanguageUnknownError):
        Conversation("en").route("Let me check it.")


@pytest.mark.parametrize("text", ["ok", "OK!", "👍 ok", "JD123456789", "Sounds good"[:5]])
def test_short_message_without_a_hint_is_the_agents_reply(text):
    conv = _with_customer("es")
    route = conv.route(text)
    assert (route.direction, route.target) == ("agent->customer", "es")
    assert conv.customer_language == "es"


@pytest.mark.parametrize("text", ["gracias", "¡Gracias!", "vale", "Muchas gracias"])
def test_short_word_of_the_customers_language_is_theirs(text):
    conv = _with_customer("es")
    route = conv.route(text)
    assert (route.direction, route.source, route.target) == ("customer->agent", "es", "en")


@pytest.mark.parametrize("text", ["thanks", "Thank you!", "sure"])
def test_short_word_of_the_agents_language_is_the_agents(text):
    conv = _with_customer("es")
    assert conv.route(text).direction == "agent->customer"


def test_short_word_of_a_third_language_does_not_change_the_customer_language():
    conv = _with_customer("es")
    route = conv.route("merci")
    assert (route.direction, route.source) == ("customer->agent", "fr")
    assert conv.customer_language == "es" and not route.pair_changed
    assert "stays Spanish" in (route.note or "")


def test_first_message_short_word_sets_the_customer_language():
    conv = Conversation("en")
    route = conv.route("Merci beaucoup")
    assert (route.direction, route.source) == ("customer->agent", "fr")
    assert conv.customer_language == "fr" and route.pair_changed


def test_first_message_ok_cannot_be_routed():
    with pytest.raises(CustomerLanguageUnknownError):
        Conversation("en").route("ok")


def test_short_message_in_a_telling_script_follows_the_script():
    conv = _with_customer("zh")
    assert conv.route("好的").direction == "customer->agent"
    conv = _with_customer("en", agent="zh")
    assert conv.route("好的").direction == "agent->customer"


def test_chinese_variants_keep_the_remembered_customer_variant():
    conv = _with_customer("zh-Hant")
    route = conv.route("您好您好")  # no character telling Simplified from Traditional
    assert (route.direction, route.source) == ("customer->agent", "zh-Hant")
    assert conv.customer_language == "zh-Hant"


def test_clearly_traditional_text_switches_the_customer_to_traditional():
    conv = _with_customer("zh")
    route = conv.route("請問你們的營業時間是幾點？")
    assert route.source == "zh-Hant" and conv.customer_language == "zh-Hant"


def test_protected_spans_do_not_sway_detection():
    conv = _with_customer("es")
    route = conv.route("ok JD123456789 https://example.com/track/ABC-12345")
    assert route.direction == "agent->customer"
    assert "Short message" in (route.note or "")


def test_side_can_be_forced():
    conv = _with_customer("es")
    route = conv.route("ok", side="customer")
    assert (route.direction, route.source, route.target) == ("customer->agent", "es", "en")
    assert conv.route(SPANISH, side="agent").direction == "agent->customer"


def test_customer_command_overrides_and_checks():
    conv = Conversation("en")
    assert "Spanish" in conv.set_customer_language("es")
    assert conv.set_customer_language("法语") and conv.customer_language == "fr"
    with pytest.raises(CommandError, match="your own language"):
        conv.set_customer_language("English")
    with pytest.raises(UnknownLanguageError):
        conv.set_customer_language("Klingon")
    with pytest.raises(CommandError, match="customer's language"):
        conv.set_agent_language("fr")
    conv.set_agent_language("de")
    assert conv.route(ENGLISH).direction == "customer->agent"  # English is now the customer's


def test_banner_shows_the_pair():
    conv = Conversation("English")
    assert conv.banner().startswith("Agent: English ⇄ Customer: not known yet")
    conv.set_customer_language("es")
    assert conv.banner() == "Agent: English ⇄ Customer: Spanish"


def test_short_word_lists():
    assert short_word_languages("Merci !") == ["fr"]
    assert set(short_word_languages("si")) == {"es", "it"}
    assert short_word_languages("ok") == []


def test_context_takes_the_last_turns_in_the_source_language():
    conv = Conversation("en")
    from hymt_chat.modes.agent.conversation import Turn, now

    turns = [
        Turn(now(), "customer", "Mi pedido no llegó.", "es", "My order didn't arrive.", "en"),
        Turn(now(), "agent", "I will check it.", "en", "Lo voy a revisar.", "es"),
        Turn(now(), "customer", "Gracias.", "es", "Thanks.", "en"),
    ]
    conv.transcript.extend(turns)
    assert build_context(conv.transcript, "es") == (
        "Customer: Mi pedido no llegó.\nAgent: Lo voy a revisar.\nCustomer: Gracias.")
    assert build_context(conv.transcript, "en", max_turns=2) == (
        "Agent: I will check it.\nCustomer: Thanks.")
    short = build_context(conv.transcript, "es", max_chars=60)
    assert short.endswith("Customer: Gracias.") and len(short) <= 60
    assert build_context([], "es") == ""
    assert build_context(conv.transcript, "es", max_turns=0) == ""


def test_state_survives_a_json_round_trip():
    import json

    from hymt_chat.modes.agent.conversation import Turn, now

    conv = Conversation("en")
    conv.route(SPANISH)
    conv.glossary.add("订单号", "order number", agent_language="en", customer_language="es")
    conv.glossary.add_keep("JD-Express")
    conv.add_turn(Turn(now(), "customer", SPANISH, "es", "The box is broken.", "en",
                       ("a warning",), None, None))
    again = Conversation.from_dict(json.loads(json.dumps(conv.to_dict())))
    assert again == conv
    assert again.route(ENGLISH).target == "es"
