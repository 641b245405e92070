"""Check before sending: the back-translation's drift score, and numbers that must not change."""

from __future__ import annotations

import pytest

from hymt_chat.modes.agent.drift import (
    DRIFT_THRESHOLD,
    drift_score,
    missing_numbers,
    numbers,
    words,
)


def test_identical_text_scores_one():
    drift = drift_score("Your refund was approved today.", "Your refund was approved today.")
    assert drift.score == 1.0 and not drift.flagged and drift.reasons == []


def test_paraphrase_passes_and_a_different_meaning_is_flagged():
    ok = drift_score("Your parcel will arrive tomorrow morning.",
                     "Your package will arrive tomorrow morning.")
    assert ok.score >= DRIFT_THRESHOLD and not ok.flagged
    bad = drift_score("Your parcel will arrive tomorrow morning.",
                      "We have cancelled the order and kept the money.")
    assert bad.score < DRIFT_THRESHOLD and bad.flagged
    assert "similarity" in bad.reasons[0]


@pytest.mark.parametrize(
    ("original", "back"),
    [
        ("The refund of 45 euros arrives in 3 days.", "The refund of 54 euros arrives in 3 days."),
        ("The refund of 45 euros arrives in 3 days.", "The refund of 45 euros arrives in days."),
        ("Delivery on 12/03.", "Delivery on 12/03 at 9."),
    ],
)
def test_any_number_that_differs_is_flagged_even_when_similar(original, back):
    drift = drift_score(original, back)
    assert drift.score > 0.7
    assert drift.flagged and any("Numbers differ" in r for r in drift.reasons)


def test_numbers_are_normalised():
    assert numbers("1,000 and 1.000 and 1000") == {"1000": 3}
    assert numbers("٣ أيام") == {"3": 1}  # Arabic-Indic digits
    assert missing_numbers("Pay 45.50 by 12/03", "Payez 45,50 avant le 12/03") == []
    assert missing_numbers("Pay 45 now", "Payez maintenant") == ["45"]


def test_protected_spans_must_survive_the_round_trip():
    drift = drift_score("Order JD123456789 has shipped.", "Order has shipped.",
                        spans=["JD123456789"])
    assert drift.flagged and any("JD123456789" in r for r in drift.reasons)


def test_unspaced_scripts_are_compared_by_character():
    assert words("我的订单") == ["我", "的", "订", "单"]
    assert drift_score("我的订单到了吗", "我的订单到了没有").score > 0.6


def test_words_ignore_case_and_punctuation():
    assert words("Don't PANIC, it's 42!") == ["don't", "panic", "it's"]


def test_empty_texts():
    assert drift_score("", "").score == 1.0
    assert drift_score("Hello", "").flagged
