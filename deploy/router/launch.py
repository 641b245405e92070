#!/usr/bin/env python3
# GENERATED from plan_router's choices (hymt_chat/sidecar/router.py) by `hymt-chat compose-args --write`; do not edit.
# vllm-router with its API key from the environment or a mounted secret file, given to
# it inside the process: never on a command line, which `ps` and a pod's spec show.
import os, runpy, sys
path = os.environ.pop('HYMT_ROUTER_API_KEY_FILE', '')
key = os.environ.pop('HYMT_ROUTER_API_KEY', '')
if path:
    with open(path, encoding='utf-8') as secret:
        key = secret.read().strip()
if key:
    sys.argv[1:1] = ['--api-key=' + key]
runpy.run_module('vllm_router.launch_router', run_name='__main__', alter_sys=True)
