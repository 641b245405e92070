"""One planner of profile and model (sidecar.launch.choose): the launcher, the doctor and the
window sizing decide the same profile, model and flags from the same settings."""

from __future__ import annotations

import pytest

from hymt_chat.settings import Settings
from hymt_chat.sidecar import doctor
from hymt_chat.sidecar.capacity import engine_slots
from hymt_chat.sidecar.launch import DEFAULT_GPU_MODEL, choose, plan_launch


def _gpu(gib: float) -> doctor.Gpu:
    return doctor.Gpu("card", gib * 1024, gib * 1024, "8.6")


@pytest.mark.parametrize(("gib", "profile"), [(None, "cpu"), (24.0, "a10"), (80.0, "h100")])
def test_auto_is_resolved_the_same_by_the_launcher_and_the_doctor(gib, profile, tmp_path):
    settings = Settings(profile="auto", cache_dir=tmp_path, model_path=None)
    choice = choose(settings, gpu_memory=lambda: gib)
    plan = doctor.plan_for(settings, None, [_gpu(gib)] if gib else [])
    assert choice.profile.name == plan.profile.name == profile
    assert (choice.model, choice.is_demo) == (plan.model, plan.is_demo)
    assert choice.flags == plan.flags
    if profile == "cpu":
        assert (choice.model, choice.is_demo) == (str(settings.demo_model_dir), True)
    else:
        assert (choice.model, choice.is_demo) == (DEFAULT_GPU_MODEL, False)


def test_overrides_reach_the_doctor_the_window_and_the_command_line(tmp_path):
    settings = Settings(profile="a10", vllm_args="--max-num-seqs 3", cache_dir=tmp_path,
                        model_path="org/model", window_max=None, base_url=None)
    choice = choose(settings)
    assert dict(choice.flags)["--max-num-seqs"] == "3"
    assert doctor.plan_for(settings, None, [_gpu(24.0)]).flags == choice.flags
    assert engine_slots(settings) == 3
    launch = plan_launch(settings, check=False)
    argv = launch.spec.argv
    assert argv[argv.index("--max-num-seqs") + 1] == "3"
    assert (launch.profile, launch.model, launch.is_demo) == (choice.profile, "org/model", False)


def test_an_explicit_profile_and_model_win(tmp_path):
    settings = Settings(profile="auto", cache_dir=tmp_path, model_path="/weights/a")
    choice = choose(settings, profile="a100-40g", model="/weights/b", gpu_memory=lambda: 24.0)
    assert (choice.requested, choice.profile.name, choice.model) == ("a100-40g", "a100-40g", "/weights/b")
    assert choose(settings, gpu_memory=lambda: 24.0).model == "/weights/a"
