"""Several GPUs on one host: tensor and data parallel sizes, from settings to vLLM's flags."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings
from hymt_chat.sidecar import deploy
from hymt_chat.sidecar.profiles import build_launch, get_profile, parallel_flags, parse_flags


def _argv(**kw):
    defaults = dict(python="/py", model="tencent/Hunyuan-MT-7B", served_name="hymt",
                    host="127.0.0.1", port=8021, api_key="k")
    return build_launch(get_profile("a10"), **{**defaults, **kw}).argv


def test_one_gpu_adds_no_flag():
    assert parallel_flags() == ()
    argv = _argv()
    assert "--tensor-parallel-size" not in argv and "--data-parallel-size" not in argv
    assert _argv(tensor_parallel_size=1, data_parallel_size=1) == argv


def test_sizes_above_one_become_vllm_flags():
    flags = dict(parse_flags(_argv(tensor_parallel_size=2, data_parallel_size=4)[3:]))
    assert flags["--tensor-parallel-size"] == "2" and flags["--data-parallel-size"] == "4"
    assert dict(parse_flags(_argv(data_parallel_size=2)[3:]))["--data-parallel-size"] == "2"


def test_overrides_still_win():
    argv = _argv(tensor_parallel_size=2, overrides="--tensor-parallel-size 4")
    assert argv.count("--tensor-parallel-size") == 1
    assert argv[argv.index("--tensor-parallel-size") + 1] == "4"


def test_sizes_below_one_are_refused():
    with pytest.raises(SidecarError, match="at least 1"):
        parallel_flags(0, 1)


def test_settings_read_the_sizes(monkeypatch):
    monkeypatch.setenv("HYMT_TENSOR_PARALLEL_SIZE", "2")
    monkeypatch.setenv("HYMT_DATA_PARALLEL_SIZE", "3")
    settings = Settings()
    assert (settings.tensor_parallel_size, settings.data_parallel_size) == (2, 3)
    monkeypatch.setenv("HYMT_DATA_PARALLEL_SIZE", "0")
    with pytest.raises(ValidationError):
        Settings()


def test_deployment_files_expose_both_sizes():
    assert "${HYMT_TENSOR_PARALLEL_SIZE:-1}" in deploy.compose_args("a10")
    assert "${HYMT_DATA_PARALLEL_SIZE:-1}" in deploy.compose_args("a10")
    k8s = dict(parse_flags(deploy.k8s_args("a10")))
    assert (k8s["--tensor-parallel-size"], k8s["--data-parallel-size"]) == ("1", "1")
