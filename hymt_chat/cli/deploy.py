"""`hymt-chat doctor` and `hymt-chat compose-args`: the deployment commands."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from hymt_chat.cli.words import say
from hymt_chat.settings import PROJECT_DIR, Settings


def cmd_doctor(args: argparse.Namespace) -> int:
    from hymt_chat.service.health import probe_model
    from hymt_chat.sidecar import doctor
    from hymt_chat.sidecar.endpoint import resolve_endpoint

    settings = Settings()
    gpu_reading = doctor.read_gpus()
    plan = doctor.plan_for(settings, args.profile, gpu_reading[0])
    readings = doctor.read_host(settings, plan.model, gpu_reading=gpu_reading)
    checks = doctor.host_checks(readings, plan)
    if not args.no_probe:
        state = asyncio.run(probe_model(settings, timeout=3.0)).state
        checks.append(doctor.check_model_server(state, resolve_endpoint(settings).root))
    for check in checks:
        print(check.line())
    log_lines: list[doctor.Check] = []
    if args.log:
        try:
            text = doctor.read_log(args.log)
        except OSError as err:
            reason = err.strerror or str(err)
            print(f"hymt-chat: {say('cli_log_unreadable', file=args.log, reason=reason)}",
                  file=sys.stderr)
            return 2
        log_lines = doctor.log_checks(text, "stdin" if args.log == "-" else args.log)
        for check in log_lines:
            print(check.line())
    else:
        default = settings.cache_dir / "logs" / f"vllm-{settings.port}.log"
        print(f"  ({say('cli_no_log', file=str(default))})")
    return doctor.exit_code([*checks, *log_lines])


def _root(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    return PROJECT_DIR if (PROJECT_DIR / "compose.yaml").exists() else Path.cwd()


def cmd_compose_args(args: argparse.Namespace) -> int:
    from hymt_chat.sidecar import deploy

    if args.write or args.check:
        root = _root(args.root)
        if not (root / "compose.yaml").exists():
            print(f"hymt-chat: {say('cli_no_compose', folder=str(root))}", file=sys.stderr)
            return 2
        if args.check:
            stale = deploy.check_files(root)
            for path in stale:
                print(f"stale: {path} (run `hymt-chat compose-args --write`)")
            return 1 if stale else 0
        for path in deploy.write_files(root, args.k8s_profile):
            print(f"wrote {path}")
        return 0
    if args.k8s:
        for arg in deploy.k8s_args(args.profile):
            print(f"- {json.dumps(arg)}")
    else:
        print(deploy.compose_command_line(args.profile))
    return 0


def add_deploy_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "doctor", help="check this host (GPU, driver, memory, swap, limits, disk) and a vLLM log",
        description="One line per check: ✓ fine, ! should be fixed, ✗ will fail (with the "
                    "fix). Exit status 0 when nothing is ✗, 1 otherwise, 2 when the log is unreadable.",
    )
    p.add_argument("--profile", default=None,
                   help="profile to check for (default HYMT_PROFILE; auto: by the GPU found)")
    p.add_argument("--log", metavar="FILE", default=None,
                   help="a vLLM (or app) log to diagnose; '-' reads stdin")
    p.add_argument("--no-probe", action="store_true",
                   help="do not ask the model server for its /health")
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "compose-args", help="print a GPU profile's vLLM args for compose/k8s, or regenerate them",
        description="The vLLM flags of the deployment files come from the profile table, and "
                    "vllm-router's from plan_router's choices: this prints the vLLM ones, or "
                    "rewrites deploy/compose/<profile>.yaml, deploy/router/compose.yaml and the "
                    "args blocks of deploy/k8s/vllm.yaml and deploy/k8s/router.yaml (--write), "
                    "or checks those are current (--check).",
    )
    p.add_argument("--profile", default="a10", help="a10, l4, a100-40g, a100-80g, h100, h200")
    p.add_argument("--k8s", action="store_true", help="print a YAML args list for Kubernetes")
    p.add_argument("--write", action="store_true", help="regenerate the deployment files")
    p.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    p.add_argument("--k8s-profile", default=None,
                   help="with --write: render deploy/k8s/vllm.yaml for this profile")
    p.add_argument("--root", default=None,
                   help="project folder (default: the one with compose.yaml)")
    p.set_defaults(func=cmd_compose_args)
