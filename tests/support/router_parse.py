"""What a vllm-router command line means to vllm-router 0.1.17's own parser
(tests/support/router_args.py, run by the sidecar's Python, where vllm-router lives): the
deployed routers' flags and plan_router's are compared through it, without a cluster."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from hymt_chat.sidecar.router import key_launcher

__all__ = ["VLLM_PYTHON", "parse_launched", "parse_router"]

_SUPPORT = Path(__file__).resolve().parent
VLLM_PYTHON = _SUPPORT.parents[1] / ".venv-vllm" / "bin" / "python"


def _parsed(line: list[str], env: Mapping[str, str] | None = None) -> dict:
    done = subprocess.run(line, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def parse_router(argv: list[str]) -> dict:
    """*argv* as vllm-router's launcher reads and validates it."""
    return _parsed([str(VLLM_PYTHON), str(_SUPPORT / "router_args.py"), *argv])


def parse_launched(argv: list[str], env: Mapping[str, str]) -> dict:
    """*argv* as the app's key launcher (``key_launcher``, the image's ``hymt-router``) hands
    it on, with *env* its only variables besides ``PATH`` (the key, or the key file), read by
    vllm-router's parser in place of the router."""
    return _parsed([str(VLLM_PYTHON), "-c", key_launcher("router_args"), *argv],
                   {"PATH": os.environ["PATH"], **env, "PYTHONPATH": str(_SUPPORT)})
