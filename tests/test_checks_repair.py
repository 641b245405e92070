"""Prevent, repair once, else flag: masking, the one retry, Translation.warnings, /metrics,
and what the chat shows.

The model here is scripted: these tests need a *wrong* answer on demand (a changed amount,
a dropped placeholder), which the real model does not give when asked. The same path on the
real demo model is tests/test_e2e_checks.py.
"""

from __future__ import annotations

import pytest

from hymt_chat.cli import main as cli
from hymt_chat.engine.client import ModelClients
from hymt_chat.engine.fidelity import CheckEvent, translate_checked
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translation, Translator
from hymt_chat.errors import IncompleteTranslationError, ModelBusyError
from hymt_chat.modes.agent.conversation import Conversation
from hymt_chat.modes.agent.turns import handle_agent_message, turn_markdown
from hymt_chat.modes.warnings import warnings_markdown
from hymt_chat.service.loop_watch import LoopWatch
from hymt_chat.service.metrics import Metrics
from hymt_chat.settings import Settings
from hymt_chat.text import values
from hymt_chat.text.checks import Finding
from hymt_chat.text.masking import ALL_KINDS, mask_values
from hymt_chat.text.protect import unmask


class Answers:
    """Answers in turn from a list (the last one again when it runs out); records each call."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, int | None]] = []

    async def __call__(self, text: str, seed: int | None) -> str:
        self.calls.append((text, seed))
        return self.answers[min(len(self.calls), len(self.answers)) - 1]


# --- masking -----------------------------------------------------------------------------------


def test_by_default_amounts_are_masked_and_dates_and_times_are_not():
    masked = mask_values("退款金额为 259 元，3月12日下午3点前到账", "zh", "en")
    assert masked.text == "退款金额为 [1]，3月12日下午3点前到账"
    assert [s.restore for s in masked.spans] == ["CN¥259"]


def test_values_are_masked_and_come_back_in_the_targets_format():
    masked = mask_values("退款金额为 259 元，3月12日下午3点前到账", "zh", "en", ALL_KINDS)
    assert masked.text == "退款金额为 [1]，[2][3]前到账"
    assert [s.restore for s in masked.spans] == ["CN¥259", "March 12", "3:00\u202fPM"]
    assert unmask("A refund of [1] arrives before [3] on [2].", masked).text == (
        "A refund of CN¥259 arrives before 3:00\u202fPM on March 12.")


def test_order_numbers_stay_as_written_and_our_own_placeholders_are_masked_with_values():
    masked = mask_values("Order JD123456789 [1]: €1,234.50 on 12/03/2026", "en", "de", ALL_KINDS)
    assert masked.text == "Order JD123456789 [1]: [2] on [3]"
    assert [(s.kind, s.original, s.restore) for s in masked.spans] == [
        ("literal", "[1]", "[1]"), ("amount", "€1,234.50", "1.234,50\xa0€"),
        ("date", "12/03/2026", "12/03/2026")]  # day or month first: kept as written
    assert unmask("Bestellung JD123456789 [1]: [2] am [3]", masked).text == (
        "Bestellung JD123456789 [1]: 1.234,50\xa0€ am 12/03/2026")


def test_nothing_to_mask_leaves_the_text_alone():
    assert mask_values("Order JD123456789 [1] is late.", "en", "de").spans == ()


def test_small_bare_numbers_and_durations_are_not_masked():
    masked = mask_values("3 items in 2 boxes, within 3 business days", "en", "fr", ALL_KINDS)
    assert masked.spans == ()


# --- repair once, else flag ----------------------------------------------------------------------


async def test_a_right_first_answer_is_one_call_and_no_findings():
    call = Answers("The refund of [1] arrives tomorrow.")
    checked = await translate_checked("退款 259 元明天到账", "zh", "en", call)
    assert checked.text == "The refund of CN¥259 arrives tomorrow."
    assert checked.findings == () and checked.calls == 1 and call.calls[0][1] is None


async def test_a_failed_check_is_retried_once_with_another_seed_and_the_better_answer_wins():
    call = Answers("The refund arrives tomorrow.", "The refund of [1] arrives tomorrow.")
    checked = await translate_checked("退款 259 元明天到账", "zh", "en", call)
    assert checked.text == "The refund of CN¥259 arrives tomorrow." and checked.findings == ()
    assert [f.kind for f in checked.first] == ["amount"] and checked.calls == 2
    assert call.calls[1][0] == call.calls[0][0] and isinstance(call.calls[1][1], int)


async def test_still_wrong_after_the_retry_is_flagged_never_hidden():
    call = Answers("Refund: $259, tomorrow.")
    checked = await translate_checked("退款 259 元明天到账", "zh", "en", call, mask=False)
    assert len(call.calls) == 2
    assert checked.findings == (Finding("amount", "The amount 259 元 may be wrong in this "
                                        "translation (it says $259).", "259 元", "$259"),)


async def test_a_worse_retry_does_not_replace_the_first_answer():
    call = Answers("It arrives on Friday, 12 May.", "It arrives on Thursday, 3 May.")
    checked = await translate_checked("Es kommt am Freitag, 12. März.", "de", "en", call,
                                      mask=False)
    assert checked.text == "It arrives on Friday, 12 May."
    assert [f.kind for f in checked.findings] == ["date"]


async def test_no_retry_when_repair_is_off():
    call = Answers("Refund: $259.")
    checked = await translate_checked("退款 259 元", "zh", "en", call, mask=False, repair=False)
    assert len(call.calls) == 1 and [f.kind for f in checked.findings] == ["amount"]


async def test_nothing_but_values_needs_no_model_call():
    call = Answers("never")
    checked = await translate_checked("259 元", "zh", "en", call)
    assert checked.text == "CN¥259" and checked.calls == 0 and call.calls == []


async def test_a_language_pairs_first_segment_does_not_hold_the_event_loop():
    """A pair's value patterns take 1-2 s of CPU to build (every month, weekday and currency
    name of both languages): built on the loop, every tab's socket waited that long. They are
    built in a thread. Judged by the app's own loop watch (the loop thread's CPU time caps each
    stall, so a busy host does not read as one), and by the patterns being there afterwards."""
    values._PATTERNS.clear()  # a process that has not met the pair yet
    assert not values.values_ready("de", "ja")
    stalls: list[float] = []
    watch = LoopWatch(stalls.append, interval=0.01)
    watch.start()
    try:
        done = await translate_checked("Das Paket kostet 25 € am 3. Mai.", "de", "ja",
                                       Answers("荷物は5月3日に[1]です。"))
    finally:
        watch.stop()
    assert done.calls == 1 and done.text == "荷物は5月3日に€25です。" and not done.findings
    assert values.values_ready("de", "ja")
    assert stalls and max(stalls) < 0.1, f"the loop was held {max(stalls):.2f} s"


async def test_every_check_event_reaches_the_hooks():
    events: list[CheckEvent] = []
    call = Answers("The refund arrives.", "The refund of [1] arrives.")
    await translate_checked("退款 259 元到账", "zh", "en", call, on_event=events.append)
    assert [(e.outcome, e.kind) for e in events] == [
        ("masked", "amount"), ("failed", "amount"), ("repaired", "amount")]


# --- the translator -------------------------------------------------------------------------------


class Script:
    """A model client that answers from a list per call and records each prompt and seed."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.seeds: list[int | None] = []

    async def complete(self, prompt, *, max_tokens, seed=None, **_request):
        self.prompts.append(prompt)
        self.seeds.append(seed)
        return [self.answers[min(len(self.prompts), len(self.answers)) - 1]]


def _translator(client: Script, **settings: object) -> Translator:
    config = Settings(base_url="http://127.0.0.1:9/v1", retries=False, **settings)  # type: ignore[arg-type]
    return Translator(config, client, Policy(retries=False))  # type: ignore[arg-type]


async def test_the_translator_masks_repairs_and_attaches_what_is_left_as_warnings():
    client = Script("The parcel arrives on Thursday.", "The parcel arrives on Thursday.")
    result = await _translator(client).translate("Das Paket kommt am Freitag.", "en", "de")
    assert len(client.prompts) == 2 and client.seeds[0] is None and client.seeds[1] is not None
    assert [(w.kind, w.message) for w in result.warnings] == [
        ("weekday", "The weekday Freitag may be wrong in this translation (it says Thursday).")]


async def test_a_clean_translation_has_no_warnings_and_one_call():
    client = Script("Your refund of [1] arrives on March 12.")
    result = await _translator(client).translate("Su reembolso de 45,50 € llega el 12 de marzo.",
                                                 "en", "es")
    assert result.text == "Your refund of €45.50 arrives on March 12."
    assert result.warnings == () and len(client.prompts) == 1
    assert "45,50" not in client.prompts[0] and "[1]" in client.prompts[0]


async def test_masking_off_sends_the_values_as_written():
    client = Script("Your refund of €45.50 arrives on March 12.")
    result = await _translator(client, mask_values=False).translate(
        "Su reembolso de 45,50 € llega el 12 de marzo.", "en", "es")
    assert "45,50 €" in client.prompts[0] and result.warnings == ()


async def test_checks_off_means_one_call_and_no_warnings():
    client = Script("The parcel arrives on Thursday.")
    result = await _translator(client, checks=False).translate("Das Paket kommt am Freitag.",
                                                               "en", "de")
    assert len(client.prompts) == 1 and result.warnings == ()


def test_existing_constructor_calls_get_empty_warnings():
    assert Translation("Hello", "zh", "en", True, False, 1, 0.8).warnings == ()


# --- /metrics -----------------------------------------------------------------------------------


async def test_metrics_count_failed_repaired_and_flagged_by_kind():
    metrics = Metrics()
    for translator, text, source in (
            (_translator(Script("The parcel arrives on Thursday.")), "Das Paket kommt am Freitag.",
             "de"),
            (_translator(Script("Refund arrives.", "Refund of [1] arrives.")), "退款 259 元到账",
             "zh")):
        metrics.attach_checks(translator, None)
        await translator.translate(text, "en", source)
    body = metrics.render()[0].decode()
    assert 'hymt_checks_total{kind="weekday",outcome="failed"} 1.0' in body
    assert 'hymt_checks_total{kind="weekday",outcome="flagged"} 1.0' in body
    assert 'hymt_checks_total{kind="amount",outcome="failed"} 1.0' in body
    assert 'hymt_checks_total{kind="amount",outcome="repaired"} 1.0' in body
    assert 'hymt_values_masked_total{kind="amount"} 1.0' in body
    assert 'hymt_checks_total{kind="amount",outcome="flagged"}' not in body


# --- what the chat shows ---------------------------------------------------------------------------


def test_warnings_render_as_escaped_markdown_lines_once_each():
    finding = Finding("amount", "The amount 259 元 may be wrong in this translation (it says $259).")
    text = warnings_markdown([finding, finding, "The translation lost 'JD1234'."])
    assert text.splitlines() == [
        r"- ⚠ The amount 259 元 may be wrong in this translation \(it says \$259\)\.",
        r"- ⚠ The translation lost \'JD1234\'\.",
    ]
    assert warnings_markdown([]) == ""


@pytest.mark.parametrize("side_text", ["Das Paket kommt am Freitag."])
async def test_the_agent_mode_shows_the_translators_findings_next_to_the_turn(side_text):
    client = Script("The parcel arrives on Thursday.")
    conv = Conversation("en", "de")
    result = await handle_agent_message(conv, side_text, _translator(client))
    assert "The weekday Freitag may be wrong in this translation (it says Thursday)." in (
        result.warnings)
    assert r"The weekday Freitag may be wrong" in turn_markdown(result)


def test_what_is_masked_is_a_setting_and_unknown_kinds_are_refused():
    assert Settings(mask_kinds="amount, time").masked_kinds == {"amount", "time"}
    with pytest.raises(ValueError, match="unknown weekday"):
        Settings(mask_kinds="amount,weekday")


async def test_the_translator_masks_the_kinds_the_settings_name():
    client = Script("Delivery at [1].")
    result = await _translator(client, mask_kinds="time").translate("Lieferung um 9:00 Uhr.",
                                                                   "en", "de")
    assert "[1]" in client.prompts[0] and "9:00" not in client.prompts[0]
    assert result.text == "Delivery at 9:00."


# --- what survives Retry the rest, and what the command line says ----------------------------------


class Lines:
    """Answers per source line: "Thursday" for Freitag (a wrong weekday), else a failure once."""

    def __init__(self) -> None:
        self.fail_once = {"Zeile zwei kommt morgen."}

    async def complete(self, prompt, *, max_tokens, source="", seed=None, **_request):
        if source in self.fail_once:
            self.fail_once.clear()
            raise ModelBusyError("busy")
        return ["It comes on Thursday." if "Freitag" in source else "Line two comes tomorrow."]


async def test_findings_of_the_parts_done_survive_retry_the_rest():
    translator = _translator(Lines(), bulk_segments=100)  # type: ignore[arg-type]
    with pytest.raises(IncompleteTranslationError) as info:
        await translator.translate("Es kommt am Freitag.\nZeile zwei kommt morgen.", "en", "de")
    result = await translator.translate_rest(info.value.partial)
    assert [w.kind for w in result.warnings] == ["weekday"]


def test_the_cli_prints_the_translation_and_the_warnings_apart(monkeypatch, capsys):
    client = Script("The parcel arrives on Thursday.")
    monkeypatch.setattr(ModelClients, "current", lambda self: client)
    code = cli.main(["translate", "--to", "en", "--from", "de", "--base-url",
                     "http://127.0.0.1:9/v1", "Das Paket kommt am Freitag."])
    out, err = capsys.readouterr()
    assert code == 0 and out == "The parcel arrives on Thursday.\n"
    assert "hymt-chat: warning: The weekday Freitag may be wrong in this translation" in err
