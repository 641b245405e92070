"""`hymt-chat serve-model`: the dry run for every profile, and refusals before anything starts."""

import shlex
import socket
import subprocess
import sys

import pytest

from hymt_chat.sidecar.profiles import PROFILES

ENTRY = [sys.executable, "-m", "hymt_chat.cli.main"]


def run(*args, env=None):
    return subprocess.run([*ENTRY, *args], capture_output=True, text=True, env=env, timeout=60)


def parse_line(line: str) -> tuple[dict[str, str], dict[str, str | None]]:
    tokens = shlex.split(line)
    env = {}
    while "=" in tokens[0] and not tokens[0].startswith("/"):
        k, v = tokens.pop(0).split("=", 1)
        env[k] = v
    assert tokens[1:3] == ["-m", "vllm.entrypoints.openai.api_server"]
    flags: dict[str, str | None] = {}
    rest = tokens[3:]
    for i, tok in enumerate(rest):
        if tok.startswith("--"):
            nxt = rest[i + 1] if i + 1 < len(rest) else None
            flags[tok] = None if nxt is None or nxt.startswith("--") else nxt
    return env, flags


@pytest.mark.parametrize("name", [*PROFILES, "l4"])
def test_dry_run_prints_the_full_command_flag_by_flag(name, tmp_path):
    result = run("serve-model", "--profile", name, "--model", "/m/Hunyuan-MT-7B", "--port", "8123",
                 "--dry-run")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1  # one shell-quoted line
    env, flags = parse_line(lines[0])
    profile = PROFILES["a10" if name == "l4" else name]
    for flag, value in profile.flags:
        if flag == "--dtype" and profile.device == "cpu":
            assert flags[flag] in ("float32", "bfloat16")
            continue
        assert flag in flags, flag
        assert flags[flag] == value, flag
    assert flags["--model"] == "/m/Hunyuan-MT-7B"
    assert flags["--port"] == "8123"
    assert flags["--host"] == "127.0.0.1"  # never exposed by default
    assert "--api-key" not in flags  # never in argv, where `ps` shows it to every local user
    assert len(env.pop("VLLM_API_KEY")) >= 24  # generated
    assert flags["--served-model-name"] == "hymt"
    assert env == dict(profile.env)


def test_dry_run_applies_overrides_from_settings():
    env = {"HYMT_VLLM_ARGS": "--max-num-seqs 3 --no-enforce-eager", "PATH": "/usr/bin"}
    result = run("serve-model", "--profile", "a10", "--model", "/m", "--dry-run", env=env)
    _, flags = parse_line(result.stdout)
    assert flags["--max-num-seqs"] == "3" and "--enforce-eager" not in flags


def test_unknown_profile_is_one_sentence_and_nonzero():
    result = run("serve-model", "--profile", "gtx480", "--dry-run")
    assert result.returncode == 4
    assert "Unknown profile 'gtx480'" in result.stderr and "Traceback" not in result.stderr


def test_missing_vllm_environment(tmp_path):
    env = {"HYMT_VLLM_PYTHON": str(tmp_path / "nope" / "python"), "PATH": "/usr/bin"}
    result = run("serve-model", "--profile", "cpu", "--model", str(tmp_path), env=env)
    assert result.returncode == 4
    assert "vLLM environment is missing" in result.stderr


def test_missing_model_folder(tmp_path):
    env = {"HYMT_VLLM_PYTHON": sys.executable, "PATH": "/usr/bin"}
    result = run("serve-model", "--profile", "cpu", "--model", str(tmp_path / "absent"), env=env)
    assert result.returncode == 4
    assert "does not exist" in result.stderr and "Traceback" not in result.stderr


def test_port_taken(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        env = {"HYMT_VLLM_PYTHON": sys.executable, "PATH": "/usr/bin"}
        result = run("serve-model", "--profile", "cpu", "--model", str(tmp_path),
                     "--port", str(port), env=env)
    assert result.returncode == 4
    assert f"Port {port}" in result.stderr and "already in use" in result.stderr
