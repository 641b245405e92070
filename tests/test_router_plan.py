"""The router's command line (no process: tests/test_e2e_scale.py runs the real one)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hymt_chat.errors import SidecarError
from hymt_chat.sidecar import deploy
from hymt_chat.sidecar.router import (
    KEY_FILE_VARIABLE,
    KEY_VARIABLE,
    key_launcher,
    launcher_lines,
    plan_router,
)
from tests.support.router_parse import parse_launched

ROOT = Path(__file__).resolve().parents[1]
VLLM_PYTHON = str(ROOT / ".venv-vllm" / "bin" / "python")


def test_the_router_lists_every_replica_with_short_health_checks() -> None:
    plan = plan_router(["http://127.0.0.1:8001/", "http://127.0.0.1:8002"],
                       vllm_python=VLLM_PYTHON, port=8000, metrics_port=29001, api_key="s3")
    argv = plan.spec.argv
    assert argv[:3] == [VLLM_PYTHON, "-c", key_launcher()]  # vllm-router, key from the env
    i = argv.index("--worker-urls")
    assert argv[i + 1:i + 3] == ["http://127.0.0.1:8001", "http://127.0.0.1:8002"]
    assert argv[argv.index("--policy") + 1] == "round_robin"  # not blind power_of_two
    assert argv[argv.index("--health-check-interval-secs") + 1] == "5"
    assert not [a for a in argv if "s3" in a] and plan.spec.env == {KEY_VARIABLE: "s3"}
    keyless = plan_router(["http://127.0.0.1:8001"], vllm_python=VLLM_PYTHON).spec.argv
    assert Path(keyless[0]).name == "vllm-router" and Path(keyless[0]).exists()
    assert argv[argv.index("--cb-failure-threshold") + 1] == "1"  # a dead replica: out at once
    assert plan.root == "http://127.0.0.1:8000" and plan.metrics_port == 29001


def test_one_replica_gets_round_robin_which_the_router_accepts_for_one() -> None:
    argv = plan_router(["http://a:1"], vllm_python=VLLM_PYTHON, policy="power_of_two").spec.argv
    assert argv[argv.index("--policy") + 1] == "round_robin"


@pytest.mark.parametrize(("workers", "policy", "said"), [
    ([], "power_of_two", "at least one"),
    (["http://a:1"], "fastest", "unknown router policy"),
])
def test_bad_plans_are_refused_with_the_reason(workers, policy, said) -> None:
    with pytest.raises(SidecarError, match=said):
        plan_router(workers, vllm_python=VLLM_PYTHON, policy=policy)


def test_a_missing_router_says_how_to_install_it(tmp_path) -> None:
    with pytest.raises(SidecarError, match="pip install vllm-router"):
        plan_router(["http://a:1"], vllm_python=str(tmp_path / "python"))


def test_a_key_that_begins_with_a_dash_reaches_the_router_whole() -> None:
    # secrets.token_urlsafe draws '-' first once in 64 keys: `--api-key -x…` made the router's
    # argparse stop with "expected one argument" (seen in a benchmark run of `up --replicas 2`).
    key = "-Kq3_generated-key"
    plan = plan_router(["http://127.0.0.1:8001"], vllm_python=VLLM_PYTHON, api_key=key)
    # The plan's own launcher and arguments, with vllm-router's parser in place of the router.
    assert plan.spec.argv[2] == key_launcher()
    assert plan.router_args()[1:] == plan.spec.argv[3:]
    assert parse_launched(plan.spec.argv[3:], plan.spec.env)["api_key"] == key


def test_the_launcher_reads_the_key_from_a_mounted_file_and_leaves_it_off_argv(tmp_path) -> None:
    # Kubernetes mounts the Secret's api-key as a file (with the newline `kubectl create
    # secret --from-file` keeps); the file wins over the variable, and neither is passed on.
    secret = tmp_path / "api-key"
    secret.write_text("-k3y-from-a-file\n")
    env = {KEY_FILE_VARIABLE: str(secret), KEY_VARIABLE: "other"}
    parsed = parse_launched(["--worker-urls", "http://127.0.0.1:8001"], env)
    assert parsed["api_key"] == "-k3y-from-a-file"


def test_the_image_ships_the_apps_own_launcher() -> None:
    launcher = (ROOT / deploy.ROUTER_LAUNCHER).read_text()
    assert launcher.startswith("#!/usr/bin/env python3")
    assert launcher.endswith("\n".join(launcher_lines()) + "\n")
    assert os.access(ROOT / deploy.ROUTER_LAUNCHER, os.X_OK)
