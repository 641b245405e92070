#!/usr/bin/env python3
# GENERATED from plan_router's choices (hymt_chat/sidecar/router.py) by `hymt-chat compose-args --write`; do not edit.
# vllm-router with its API key from the environment or a mounted secret file, given to
# it inside the process: never on a command line, which `ps` and a pod's spec show.
import os
import runpy
import sys
from pathlib import Path

key = os.environ.pop("HYMT_ROUTER_API_KEY", "")
path = os.environ.pop("HYMT_ROUTER_API_KEY_FILE", "")
key = Path(path).read_text(encoding="utf-8").strip() if path else key
sys.argv[1:1] = [f"--api-key={key}"] if key else []
runpy.run_module("vllm_router.launch_router", run_name="__main__", alter_sys=True)
