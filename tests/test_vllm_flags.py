"""The flag-version table (hymt_chat/sidecar/vllm_flags.py) and the command lines it fits, fed
to the installed vLLM's own argument parser: the CPU build here (0.32). On a GPU host the same
file runs against that vLLM (docs/results/gpu.md: 0.26 on the lent H200)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.profiles import PROFILES, build_launch, get_profile, parse_flags
from hymt_chat.sidecar.vllm_flags import (
    GPU_VLLM_RANGE,
    VLLM_FLAGS,
    fit_flags,
    installed_vllm,
    parse_version,
)

ROOT = Path(__file__).resolve().parent.parent
PARSER = ROOT / "tests" / "support" / "vllm_args.py"
# A valid value of each flag in the table (None: a switch).
SAMPLE: dict[str, str | None] = {
    "--model": "/models/Hunyuan-MT-7B", "--served-model-name": "hymt", "--host": "127.0.0.1",
    "--port": "8021", "--api-key": "k", "--dtype": "bfloat16", "--max-model-len": "4096",
    "--gpu-memory-utilization": "0.9", "--max-num-seqs": "8", "--max-num-batched-tokens": "2048",
    "--enforce-eager": None, "--kv-cache-dtype": "fp8", "--tensor-parallel-size": "2",
    "--data-parallel-size": "2", "--enable-prefix-caching": None, "--disable-log-stats": None,
    "--scheduling-policy": "priority", "--override-generation-config": '{"temperature": 0.7}',
    "--max-num-queued-reqs": "24",
}
GENERATION = {"temperature": 0.7, "top_p": 0.6, "top_k": 20, "repetition_penalty": 1.05}


def _launch(profile: str, version: str | None, model: str = "/models/Hunyuan-MT-7B", **kw):
    return build_launch(get_profile(profile), python="py", model=model, served_name="hymt",
                        host="127.0.0.1", port=8021, api_key="k", cpu_flags=["avx2"],
                        vllm_version=version, generation_config=GENERATION, **kw)


# Every kind of line the launcher writes: each profile, the other model sizes, FP8, parallel.
VARIANTS: dict[str, dict[str, object]] = {
    **{name: {"profile": name} for name in PROFILES},
    "a10, 1.8B": {"profile": "a10", "model": "/models/HY-MT1.5-1.8B"},
    "h200, 30B-A3B FP8": {"profile": "h200", "model": "/models/Hy-MT2-30B-A3B-FP8"},
    "h100, tp 2 x dp 2": {"profile": "h100", "tensor_parallel_size": 2, "data_parallel_size": 2},
}


def _line(variant: str, version: str | None) -> list[str]:
    kw = dict(VARIANTS[variant])
    return _launch(str(kw.pop("profile")), version, **kw).argv[3:]  # type: ignore[arg-type]


# --- the table, pure -------------------------------------------------------------------------

def test_a_flag_an_older_vllm_lacks_is_dropped_with_a_line_naming_it_and_the_loss():
    spec = _launch("h200", "0.26.0")
    assert "--max-num-queued-reqs" not in spec.argv
    assert spec.dropped == (
        "--max-num-queued-reqs dropped: vLLM 0.26.0 has no such flag (added in 0.29.0); lost: "
        + VLLM_FLAGS["--max-num-queued-reqs"].lost,)
    assert "--scheduling-policy" in spec.argv and "--override-generation-config" in spec.argv
    assert _launch("h200", "0.29.0").dropped == ()
    older = _launch("a10", "0.7.0")  # before --override-generation-config, before the queue cap
    assert sorted(line.split()[0] for line in older.dropped) == [
        "--max-num-queued-reqs", "--override-generation-config"]


def test_an_essential_flag_the_vllm_lacks_refuses_the_launch_naming_the_range():
    with pytest.raises(SidecarError, match=r"lacks --data-parallel-size \(added in 0\.8\.3\)"
                                           r".*" + re.escape(GPU_VLLM_RANGE)):
        _launch("h100", "0.8.2", data_parallel_size=2)
    assert "--data-parallel-size" in _launch("h100", "0.8.3", data_parallel_size=2).argv


def test_an_unknown_version_keeps_every_flag_and_flags_the_table_lacks_pass():
    assert _launch("h200", None).argv == _launch("h200", "0.32.0").argv
    assert _launch("h200", "dev").dropped == ()
    mine = (("--enable-log-requests", None), ("--max-num-queued-reqs", "4"))
    assert fit_flags(mine, "0.26.0").flags == (("--enable-log-requests", None),)


def test_versions_are_read_as_the_packages_write_them():
    assert parse_version("0.26.0+cu130") == (0, 26, 0)
    assert parse_version("0.10.1.1") == (0, 10, 1)
    assert parse_version("0.33") == (0, 33, 0)
    assert parse_version("") is None and parse_version("unknown") is None


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_flag_the_launcher_passes_has_its_version_in_the_table(variant):
    names = {name for name, _ in parse_flags(_line(variant, None))}
    assert names - set(VLLM_FLAGS) == set(), "add the flag's first vLLM release to VLLM_FLAGS"


def test_gpu_setup_installs_a_vllm_that_has_every_flag():
    gpu_input = (ROOT / "requirements" / "sidecar-gpu.in").read_text()  # setup.sh's GPU lock
    assert f"vllm[audio]{GPU_VLLM_RANGE}\n" in gpu_input  # [audio]: serve-speech's Whisper
    floor = parse_version(GPU_VLLM_RANGE.split(",")[0].lstrip(">="))
    assert floor is not None and floor >= max(s.since for s in VLLM_FLAGS.values())


# --- against the installed vLLM's parser ------------------------------------------------------

VLLM_PYTHON = Settings().vllm_python
VERSION = installed_vllm(VLLM_PYTHON)


def _parse(lines: list[list[str]]) -> list[dict]:
    out = subprocess.run([str(VLLM_PYTHON), str(PARSER)], input=json.dumps(lines),
                         capture_output=True, text=True, timeout=600, check=False)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def parsed() -> dict[str, dict]:
    """Every line below parsed in one vLLM process (its import takes seconds)."""
    assert VERSION, f"no vLLM found for {VLLM_PYTHON}: run `make setup`"
    lines = {f"profile {v}": _line(v, VERSION) for v in VARIANTS}
    lines |= {f"flag {name}": ["--model", "/models/m", name, *([] if value is None else [value])]
              for name, value in SAMPLE.items()}
    lines["flag --max-num-queued-reqz"] = ["--model", "/models/m", "--max-num-queued-reqz", "4"]
    return dict(zip(lines, _parse(list(lines.values())), strict=True))


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_profiles_line_fitted_to_the_installed_vllm_is_accepted_by_its_parser(parsed,
                                                                                  variant):
    result = parsed[f"profile {variant}"]
    assert result["ok"], result
    flags = dict(parse_flags(_line(variant, VERSION)))
    values = result["values"]
    assert values["max_num_seqs"] == int(flags["--max-num-seqs"])
    assert values["max_model_len"] == int(flags["--max-model-len"])
    assert values["served_model_name"] in ("hymt", ["hymt"])
    if "--scheduling-policy" in flags:
        assert values["scheduling_policy"] == "priority"


def test_the_table_says_which_flags_the_installed_vllm_has_as_its_parser_does(parsed):
    have = parse_version(VERSION or "")
    assert have is not None
    says = {name: have >= VLLM_FLAGS[name].since for name in SAMPLE}
    parser = {name: parsed[f"flag {name}"]["ok"] for name in SAMPLE}
    assert parser == says, {n: parsed[f"flag {n}"] for n in SAMPLE if parser[n] != says[n]}
    assert not parsed["flag --max-num-queued-reqz"]["ok"]  # the parser does refuse a typo
    assert "unrecognized arguments" in " ".join(parsed["flag --max-num-queued-reqz"]["error"])


def test_doctor_names_the_installed_vllm_and_what_it_lacks(tmp_path):
    from hymt_chat.sidecar import doctor

    def check(version: str | None, **settings: object):
        plan = doctor.plan_for(Settings(base_url=None, cache_dir=tmp_path, **settings), "a10", ())
        return doctor.check_vllm_version(version, plan)

    old = check("0.26.0")
    assert old is not None and old.status == "warn" and GPU_VLLM_RANGE in old.fix
    assert "vLLM 0.26.0 lacks" in old.detail and "--max-num-queued-reqs dropped" in old.detail
    new = check("0.32.0")
    assert new is not None and new.status == "ok" and "0.32.0" in new.detail
    refused = check("0.8.2", data_parallel_size=2)  # 2 replicas in one vLLM: not before 0.8.3
    assert refused is not None and refused.status == "fail"
    assert "lacks --data-parallel-size (added in 0.8.3)" in refused.detail
    assert check(None) is None  # no vLLM: check_vllm_env says so
    assert doctor.check_vllm_version("0.26.0", doctor.plan_for(
        Settings(base_url="http://gpu:8000/v1", cache_dir=tmp_path), "a10", ())) is None
