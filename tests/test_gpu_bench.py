"""``benchmarks/gpu.py``'s like-for-like verdict and its page: no ratio of unlike work, and a
run that dies mid-way leaves its table marked partial and its server stopped."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    module = importlib.import_module("gpu")
    yield module
    sys.modules.pop("gpu", None)


def side(per_s: float, *, tokens_per_call: float = 64.0, ok: int = 64, calls: int = 64,
         failed: list[object] | None = None) -> dict[str, Any]:
    return {"per_s": per_s, "tokens_per_call": tokens_per_call, "ok": ok, "model_calls": calls,
            "failed": failed or [], "p50_s": 0.5, "p95_s": 0.6, "cpu_ms_per_msg": 1.2,
            "worst_stall_ms": 4.0}


def test_like_work_gets_its_ratio(gpu: ModuleType) -> None:
    assert gpu.pair_verdict(side(95.0), side(100.0)) == {"ratio": 0.95, "refused": ""}


@pytest.mark.parametrize(("app", "raw", "said"), [
    ({"tokens_per_call": 48.5}, {}, "tokens per call differ: app 48.5, raw 64.0"),
    ({"calls": 96}, {}, "the app made 96 model calls for 64 messages"),
    ({}, {"failed": [503]}, "failures: app 0, raw 1"),
])
def test_unlike_work_gets_no_ratio_and_says_why(gpu: ModuleType, app: dict[str, Any],
                                               raw: dict[str, Any], said: str) -> None:
    verdict = gpu.pair_verdict(side(95.0, **app), side(100.0, **raw))
    assert verdict["ratio"] is None
    assert said in verdict["refused"]


def report(label: str, *, partial: bool = False, per_s: float = 95.0) -> dict[str, Any]:
    return {"label": label, "partial": partial, "date": "2026-12-06 17:00 UTC",
            "card": "NVIDIA H100", "vllm": "0.26.0", "load_average": [0.5],
            "command": f"python benchmarks/gpu.py {label} --tests pair",
            "tests": [{"test": "pair", "checks": False, "concurrency": 64,
                       "app": side(per_s), "raw": side(100.0), "ratio": per_s / 100.0,
                       "refused": ""}]}


def test_each_run_keeps_its_own_table_and_a_rerun_replaces_it(gpu: ModuleType,
                                                              tmp_path: Path) -> None:
    page = tmp_path / "gpu.md"
    page.write_text("# GPU benchmark\n\nProse kept.\n")
    gpu.write_pair_page(report("first"), page)
    gpu.write_pair_page(report("second"), page)
    gpu.write_pair_page(report("first", per_s=91.0), page)
    text = page.read_text()
    assert text.count("<!-- like-for-like first:") == 1
    assert text.index("**first**") < text.index("**second**") < text.index("Prose kept.")
    assert "| 91.0 |" in text and "| 95.0 |" in text  # first's rerun, second's table


def test_a_run_that_dies_leaves_a_partial_table_and_stops_its_server(
        gpu: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stopped: list[bool] = []

    class Server:
        def __init__(self, args: argparse.Namespace, cache: Path) -> None:
            pass

        def wait_ready(self, timeout: float) -> float:
            return 1.0

        def facts(self) -> dict[str, object]:
            return {}

        def stop(self) -> None:
            stopped.append(True)

    async def dies_after_one(args: argparse.Namespace, emit: Any) -> None:
        emit(report("x")["tests"][0])
        raise RuntimeError("the card went away")

    monkeypatch.setattr(gpu, "Sidecar", Server)
    monkeypatch.setattr(gpu, "measure", dies_after_one)
    page = tmp_path / "gpu.md"
    args = argparse.Namespace(label="dies", profile="h100", vllm_args="", model="m",
                              out=str(tmp_path / "out"), page=str(page),
                              cache=str(tmp_path / "cache"), ready_timeout=5.0)
    with pytest.raises(RuntimeError, match="the card went away"):
        gpu.run(args)
    assert stopped == [True]
    assert "**dies (partial: the run stopped here)**" in page.read_text()
    assert "| off | 64 | 95.0 | 100.0 |" in page.read_text()
    assert json.loads((tmp_path / "out" / "dies.json").read_text())["partial"] is True


def test_the_lead_benchmark_runs_the_app_and_raw_on_its_stepped_stand_in(tmp_path: Path) -> None:
    """``benchmarks/lead.py`` end to end at its smallest: the stand-in process, the app with
    two leads and raw on the same prompts, and the page with a ratio for each."""
    root = Path(__file__).resolve().parent.parent
    page = tmp_path / "lead.md"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "benchmarks")])}
    done = subprocess.run(
        [sys.executable, "benchmarks/lead.py", "--rounds", "1", "--per-user", "2", "--conc", "8",
         "--seqs", "4", "--tokens", "3", "--step-ms", "2", "--leads", "0,2", "--page", str(page)],
        cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    text = page.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| 8 |"))
    assert row.count("**") == 4, row  # a ratio for each lead: like work on both sides
    assert "4 sequences" in text and "`python benchmarks/lead.py --rounds 1" in text
