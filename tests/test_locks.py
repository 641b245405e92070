"""Installs that resolve the same way every time: each environment holds exactly its lock, and
each lock is what its inputs give (docs/dependencies.md).

scripts/setup.sh made this test's two environments from uv.lock and requirements/sidecar-*.txt;
tests/test_images.py checks the image against the same uv.lock. Installing twice from a lock
gives the same versions twice because the lock leaves pip nothing to choose: every package is
pinned with its hashes and installed with --no-deps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
VLLM_PYTHON = ROOT / ".venv-vllm" / "bin" / "python"
SEEDS = {"pip", "setuptools", "wheel"}  # what `python -m venv` puts in, outside any lock


def pins(text: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """name -> version of a hashed requirements list, for a Python whose markers are *env*."""
    out = {}
    joined = text.replace("\\\n", " ")
    for line in joined.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        req = Requirement(line.split(" --hash", 1)[0])
        if req.marker is None or req.marker.evaluate(env):
            (spec,) = req.specifier
            out[canonicalize_name(req.name)] = spec.version
    return out


def _less_seeds(installed: dict[str, str], lock: dict[str, str]) -> dict[str, str]:
    """*installed* without the venv's own seeds, unless the lock pins them too."""
    return {k: v for k, v in installed.items() if k not in SEEDS or k in lock}


def _exported(*extras: str) -> str:
    args = [a for extra in extras for a in ("--extra", extra)]
    return subprocess.run([str(BIN / "uv"), "export", "--frozen", "--no-emit-project",
                           "--no-header", "--format", "requirements-txt", *args],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout


def test_the_app_environment_is_exactly_uv_lock():
    installed = {canonicalize_name(d.metadata["Name"]): d.version
                 for d in metadata.distributions()}
    assert installed.pop("hymt-chat") == "0.1.0"  # the project itself, editable
    lock = pins(_exported("test", "bench"))
    assert _less_seeds(installed, lock) == lock


def test_the_sidecar_environment_is_exactly_its_lock():
    listing = subprocess.run(
        [str(VLLM_PYTHON), "-c", "import json, importlib.metadata as m; print(json.dumps("
         "{d.metadata['Name']: d.version for d in m.distributions()}))"],
        capture_output=True, text=True, check=True, cwd="/",  # not this checkout's egg-info
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}).stdout
    installed = {canonicalize_name(k): v for k, v in json.loads(listing).items()}
    lock = pins((ROOT / "requirements" / "sidecar-cpu.txt").read_text())
    assert _less_seeds(installed, lock) == lock
    # Left out on purpose (requirements/sidecar-overrides.txt): CUDA builds that break the CPU
    # torch's imports.
    assert not {"torchvision", "torchaudio", "torchcodec"} & set(lock)


def test_every_lock_is_what_its_inputs_give():
    """`make lock-check`: uv.lock against pyproject.toml, each requirements lock against its
    .in file (resolved again, the committed pins preferred: a stale lock shows as a diff)."""
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "lock.sh"), "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "UV": str(BIN / "uv")})
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_every_lock_pins_with_hashes():
    for lock in [*(ROOT / "requirements").glob("*.txt"), ROOT / "deploy/router/requirements.txt"]:
        if lock.name == "sidecar-overrides.txt":
            continue
        text = lock.read_text()
        entries = [line for line in text.splitlines() if line and line[0].isalnum()]
        assert entries, lock
        assert all("==" in line for line in entries), lock
        assert text.count("--hash=sha256:") >= len(entries), lock
