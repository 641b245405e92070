"""Per-call timeouts sized from the measured decode rate, estimates of time left, halving."""

from __future__ import annotations

import pytest

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.pacing import DecodeRate, call_timeout, eta_seconds
from hymt_chat.engine.policy import PolicyEvent
from hymt_chat.modes.wording import describe_event, progress_label
from hymt_chat.settings import Settings
from hymt_chat.sidecar.capacity import engine_slots
from hymt_chat.sidecar.profiles import build_launch, get_profile
from hymt_chat.text.segments import halve_at_sentence


def test_a_long_segment_gets_a_longer_timeout_than_a_short_one() -> None:
    assert call_timeout(1000, 5.0, floor=30) == 400.0  # all of max_tokens at half the rate
    assert call_timeout(40, 5.0, floor=30) == 30  # the floor
    assert call_timeout(1000, 5.0, floor=30, stretch=2) == 800.0  # a retry waits longer


def test_the_decode_rate_is_measured_and_smoothed() -> None:
    rate = DecodeRate(initial=4.0, weight=0.5)
    assert rate.value == 4.0 and not rate.measured
    rate.observe(100, 10.0)
    assert rate.value == 10.0 and rate.measured
    rate.observe(200, 10.0)
    assert rate.value == 15.0
    rate.observe(3, 10.0)  # too short to say anything
    assert rate.value == 15.0


def test_the_client_sizes_timeouts_unless_one_is_fixed() -> None:
    sized = ModelClient(Settings(base_url="http://127.0.0.1:9/v1", timeout_floor=5))
    sized.decode_rate.observe(100, 1.0)  # 100 tokens/s
    assert sized.timeout_for(1000) == 20.0
    assert sized.timeout_for(10) == 5.0
    fixed = ModelClient(Settings(base_url="http://127.0.0.1:9/v1", request_timeout=7))
    assert fixed.timeout_for(1000) == 7 and fixed.timeout_for(1000, stretch=4) == 28


def test_time_left_from_the_pace_so_far() -> None:
    assert eta_seconds(0, 15, 10.0) is None
    assert eta_seconds(5, 15, 10.0) == 20.0
    assert eta_seconds(15, 15, 30.0) == 0.0
    assert progress_label(7, 15, 40.2) == "7 of 15 parts · about 40 s left"
    assert progress_label(7, 15, None) == "7 of 15 parts"
    assert progress_label(3, 15, 150) == "3 of 15 parts · about 2 min 30 s left"
    assert progress_label(15, 15, 0.0) == "15 of 15 parts"


def test_a_timeout_retry_is_described_to_the_user() -> None:
    assert describe_event(PolicyEvent("retrying", error="timeout")) == (
        "the model was slow — retrying with more time")
    assert describe_event(PolicyEvent("retrying", error="timeout (split)")) == (
        "the model was slow — retrying in two halves")


@pytest.mark.parametrize(("text", "halves"), [
    ("One. Two. Three. Four.", ("One. Two. ", "Three. Four.")),
    ("第一句。第二句。", ("第一句。", "第二句。")),
    ("Only one sentence here", None),
])
def test_halving_cuts_at_the_sentence_end_nearest_the_middle(text, halves) -> None:
    assert halve_at_sentence(text) == halves
    if halves:
        assert "".join(halves) == text


def test_the_window_is_the_engine_s_running_slots() -> None:
    assert engine_slots(Settings(base_url=None, profile="cpu")) == 4
    assert engine_slots(Settings(base_url=None, profile="cpu",
                                 vllm_args="--max-num-seqs 2 --max-num-queued-reqs 4")) == 2
    assert engine_slots(Settings(base_url=None, profile="a10", data_parallel_size=2)) == 32
    assert engine_slots(Settings(base_url="http://x/v1", profile="h200")) == 128
    assert engine_slots(Settings(base_url="http://x/v1")) == 2  # unknown: safe, then metrics
    assert engine_slots(Settings(base_url=None, profile="cpu", window_max=3)) == 3


def test_every_profile_asks_vllm_for_priority_scheduling() -> None:
    kwargs = dict(python="py", model="m", served_name="hymt", host="h", port=1, api_key=None,
                  cpu_flags=[])
    for name in ("cpu", "a10", "h200"):
        argv = build_launch(get_profile(name), **kwargs).argv  # type: ignore[arg-type]
        assert argv[argv.index("--scheduling-policy") + 1] == "priority"
    # vLLM 0.6.2 has no priority scheduling: the flag is dropped, not passed to be refused.
    older = build_launch(get_profile("a10"), vllm_version="0.6.2", **kwargs)  # type: ignore[arg-type]
    assert "--scheduling-policy" not in older.argv
    assert any(line.startswith("--scheduling-policy dropped") for line in older.dropped)
