"""`hymt-chat serve-model`, `hymt-chat serve-speech` and `hymt-chat up`."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from hymt_chat.cli.apps import plan_apps
from hymt_chat.engine.families import DEFAULT_FAMILY, Family, detect_family, get_family
from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint, state_file, write_state
from hymt_chat.sidecar.fleet import Fleet, FleetPlan, plan_fleet
from hymt_chat.sidecar.launch import Launch, plan_launch
from hymt_chat.sidecar.private import make_private
from hymt_chat.sidecar.speech_server import plan_speech
from hymt_chat.sidecar.supervisor import Supervisor
from hymt_chat.sidecar.warm import WARM_TEXT, WarmUp, warm_up_for


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
    """SIGINT/SIGTERM set an event (and stop whatever is starting) instead of raising anywhere."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.runners: list[Runner] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._handle)

    def _handle(self, *_: object) -> None:
        self.event.set()
        for runner in self.runners:
            runner.request_stop()


class Runner(Protocol):
    """A Supervisor, or a Fleet of them (replicas and their router)."""

    def start(self, *, timeout: float, progress: Callable[[float], None] | None = None) -> None: ...
    def request_stop(self) -> None: ...
    def stop(self) -> None: ...


@dataclass
class Model:
    """The model server to start: one vLLM, or N replicas behind vllm-router."""

    launch: Launch  # the (first) replica's: profile, model, demo or not
    endpoint: Endpoint  # what the app talks to
    fleet: FleetPlan | None = None
    family: Family | None = None  # whose prompt and sampling warm each server up

    @property
    def replicas(self) -> int:
        return len(self.fleet.replicas) if self.fleet else 1

    def ports(self, settings: Settings) -> set[int]:
        """Every port it takes: the server's, or the fleet's (router, replicas, metrics)."""
        return set(self.fleet.ports) if self.fleet else {settings.port}

    def lines(self) -> list[str]:
        return self.fleet.shell_lines() if self.fleet else [self.launch.spec.shell_line()]

    def runner(self, settings: Settings) -> Runner:
        """Its supervisor(s), writing the sidecar's state file at every change."""
        if self.fleet is None:
            def on_state(state: str) -> None:
                write_state(settings, self.endpoint, os.getpid(), state=state,
                            vllm_pid=one.pid, restarts=one.restarts)
                if state in ("restarting", "ready") and one.restarts:
                    _say(f"vLLM is {state} (restarts so far: {one.restarts})")

            one = Supervisor(self.launch.spec, health_url=f"{self.endpoint.root}/health",
                             log_path=self.launch.log_path, on_state=on_state,
                             warm=warm_start(self.launch, self.family))
            return one

        # Each replica's own /metrics: the router forwards its /metrics to one replica, picked
        # like any request, so the app's window (engine/window.py) reads and adds up these.
        pages = [f"{launch.endpoint.root}/metrics" for launch in self.fleet.replicas]

        def on_fleet(state: str) -> None:
            write_state(settings, self.endpoint, os.getpid(), state=state, vllm_pid=fleet.pid,
                        restarts=fleet.restarts, replicas=self.replicas, metrics_urls=pages)

        fleet = Fleet(self.fleet, on_state=on_fleet,
                      warm=[warm_start(launch, self.family) for launch in self.fleet.replicas])
        return fleet


def warm_start(launch: Launch, family: Family | None) -> WarmUp:
    """*launch*'s warm start with *family*'s default prompt and official sampling; without a
    family (the demo model) the default family's, which is what the app then sends."""
    chosen = family or get_family(DEFAULT_FAMILY)
    return warm_up_for(launch, chosen.prompt("default", text=WARM_TEXT, source="en", target="zh"),
                       chosen.sampling.as_dict())


def _start_model(settings: Settings, model: Model, stop: _Stop) -> Runner | None:
    """Start and wait until ready; None when a stop signal came first (all stopped)."""
    runner = model.runner(settings)
    stop.runners.append(runner)
    launch = model.launch
    if launch.is_demo:
        _say("serving the small DEMO model (Qwen2.5-Coder-0.5B), not Hunyuan-MT quality.")
    if model.fleet is None:
        _say(f"starting vLLM ({launch.profile.name} profile); log: {launch.log_path}")
    else:
        _say(f"starting {model.replicas} vLLM replicas ({launch.profile.name} profile) behind "
             f"vllm-router; logs: {launch.log_path.parent}")
    last = [0.0]

    def progress(elapsed: float) -> None:
        if elapsed - last[0] >= 10:
            last[0] = elapsed
            _say(f"waiting for the model to load… {elapsed:.0f} s")

    try:
        runner.start(timeout=settings.startup_timeout, progress=progress)
    except SidecarError:
        if stop.event.is_set():
            return None
        raise
    _say(f"model ready at {model.endpoint.base_url}")
    return runner


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


def _plan(settings: Settings, args: argparse.Namespace, *, check: bool = True) -> Model:
    family = _family_of(settings, args.model)
    config = generation_config(family)
    replicas = args.replicas or settings.replicas
    if replicas > 1:
        fleet = plan_fleet(settings, replicas, profile=args.profile, model=args.model,
                           check=check, generation_config=config)
        model = Model(fleet.replicas[0], fleet.endpoint, fleet, family)
    else:
        launch = plan_launch(settings, profile=args.profile, model=args.model, check=check,
                             generation_config=config)
        model = Model(launch, launch.endpoint, family=family)
    for line in model.launch.spec.dropped:  # the flags this vLLM lacks, once (not per replica)
        _say(line)
    if family is not None:
        sampling = ", ".join(f"{k} {v}" for k, v in family.sampling.as_dict().items())
        _say(f"{family.title} {family.size.upper()}: its official prompts ({', '.join(family.kinds)}) "
             f"and sampling ({sampling})")
    return model


def cmd_serve_model(args: argparse.Namespace) -> int:
    settings = _settings(args)
    model = _plan(settings, args, check=not args.dry_run)
    if args.dry_run:
        print("\n".join(model.lines()))
        return 0
    make_private(settings.cache_dir)  # its log, its state file with the key
    stop = _Stop()
    try:
        runner = _start_model(settings, model, stop)
        if runner is None:
            return 0
        stop.event.wait()
        _say("stopping vLLM…")
        runner.stop()
        return 0
    finally:
        state_file(settings).unlink(missing_ok=True)


def cmd_serve_speech(args: argparse.Namespace) -> int:
    """A Whisper server for the app's voice, supervised as serve-model's vLLM is; it prints
    the settings that point the app at it."""
    settings = Settings()  # --port is the speech server's, not HYMT_PORT (the model's)
    plan = plan_speech(settings, model=args.model, host=args.host, port=args.port,
                       check=not args.dry_run)
    if args.dry_run:
        print(plan.spec.shell_line())
        return 0
    for line in plan.spec.dropped:
        _say(line)
    make_private(settings.cache_dir)  # its log
    stop = _Stop()

    def on_state(state: str) -> None:
        if state in ("restarting", "ready") and runner.restarts:
            _say(f"the speech server is {state} (restarts so far: {runner.restarts})")

    runner = Supervisor(plan.spec, health_url=f"{plan.endpoint.root}/health",
                        log_path=plan.log_path, on_state=on_state, name="vLLM (Whisper)")
    stop.runners.append(runner)
    _say(f"starting the speech server ({plan.model}); log: {plan.log_path}")
    try:
        runner.start(timeout=settings.startup_timeout)
    except SidecarError:
        if stop.event.is_set():
            return 0
        raise
    _say("speech server ready; give the app:")
    print(f"HYMT_SPEECH_URL={plan.endpoint.base_url}", flush=True)
    print(f"HYMT_SPEECH_SERVED_MODEL={plan.endpoint.model}", flush=True)
    stop.event.wait()
    _say("stopping the speech server…")
    runner.stop()
    return 0


def _model_env(settings: Settings, model: Model) -> dict[str, str]:
    """What the app replicas need to find the model we serve (and its state file)."""
    launch = model.launch
    return dict(
        HYMT_BASE_URL=model.endpoint.base_url,
        HYMT_API_KEY=model.endpoint.api_key,
        HYMT_MODEL=settings.served_name,
        HYMT_DEMO_MODEL="1" if launch.is_demo else "0",
        # The window: this profile's --max-num-seqs, times the replicas behind the router.
        HYMT_PROFILE=launch.profile.name,
        HYMT_REPLICAS=str(model.replicas),
        # What HYMT_MODEL_FAMILY=auto reads before the first /v1/models answer.
        **({} if launch.is_demo else {"HYMT_MODEL_PATH": launch.model}),
        # The app reads the sidecar's state file (warming up / restarting) by port and cache.
        HYMT_PORT=str(settings.port),
        HYMT_CACHE_DIR=str(settings.cache_dir),
    )


def cmd_up(args: argparse.Namespace) -> int:
    settings = _settings(args)
    make_private(settings.cache_dir)  # the app (its child) inherits the umask too
    stop = _Stop()
    env = dict(os.environ)
    model: Model | None = None
    runner: Runner | None = None
    if settings.base_url:
        _say(f"using the model server at {settings.base_url}")
    else:
        model = _plan(settings, args)
        env.update(_model_env(settings, model))
    apps = plan_apps(settings, env, host=args.app_host, port=args.app_port,
                     replicas=args.app_replicas or settings.app_replicas, pin=args.pin_apps)
    if model is not None:
        # Each plan checked its own ports; together they may still collide (--app-replicas 21
        # with the defaults would put a replica on the router's 8021).
        clash = sorted(model.ports(settings) & set(apps.ports))
        if clash:
            raise SidecarError(f"--port and --app-port overlap at {', '.join(map(str, clash))}: "
                               "the model takes --port and the ports after it, the app "
                               "--app-port and the ports after it; move one of them.")
        write_state(settings, model.endpoint, os.getpid(), state="starting")
    # The page works while the model loads: start the app first, then the model.
    try:
        try:
            front = apps.start(stop)
        except SidecarError:
            if stop.event.is_set():  # stopped while the apps started: not a failure
                return 0
            raise
        _say(f"chat page: {front}")
        if model is not None:
            runner = _start_model(settings, model, stop)
        stop.event.wait()  # every process has a supervisor that restarts it
        return 0
    finally:
        _say("stopping…")
        apps.stop()
        if runner is not None:
            runner.stop()
        if model is not None:
            state_file(settings).unlink(missing_ok=True)


def add_sidecar_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("serve-model", help="launch and supervise the vLLM sidecar")
    p.add_argument("--profile", default=None, help="a10, l4, a100-40g, a100-80g, h100, h200, cpu, auto")
    p.add_argument("--model", default=None, help="model folder or hub name")
    p.add_argument("--port", type=int, default=None)
    p.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    p.add_argument("--replicas", type=int, default=None, metavar="N",
                   help="N vLLM servers (GPUs split between them) behind vllm-router on --port")
    p.add_argument("--dry-run", action="store_true", help="print the command(s) and exit")
    p.set_defaults(func=cmd_serve_model)

    p = sub.add_parser("serve-speech", help="launch and supervise a vLLM server of Whisper "
                                             "for the app's voice (HYMT_SPEECH_URL)")
    p.add_argument("--model", default=None,
                   help="Whisper model folder or hub name (default openai/whisper-large-v3-turbo)")
    p.add_argument("--port", type=int, default=None, help="default 8011")
    p.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    p.add_argument("--dry-run", action="store_true", help="print the command and exit")
    p.set_defaults(func=cmd_serve_speech)

    p = sub.add_parser("up", help="start the model sidecar and the chat app")
    p.add_argument("--profile", default=None)
    p.add_argument("--model", default=None)
    p.add_argument("--port", type=int, default=None, help="model server port")
    p.add_argument("--replicas", type=int, default=None, metavar="N",
                   help="N vLLM servers behind vllm-router (HYMT_REPLICAS)")
    p.add_argument("--app-host", default="127.0.0.1")
    p.add_argument("--app-port", type=int, default=8000)
    p.add_argument("--app-replicas", type=int, default=None, metavar="M",
                   help="M chat app processes behind HAProxy on --app-port, sharing a Redis "
                        "(HYMT_APP_REPLICAS)")
    p.add_argument("--pin-apps", action="store_true",
                   help="give each app process its own share of the cores up may use")
    p.set_defaults(func=cmd_up)
