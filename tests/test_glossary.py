"""The per-conversation glossary, its do-not-translate list and the /glossary command."""

from __future__ import annotations

import pytest

from hymt_chat.modes.agent.glossary import (
    MAX_ENTRIES,
    Glossary,
    GlossaryCommand,
    GlossaryError,
    parse_glossary,
    run_glossary,
)


def _run(glossary: Glossary, args: str, agent: str = "en", customer: str | None = "zh") -> str:
    return str(run_glossary(glossary, parse_glossary(args), agent_language=agent,
                            customer_language=customer))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ("add 订单号 = order number", GlossaryCommand("add", "订单号", "order number")),
        ("add 订单号＝order number", GlossaryCommand("add", "订单号", "order number")),
        ('add "ship date" = fecha de envío', GlossaryCommand("add", "ship date", "fecha de envío")),
        ("add JD-Express", GlossaryCommand("keep", "JD-Express")),
        ("", GlossaryCommand("list")),
        ("list", GlossaryCommand("list")),
        ("remove 订单号", GlossaryCommand("remove", "订单号")),
        ("clear", GlossaryCommand("clear")),
    ],
)
def test_parse(args, expected):
    assert parse_glossary(args) == expected


@pytest.mark.parametrize("args", ["add", "add a = b = c", "add  = b", "remove", "frobnicate x",
                                  "add " + "x" * 101])
def test_malformed_commands_say_how(args):
    with pytest.raises(GlossaryError):
        parse_glossary(args)


def test_add_works_both_ways():
    g = Glossary()
    reply = _run(g, "add 订单号 = order number")
    assert "订单号" in reply and "order number" in reply
    assert g.replacements("customer->agent", "zh") == {"订单号": "order number"}
    assert g.replacements("agent->customer", "zh") == {"order number": "订单号"}


def test_sides_are_swapped_when_the_agent_wrote_their_term_first():
    g = Glossary()
    _run(g, "add order number = 订单号")
    entry = g.entries[0]
    assert (entry.customer_term, entry.agent_term) == ("订单号", "order number")


def test_entry_is_not_applied_after_the_customer_language_changes():
    g = Glossary()
    _run(g, "add pedido = order", customer="es")
    assert g.replacements("agent->customer", "es") == {"order": "pedido"}
    assert g.replacements("agent->customer", "fr") == {}


def test_a_term_in_a_telling_script_is_scoped_to_its_language():
    g = Glossary()
    _run(g, "add 订单号 = order number", customer="fr")  # added while a French customer writes
    assert g.entries[0].customer_language == "zh"
    assert g.replacements("agent->customer", "zh") == {"order number": "订单号"}
    assert g.replacements("agent->customer", "zh-Hant") == {"order number": "订单号"}
    assert g.replacements("agent->customer", "fr") == {}


def test_do_not_translate_terms_map_to_themselves_in_both_directions():
    g = Glossary()
    assert "never translated" in _run(g, "add JD-Express")
    assert g.replacements("customer->agent", "zh") == {"JD-Express": "JD-Express"}
    assert g.replacements("agent->customer", "zh") == {"JD-Express": "JD-Express"}
    assert g.keep_terms() == {"JD-Express": "JD-Express"}


def test_list_remove_clear():
    g = Glossary()
    assert "empty" in _run(g, "list")
    _run(g, "add 订单号 = order number")
    _run(g, "add JD-Express")
    listing = _run(g, "list")
    assert "订单号 = order number (zh)" in listing and "JD-Express (—)" in listing
    assert "— : never translated" in listing
    assert "Removed" in _run(g, "remove ORDER NUMBER")  # either side, any case
    assert len(g) == 1
    assert "not in the glossary" in _run(g, "remove nothing")
    assert "1 term removed" in _run(g, "clear")
    assert len(g) == 0


def test_adding_a_term_again_replaces_it():
    g = Glossary()
    _run(g, "add 订单号 = order number")
    _run(g, "add 订单号 = order ID")
    assert [(e.customer_term, e.agent_term) for e in g.entries] == [("订单号", "order ID")]


def test_pairs_in_text_only_lists_terms_present():
    g = Glossary()
    _run(g, "add 订单号 = order number")
    _run(g, "add 发票 = invoice")
    _run(g, "add JD-Express")
    assert g.pairs_in("我的订单号是多少", "customer->agent", "zh") == [("订单号", "order number")]


def test_the_glossary_has_a_size_limit():
    g = Glossary()
    for i in range(MAX_ENTRIES):
        g.add_keep(f"term{i}")
    with pytest.raises(GlossaryError, match="full"):
        g.add_keep("one more")
