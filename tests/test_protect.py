"""Protected spans are masked before translation and restored after, and losses are reported."""

from __future__ import annotations

import pytest

from hymt_chat.modes.agent.protect import find_spans, mask, plain_text, strip_tokens, token, unmask


def _kinds(text: str, terms: dict[str, str] | None = None) -> list[tuple[str, str]]:
    return [(s.kind, s.original) for s in find_spans(text, terms)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("您好，我的订单号是JD123456789，想查询物流状态。", [("order", "JD123456789")]),
        ("Order ORD-2024-001 and #12345 shipped.",
         [("order", "ORD-2024-001"), ("order", "#12345")]),
        ("Mail a.b+c@ex-ample.co.uk!", [("email", "a.b+c@ex-ample.co.uk")]),
        ("See https://track.example.com/o/77.", [("url", "https://track.example.com/o/77")]),
        ("(see https://en.wikipedia.org/wiki/Foo_(bar)).",
         [("url", "https://en.wikipedia.org/wiki/Foo_(bar)")]),
        ("Go to www.example.de/form, then", [("url", "www.example.de/form")]),
        ("Hello {name}, {{user}} %s %(count)d $HOME ${PATH} %1$s",
         [("placeholder", p) for p in ("{name}", "{{user}}", "%s", "%(count)d", "$HOME",
                                       "${PATH}", "%1$s")]),
        ("Run `reset --all` now", [("code", "`reset --all`")]),
        ("Call 0612345678 today", [("number", "0612345678")]),
    ],
)
def test_what_is_protected(text, expected):
    assert _kinds(text) == expected


@pytest.mark.parametrize(
    "text",
    ["COVID-19 rules", "at 3pm on 2024-01-15", "50% off, 100% sure", "a MP3 file",
     "20% d'intérêt", "costs $5", "iPhone15 case"],
)
def test_ordinary_text_is_not_protected(text):
    assert find_spans(text) == []


def test_mask_and_unmask_round_trip():
    text = "Order ORD-2024-001: track at https://t.example.com/x or mail help@example.com."
    masked = mask(text)
    assert "ORD-2024-001" not in masked.text and "@" not in masked.text
    assert masked.text == f"Order {token(0)}: track at {token(1)} or mail {token(2)}."
    back = unmask(masked.text, masked)
    assert back.text == text and back.missing == [] and back.extra == []


def test_model_reordering_spans_is_fine():
    masked = mask("From JD123456789 to JD987654321")
    answer = f"Vers {token(1)} depuis {token(0)}"
    assert unmask(answer, masked).text == "Vers JD987654321 depuis JD123456789"


def test_dropped_span_is_reported_not_appended():
    masked = mask("Mi pedido JD123456789 no ha llegado, escriba a ana@example.com")
    out = unmask(f"My order has not arrived, write to {token(1)}", masked)
    assert out.missing == ["JD123456789"]
    assert out.text == "My order has not arrived, write to ana@example.com"
    assert any("JD123456789" in w for w in out.warnings)


def test_repeated_and_invented_placeholders_are_reported():
    masked = mask("Ticket #48213 please")
    out = unmask(f"{token(0)} ticket {token(0)} {token(7)}", masked)
    assert out.text == "#48213 ticket #48213"
    assert out.extra == ["#48213", token(7)]
    assert token(7) not in out.text


def test_tolerant_reading_of_placeholders():
    masked = mask("Order JD123456789 and SKU-88120")
    assert masked.text == "Order [1] and [2]"
    assert unmask("订单【1】和 [ 2 ]", masked).text == "订单JD123456789和 SKU-88120"


def test_placeholder_lookalikes_in_the_source_are_protected_too():
    masked = mask("As said in [2], order JD123456789")
    assert [s.kind for s in masked.spans] == ["literal", "order"]
    assert unmask(masked.text, masked).text == "As said in [2], order JD123456789"


def test_do_not_translate_terms_keep_their_own_spelling():
    masked = mask("Ship with JD-Express or jd-express.", {"JD-Express": "JD-Express"})
    assert [s.kind for s in masked.spans] == ["term", "term"]
    assert unmask(masked.text, masked).text == "Ship with JD-Express or jd-express."


def test_terms_are_whole_words_in_latin_and_substrings_in_cjk():
    assert _kinds("Pro plans and Professional", {"Pro": "Pro"}) == [("term", "Pro")]
    assert _kinds("我的订单号是多少", {"订单号": "order number"}) == [("glossary", "订单号")]


def test_glossary_term_is_restored_as_its_replacement():
    masked = mask("我的订单号是JD123456789", {"订单号": "order number"})
    assert masked.text == f"我的{token(0)}是{token(1)}"
    out = unmask(f"My {token(0)} is {token(1)}", masked)
    assert out.text == "My order number is JD123456789"


def test_terms_win_over_patterns_and_longest_first():
    terms = {"ACME Cloud": "ACME Cloud", "ACME": "ACME", "SKU-12345": "SKU-12345"}
    assert _kinds("ACME Cloud by ACME, SKU-12345", terms) == [
        ("term", "ACME Cloud"), ("term", "ACME"), ("term", "SKU-12345")]


def test_only_spans_means_nothing_to_translate():
    assert mask("JD123456789").only_spans
    assert mask("  https://example.com/a ! ").only_spans
    assert not mask("Order JD123456789").only_spans


def test_plain_text_and_strip_tokens_leave_the_words():
    assert plain_text("Hola JD123456789 gracias https://x.example/a") == "Hola gracias"
    assert strip_tokens(f"Hola {token(0)} gracias").split() == ["Hola", "gracias"]


def test_nothing_masked_leaves_the_answer_alone():
    masked = mask("See chapter one")
    assert unmask("Voir le chapitre [1]", masked).text == "Voir le chapitre [1]"
