"""The meaning checks one by one, each on the smallest case that shows its rule (the labelled
set, ``tests/test_meaning_set.py``, measures them together)."""

from __future__ import annotations

import pytest

from hymt_chat.text.checks import check_translation, spelled_numbers
from hymt_chat.text.meaning import meaning_findings, names, negations, numbers
from hymt_chat.text.verdict import judge


def _kinds(original: str, back: str, language: str, translation: str = "") -> list[str]:
    return [f.kind for f in meaning_findings(original, back, language, translation)]


@pytest.mark.parametrize(("original", "back", "language"), [
    ("Do not open the package.", "Open the package.", "en"),
    ("Envíeme una foto, por favor.", "No puedo enviarle una foto.", "es"),
    ("Le colis est arrivé.", "Le colis n'est pas arrivé.", "fr"),
    ("我的订单到了。", "我的订单没到。", "zh"),
])
def test_a_negation_added_or_dropped_is_found(original, back, language):
    assert _kinds(original, back, language) == ["negation"]


@pytest.mark.parametrize(("original", "back", "language"), [
    ("It's not unusual.", "It's common.", "en"),  # two cues in one clause: a positive
    ("Don't forget your receipt.", "Remember your receipt.", "en"),
    ("No problem at all.", "Don't worry about it.", "en"),  # idioms, taken out first
    ("Unless you cancel, it renews.", "If you don't cancel, it renews.", "en"),
    ("不客气。", "别客气。", "zh"),
])
def test_a_negation_that_keeps_the_meaning_is_not(original, back, language):
    assert _kinds(original, back, language) == []


def test_an_idiom_is_a_whole_phrase_not_a_substring():
    assert negations("The piano problem is fixed.", "en") == []
    assert negations("No problem.", "en") == []


def test_an_opposite_is_found_and_a_negated_opposite_agrees():
    assert _kinds("The item is in stock.", "The item is out of stock.", "en") == ["antonym"]
    assert _kinds("Your account is active.", "Your account was reactivated.", "en") == []
    assert _kinds("El paquete llegó roto.", "El paquete llegó tarde.", "es") == ["antonym"]
    assert _kinds("The item is not available.", "The item is sold out.", "en") == []
    assert _kinds("The payment was successful.", "The payment failed.", "en") == ["antonym"]


def test_names_lost_or_changed():
    assert _kinds("This is Maria from billing.", "This is Juan from billing.", "en") == ["name"]
    assert _kinds("Maria from billing will call.", "Juan from billing will call.", "en",
                  "Juan de facturación le llamará.") == ["name"]
    assert _kinds("It ships with DHL.", "It ships with UPS.", "en") == ["name"]
    assert names("EN: the order is OK.", "en") == []  # codes of two capitals are not names
    assert names("王先生和小张都在。", "zh") == ["王先生", "小张"]


def test_a_part_left_out_or_added():
    assert _kinds("Bring the device and the original receipt.",
                  "Bring the device.", "en") == ["omission"]
    assert _kinds("The part has been ordered.",
                  "The part has been ordered and will be billed to you.", "en") == ["addition"]
    assert _kinds("Thanks for your patience. The replacement is on its way.",
                  "Thank you for waiting. The replacement has been sent out.", "en") == []


def test_numbers_as_words_count_and_times_are_left_to_the_values():
    assert numbers("two boxes and 3 bags", "en") == {"2": 1, "3": 1}
    assert numbers("我买了两件", "zh") == {"2": 1}
    assert numbers("at 3 PM or 15:00", "en") == {}
    # One reader of number words for both checks: a weekday's numeral is no count.
    assert spelled_numbers("星期三寄出三件", "zh") == [("三", 3)]
    assert check_translation("Retour sous quatorze jours.", "Return within eight days.", "fr",
                             "en")[0].message == ("The number quatorze may be wrong in this "
                                                  "translation (it says eight).")
    assert check_translation("Retour sous quatorze jours.", "Return within 14 days.", "fr",
                             "en") == ()


def test_the_verdict_holds_on_a_finding_and_says_each_once():
    held = judge("Do not open the package.", "Abra el paquete.", "en", "es",
                 back="Open the package.")
    assert held.hold and len(held.messages) == 1
    clean = judge("Yes, of course.", "Sí, claro.", "en", "es", back="Yes, sure.")
    assert not clean.hold and clean.messages == () and clean.score is not None
    empty = judge("Your order ships today.", "Su pedido sale hoy.", "en", "es", back="")
    assert [f.kind for f in empty.findings] == ["omission"]


def test_a_language_the_checks_do_not_read_is_held_as_not_checked():
    verdict = judge("Text.", "Texte.", None, "fr", back="Text.")
    assert verdict.hold and "could not be checked" in verdict.messages[-1]
    assert not judge("Text.", "Texte.", "en", "fr", back="Text.").hold
