"""`hymt-chat serve-model` and `hymt-chat up`."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from hymt_chat.engine.families import Family, detect_family, get_family
from hymt_chat.errors import SidecarError
from hymt_chat.settings import PROJECT_DIR, Settings
from hymt_chat.sidecar.endpoint import state_file, write_state
from hymt_chat.sidecar.launch import Launch, plan_launch
from hymt_chat.sidecar.private import make_private
from hymt_chat.sidecar.supervisor import Supervisor


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, object] = {}
    if getattr(args, "port", None):
        overrides["port"] = args.port
    if getattr(args, "host", None):
        overrides["host"] = args.host
    return Settings(**overrides)  # type: ignore[arg-type]


def _say(message: str) -> None:
    print(f"hymt-chat: {message}", file=sys.stderr, flush=True)


class _Stop:
    """SIGINT/SIGTERM set an event (and stop a starting sidecar) instead of raising anywhere."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.supervisor: Supervisor | None = None
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)

    def _handle(self, *_: object) -> None:
        self.event.set()
        if self.supervisor is not None:
            self.supervisor.request_stop()


def _make_supervisor(settings: Settings, launch: Launch) -> Supervisor:
    def on_state(state: str) -> None:
        write_state(settings, launch.endpoint, os.getpid(), state=state,
                    vllm_pid=supervisor.pid, restarts=supervisor.restarts)
        if state in ("restarting", "ready") and supervisor.restarts:
            _say(f"vLLM is {state} (restarts so far: {supervisor.restarts})")

    supervisor = Supervisor(
        launch.spec, health_url=f"{launch.endpoint.root}/health", log_path=launch.log_path,
        on_state=on_state,
    )
    return supervisor


def _start_sidecar(settings: Settings, launch: Launch, stop: _Stop) -> Supervisor | None:
    """Start and wait until ready; None when a stop signal came first (all stopped)."""
    supervisor = _make_supervisor(settings, launch)
    stop.supervisor = supervisor
    if launch.is_demo:
        _say("serving the small DEMO model (Qwen2.5-Coder-0.5B), not Hunyuan-MT quality.")
    _say(f"starting vLLM ({launch.profile.name} profile); log: {launch.log_path}")
    last = [0.0]

    def progress(elapsed: float) -> None:
        if elapsed - last[0] >= 10:
            last[0] = elapsed
            _say(f"waiting for the model to load… {elapsed:.0f} s")

    try:
        supervisor.start(timeout=settings.startup_timeout, progress=progress)
    except SidecarError:
        if stop.event.is_set():
            return None
        raise
    _say(f"model ready at {launch.endpoint.base_url}")
    return supervisor


def _family_of(settings: Settings, model: str | None) -> Family | None:
    """The family the served model belongs to: HYMT_MODEL_FAMILY, else its name; None for a
    model of no family (the demo)."""
    model = model or settings.model_path
    detected = detect_family(model) if model else None
    if settings.model_family != "auto":
        family = get_family(settings.model_family)
        return detected if detected is not None and detected.name == family.name else family
    return detected


def generation_config(family: Family | None) -> dict[str, float | int] | None:
    """The family's sampling as vLLM's generation config (its defaults for every client)."""
    if family is None:
        return None
    sampling = family.sampling.as_dict()
    if "max_tokens" in sampling:
        sampling["max_new_tokens"] = sampling.pop("max_tokens")
    return sampling


def _plan(settings: Settings, args: argparse.Namespace, *, check: bool = True) -> Launch:
    family = _family_of(settings, args.model)
    launch = plan_launch(settings, profile=args.profile, model=args.model, check=check,
                         generation_config=generation_config(family))
    if family is not None:
        sampling = ", ".join(f"{k} {v}" for k, v in family.sampling.as_dict().items())
        _say(f"{family.title} {family.size.upper()}: its official prompts ({', '.join(family.kinds)}) "
             f"and sampling ({sampling})")
    return launch


def cmd_serve_model(args: argparse.Namespace) -> int:
    settings = _settings(args)
    launch = _plan(settings, args, check=not args.dry_run)
    if args.dry_run:
        print(launch.spec.shell_line())
        return 0
    make_private(settings.cache_dir)  # its log, its state file with the key
    stop = _Stop()
    try:
        supervisor = _start_sidecar(settings, launch, stop)
        if supervisor is None:
            return 0
        stop.event.wait()
        _say("stopping vLLM…")
        supervisor.stop()
        return 0
    finally:
        state_file(settings).unlink(missing_ok=True)


def cmd_up(args: argparse.Namespace) -> int:
    settings = _settings(args)
    make_private(settings.cache_dir)  # the app (its child) inherits the umask too
    stop = _Stop()
    env = dict(os.environ)
    supervisor: Supervisor | None = None
    if settings.base_url:
        _say(f"using the model server at {settings.base_url}")
    else:
        launch = _plan(settings, args)
        env.update(
            HYMT_BASE_URL=launch.endpoint.base_url,
            HYMT_API_KEY=launch.endpoint.api_key,
            HYMT_MODEL=settings.served_name,
            HYMT_DEMO_MODEL="1" if launch.is_demo else "0",
            # What HYMT_MODEL_FAMILY=auto reads before the first /v1/models answer.
            **({} if launch.is_demo else {"HYMT_MODEL_PATH": launch.model}),
            # The app reads the sidecar's state file (warming up / restarting) by port and cache.
            HYMT_PORT=str(settings.port),
            HYMT_CACHE_DIR=str(settings.cache_dir),
        )
        write_state(settings, launch.endpoint, os.getpid(), state="starting")
    # The page works while the model loads: start the app first, then the model.
    app = subprocess.Popen(
        [str(Path(sys.executable).with_name("chainlit")), "run", str(PROJECT_DIR / "app.py"),
         "--headless", "--host", args.app_host, "--port", str(args.app_port)],
        cwd=PROJECT_DIR, env=env, start_new_session=True,
    )
    _say(f"chat page: http://{args.app_host}:{args.app_port}")
    try:
        if not settings.base_url:
            supervisor = _start_sidecar(settings, launch, stop)
        while not stop.event.wait(0.5):
            if app.poll() is not None:
                _say(f"the chat app exited with code {app.returncode}")
                return app.returncode or 1
        return 0
    finally:
        _say("stopping…")
        if app.poll() is None:
            os.killpg(app.pid, signal.SIGTERM)
            try:
                app.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(app.pid, signal.SIGKILL)
        if supervisor is not None:
            supervisor.stop()
        if not settings.base_url:
            state_file(settings).unlink(missing_ok=True)


def cmd_sidecar_state(args: argparse.Namespace) -> int:
    path = state_file(_settings(args))
    print(path.read_text() if path.exists() else json.dumps({"state": "absent"}))
    return 0


def add_sidecar_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve-model", help="launch and supervise the vLLM sidecar")
    p.add_argument("--profile", default=None, help="a10, l4, a100-40g, a100-80g, h100, h200, cpu, auto")
    p.add_argument("--model", default=None, help="model folder or hub name")
    p.add_argument("--port", type=int, default=None)
    p.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    p.add_argument("--dry-run", action="store_true", help="print the command and exit")
    p.set_defaults(func=cmd_serve_model)

    p = sub.add_parser("up", help="start the model sidecar and the chat app")
    p.add_argument("--profile", default=None)
    p.add_argument("--model", default=None)
    p.add_argument("--port", type=int, default=None, help="model server port")
    p.add_argument("--app-host", default="127.0.0.1")
    p.add_argument("--app-port", type=int, default=8000)
    p.set_defaults(func=cmd_up)
