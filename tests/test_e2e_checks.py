"""Every answer checked, through the real client, translator and checks, against the engine
double, whose answers are the cases: a value kept (its placeholder), a value in the wrong
format, a value dropped, a wrong date.

Real: :class:`Translator`, the masking, the checks and their one repair, the metrics hook, and
:class:`ModelClient` over HTTP. The double (``tests/support/engine_double.py``) plays the
model with scripted answers: a small real model gives a wrong answer only when it happens to,
and these tests need each case every run (the same logic with a scripted client in-process:
``tests/test_checks_repair.py``). The messages are ones the demo model once mistranslated
without a word. What the user is shown (``Translation.warnings``) must be exactly what the
checks say of the text shown, and /metrics must count the same events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.fidelity import CheckEvent
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.service.metrics import Metrics
from hymt_chat.text.checks import check_translation
from hymt_chat.text.values import extract_values
from tests.support.engine_double import EngineDouble
from tests.support.phrasebook import source_text

# (source, target, message, a value of the source, how the target writes it,
#  a right answer (as the model sees the message: amounts masked), a wrong one)
ISSUE = [
    ("zh", "en", "退款金额为 259 元", "259 元", "CN¥259",
     "The refund amount is [1].", "The refund amount is $259."),  # the wrong currency
    ("en", "ja", "delivered on 12 March between 9:00 and 11:00", "12 March", "3月12日",
     "3月12日の9:00から11:00の間に配達されました。",
     "3月13日の9:00から11:00の間に配達されました。"),  # the wrong day
    ("de", "es", "Der Betrag von 1.234,50 € kommt am Freitag.", "1.234,50 €", "1.234,50\xa0€",
     "El importe de [1] llega el viernes.", "El importe llega el viernes."),  # dropped
    ("zh", "ko", "包裹将于 12月3日 送达", "12月3日", "12월 3일",
     "소포는 12월 3일에 배달됩니다.", "소포는 12월 4일에 배달됩니다."),  # the wrong day
]
IDS = [f"{s}-{t}" for s, t, *_ in ISSUE]


def _translator(engine: EngineDouble, **overrides: object) -> Translator:
    settings = engine.settings(**overrides)
    return Translator(settings, ModelClient(settings), Policy(deadline=settings.deadline))


def scripted(answers: Mapping[str, list[str]]) -> Callable[[str], str]:
    """An answer function: for each text the model is sent, its answers in turn (the last
    again once they run out); a text it was not given fails the request (HTTP 500)."""
    calls: Counter[str] = Counter()

    def answer(prompt: str) -> str:
        text = source_text(prompt)
        calls[text] += 1
        script = answers[text]
        return script[min(calls[text], len(script)) - 1]

    return answer


@pytest.mark.parametrize("right", [True, False], ids=["right", "wrong"])
@pytest.mark.parametrize(("source", "target", "text", "value", "written", "good", "bad"), ISSUE,
                         ids=IDS)
async def test_a_value_comes_back_in_the_targets_format_or_is_flagged(
        engine: EngineDouble, source, target, text, value, written, good, bad, right):
    sent = text.replace(value, "[1]") if "[1]" in good else text  # amounts go masked
    engine.answer = scripted({sent: [good if right else bad]})
    result = await _translator(engine).translate(text, target, source)
    # What the user is shown is what the checks say of the text shown: nothing hidden.
    assert result.warnings == check_translation(text, result.text, source, target), result
    (original,) = [v for v in extract_values(text, [source]) if v.text == value]
    agrees = any(original.agrees(v) for v in extract_values(result.text, [target, source]))
    flagged = [w for w in result.warnings if value in w.message]
    if right:  # the value back in the target's format, nothing to say, one call
        assert written in result.text and agrees and not result.warnings, result
        assert len(engine.requests) == 1
    else:  # the wrong value is named to the user, after one more try
        assert flagged and not agrees, result
        assert len(engine.requests) == 2


async def test_every_failed_check_is_repaired_or_flagged_and_counted(engine: EngineDouble):
    """Two answers right on the second try (repaired), two wrong both times (flagged); the
    values unmasked, so that the model is sent every one of them."""
    repaired_rows, flagged_rows = [ISSUE[1], ISSUE[3]], [ISSUE[0], ISSUE[2]]  # no amounts
    answers = {text: [bad, good] for _, _, text, _, _, good, bad in repaired_rows}
    answers |= {text: [bad] for _, _, text, _, _, _, bad in flagged_rows}
    engine.answer = scripted(answers)
    metrics = Metrics()
    events: list[CheckEvent] = []
    translator = _translator(engine, mask_values=False)  # the model sees every value
    translator.check_hooks.add(events.append)
    metrics.attach_checks(translator, None)
    results = [await translator.translate(text, target, source)
               for source, target, text, *_ in ISSUE]
    failed = [e.kind for e in events if e.outcome == "failed"]
    repaired = [e.kind for e in events if e.outcome == "repaired"]
    flagged = [e.kind for e in events if e.outcome == "flagged"]
    assert flagged == [w.kind for r in results for w in r.warnings] == ["amount", "amount"]
    assert repaired == ["date", "date"]
    for kind in set(failed):  # each kind that failed was fixed by the retry or shown
        assert kind in repaired or kind in flagged, (kind, events)
    assert [bool(r.warnings) for r in results] == [True, False, True, False]
    body = metrics.render()[0].decode()
    assert 'hymt_checks_total{kind="amount",outcome="flagged"} 2.0' in body
    assert 'hymt_checks_total{kind="date",outcome="repaired"} 2.0' in body
    assert "259 元" in engine.requests[0].prompt  # unmasked: the value as written


async def test_masked_values_reach_the_model_as_placeholders(engine: EngineDouble):
    engine.answer = scripted({"退款金额为 [1]，订单 JD123456789":
                              ["The refund amount is [1], order JD123456789."]})
    result = await _translator(engine).translate("退款金额为 259 元，订单 JD123456789", "en", "zh")
    # What the engine was sent: the amount as a placeholder, the order number as written.
    assert source_text(engine.requests[0].prompt) == "退款金额为 [1]，订单 JD123456789"
    assert result.text == "The refund amount is CN¥259, order JD123456789."
    assert result.warnings == ()


async def test_the_retry_seed_reaches_the_engine(engine: EngineDouble):
    """A failed check asks again with a sampling seed, in the request body the engine gets
    (vLLM's ``seed``); the first try sends none. The client sends a seed it is given."""
    _, target, text, _, _, good, bad = ISSUE[1]
    engine.answer = scripted({text: [bad, good]})
    result = await _translator(engine).translate(text, target, "en")
    assert not result.warnings
    first, again = engine.requests
    assert "seed" not in first.body and isinstance(again.body["seed"], int)
    client = ModelClient(engine.settings())
    await client.complete(f"Translate into Japanese.\n\n{text}", max_tokens=40,
                          temperature=1.0, seed=1234)
    await client.aclose()
    assert (engine.requests[-1].body["seed"], engine.requests[-1].body["temperature"]) == (1234,
                                                                                           1.0)
