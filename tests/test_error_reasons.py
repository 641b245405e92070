"""One table (errors._REASONS) names every failure: the policy's event labels, the metrics'
outcomes, the words of a sentence about several failures, and Best quality's fusion note; one
table of HTTP statuses gives the client's sentence and the fusion note the same meaning."""

from __future__ import annotations

import asyncio

import pytest
from openai import APIStatusError

from hymt_chat.engine.chimera import _fusion_reason
from hymt_chat.engine.client import map_error
from hymt_chat.errors import (
    EmptyTextError,
    IncompleteTranslationError,
    ModelBusyError,
    ModelError,
    ModelTimeoutError,
    ModelUnavailableError,
    RateLimitedError,
    UnknownLanguageError,
    reason_by_label,
    reason_label,
    short_reason,
)
from hymt_chat.modes.page_text import PageText
from hymt_chat.service.metrics import outcome_of
from tests.support.sdk_errors import status_error


def _incomplete() -> IncompleteTranslationError:
    return IncompleteTranslationError(None, 1, 2, [2], ModelBusyError("x"))


@pytest.mark.parametrize(("err", "label", "outcome", "words"), [
    (ModelBusyError("x"), "busy (503)", "busy", "the model server stayed busy"),
    (ModelUnavailableError("x"), "unavailable", "unavailable", "the model server was not reachable"),
    (ModelTimeoutError("x"), "timeout", "timeout", "the model was too slow"),
    (ModelError("Bad answer."), "model error", "model_error", "Bad answer"),
    (UnknownLanguageError("No such language."), "UnknownLanguageError", "refused",
     "No such language"),
    (EmptyTextError(""), "EmptyTextError", "refused", "EmptyTextError"),
    (RateLimitedError(3), "RateLimitedError", "rate_limited",
     "You are sending more than allowed; try again in 3 s"),
    (asyncio.CancelledError(), "CancelledError", "cancelled", "CancelledError"),
    (RuntimeError("boom"), "RuntimeError", "error", "boom"),
])
def test_each_failure_has_one_label_one_outcome_and_its_words(err, label, outcome, words):
    assert reason_label(err) == label
    assert outcome_of(err) == outcome
    assert short_reason(err) == words


def test_an_incomplete_translation_is_a_model_error_with_its_own_outcome():
    err = _incomplete()
    assert (reason_label(err), outcome_of(err)) == ("model error", "incomplete")
    assert short_reason(err) == str(err).rstrip(".")
    assert "the model server stayed busy" in str(err)  # its cause, in the table's words


def test_the_policy_labels_lead_back_to_the_metrics_outcomes():
    for err in (ModelBusyError(), ModelUnavailableError(), ModelTimeoutError(), ModelError()):
        reason = reason_by_label(reason_label(err))
        assert reason is not None and reason.outcome == outcome_of(err)
    assert reason_by_label("deadline (queued)") is None
    assert reason_label(None) == ""


def _status(status: int) -> APIStatusError:
    return status_error(status)


@pytest.mark.parametrize(("status", "client", "fusion"), [
    (401, "The model server refused the API key (check HYMT_API_KEY).",
     "the fusion server refused the API key (HYMT_FUSION_API_KEY)"),
    (403, "The model server refused the API key (check HYMT_API_KEY).",
     "the fusion server refused the API key (HYMT_FUSION_API_KEY)"),
    (404, "The model server does not serve that model (check HYMT_MODEL).",
     "the fusion server does not serve that model (HYMT_FUSION_MODEL)"),
    (500, "The model server failed (HTTP 500).", "the fusion model failed (HTTP 500)"),
    (503, "The translation model is busy (HTTP 503).", "the fusion model is busy"),
    (429, "The translation model is busy (HTTP 429).", "the fusion model is busy"),
])
def test_an_http_status_means_the_same_to_the_client_and_to_the_fusion_note(
        status, client, fusion):
    cause = _status(status)
    ours = map_error(cause, 10.0)
    ours.__cause__ = cause  # as `raise map_error(...) from err` does
    assert str(ours) == client
    assert _fusion_reason(ours) == fusion


def test_fusion_reasons_of_failures_without_a_status():
    assert _fusion_reason(ModelUnavailableError("x")) == "the fusion model is not reachable"
    assert _fusion_reason(ModelTimeoutError("x")) == "the fusion model took too long"
    assert _fusion_reason(ModelError("x")) == "the fusion model failed"


@pytest.mark.parametrize(("err", "french"), [
    (RateLimitedError(2.6), "Vous envoyez plus que ce qui est permis ; réessayez dans 3 s."),
    (RateLimitedError(0, too_big=(450000, 400000)),
     "Ceci fait 450\u202f000 caractères ; un utilisateur peut en envoyer au plus 400\u202f000 sur "
     "cette durée. Découpez-le en parties plus petites."),
    (RateLimitedError(0, too_big=(5000, 4000), unit="model calls"),
     "Ceci demande 5\u202f000 appels au modèle ; un utilisateur peut en faire au plus "
     "4\u202f000 sur cette durée. Découpez-le en parties plus petites."),
])
def test_a_user_over_the_limits_reads_it_in_the_pages_language(err, french):
    """The chat says a refusal over the per-user limits in its reader's language;
    ``str(err)`` stays English, for the log, the API and the CLI."""
    assert PageText.of("fr").error(err) == french
    assert str(err).startswith(("You are sending", "This is "))
