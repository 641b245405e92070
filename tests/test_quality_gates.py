"""The quality gates of the test command: ruff and mypy, at the versions the test extra pins, with
the configuration in pyproject.toml ([tool.ruff], [tool.mypy]: strict on hymt_chat/engine, text,
lang and sidecar). A finding fails here with the tool's own report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing():
    proc = _run(str(BIN / "ruff"), "check", "--no-cache", ".")
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]


def test_mypy_finds_nothing():
    proc = _run(str(BIN / "mypy"), "--python-executable", sys.executable)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "Success: no issues found" in proc.stdout
