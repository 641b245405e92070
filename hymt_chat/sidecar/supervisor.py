"""Runs a server (vLLM; with replicas also vllm-router, and for ``up`` the app replicas,
HAProxy and Redis) as a child in its own process group, restarts it when it dies, and stops
the whole group on the way out: no orphans holding the port or the memory."""

from __future__ import annotations

import ctypes
import functools
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from hymt_chat.errors import SidecarError
from hymt_chat.sidecar.probe import HealthCheck
from hymt_chat.sidecar.profiles import LaunchSpec

StateSink = Callable[[str], None]
Check = Callable[[float], bool]  # timeout -> healthy
WarmStart = Callable[[], str]  # sends the warm-up requests; the line to log (SidecarError: failed)
_PR_SET_PDEATHSIG = 1


def _child_setup(cpus: tuple[int, ...] = ()) -> None:
    """In the child: a new session (own process group), SIGTERM if the supervisor dies, and
    the cores it may use (*cpus*; inherited by every thread and child it starts)."""
    os.setsid()
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass
    if cpus:
        os.sched_setaffinity(0, cpus)


def tail(path: Path, lines: int = 30) -> str:
    try:
        with path.open(errors="replace") as fh:
            return "".join(deque(fh, maxlen=lines))
    except OSError:
        return ""


class Supervisor:
    """One server: start, wait for its health check, watch, restart with backoff, stop.

    The check is an HTTP GET of *health_url* answering 200 (vLLM's ``/health``) unless
    *check* is given (Redis answers PING, not HTTP); *name* is what its log lines call it.
    *warm* runs once the check passes and before the state says ready, at every start and
    restart (:mod:`hymt_chat.sidecar.warm`: vLLM's first sampled batches compile kernels)."""

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        health_url: str,
        log_path: Path,
        on_state: StateSink | None = None,
        max_backoff: float = 30.0,
        unhealthy_after: float = 30.0,
        check: Check | None = None,
        name: str = "vLLM",
        warm: WarmStart | None = None,
    ) -> None:
        self.spec = spec
        self.health_url = health_url
        self.name = name
        self._check: Check = check or HealthCheck(health_url)
        self.warm = warm
        self.log_path = log_path
        self.max_backoff = max_backoff
        self.unhealthy_after = unhealthy_after
        self.restarts = 0
        self.state = "stopped"
        self._on_state = on_state
        self._proc: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None

    # -- state ---------------------------------------------------------------------------
    def _set_state(self, state: str) -> None:
        self.state = state
        if self._on_state is not None:
            self._on_state(state)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    # -- process -------------------------------------------------------------------------
    def _spawn(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab", buffering=0)
        log.write(f"\n=== hymt-chat: starting {self.name} at {time.strftime('%F %T')} ===\n".encode())
        with self._lock:
            if self._stopping.is_set() and self._proc is not None:
                log.close()
                return  # stop() won the race with a restart: start nothing it would miss
            self._proc = subprocess.Popen(
                self.spec.argv,
                env={**os.environ, **self.spec.env},
                cwd=self.spec.cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=functools.partial(_child_setup, self.spec.cpus),  # noqa: PLW1509 - setsid + parent-death signal + cores
            )
        log.close()

    def healthy(self, timeout: float = 2.0) -> bool:
        """True when the check passes. By default *health_url* must answer 200: the shared
        probe without its /readiness and /v1/models fallbacks, since we launched this server
        and a 404 there is not health. For vllm-router that asks whether the process serves,
        not whether a replica is behind it: each replica has a supervisor of its own."""
        return self._check(timeout)

    def _wait_healthy(self, timeout: float, progress: Callable[[float], None] | None) -> str:
        """'ready', 'exited' or 'timeout'."""
        started = time.monotonic()
        while not self._stopping.is_set():
            proc = self._proc
            if proc is None or proc.poll() is not None:
                return "exited"
            if self.healthy():
                return "ready"
            elapsed = time.monotonic() - started
            if elapsed > timeout:
                return "timeout"
            if progress is not None:
                progress(elapsed)
            self._stopping.wait(1.0)
        return "stopped"

    # -- public --------------------------------------------------------------------------
    def start(
        self, *, timeout: float = 900.0, progress: Callable[[float], None] | None = None
    ) -> None:
        """Start, block until /health answers, then watch in the background.

        A server that exits or never becomes healthy during its first start is a
        configuration problem: stop it and raise with the end of its log, no restart loop.
        """
        self.spawn()
        self.wait_ready(timeout=timeout, progress=progress)

    def spawn(self) -> None:
        """The first half of :meth:`start`: the process, without waiting for it.

        Several servers starting side by side are spawned from the caller's thread and then
        waited for in threads of their own: the child's parent-death signal fires when the
        *thread* that forked it ends, so a child spawned by a short-lived thread would get
        SIGTERM the moment that thread returned."""
        self._stopping.clear()
        self._set_state("starting")
        self._spawn()

    def wait_ready(
        self, *, timeout: float = 900.0, progress: Callable[[float], None] | None = None
    ) -> None:
        """The second half of :meth:`start`: block until healthy (or stop and raise)."""
        outcome = self._wait_healthy(timeout, progress)
        if outcome != "ready":
            code = self._proc.poll() if self._proc else None
            self.stop()
            why = {
                "exited": f"{self.name} exited with code {code} while starting",
                "timeout": f"{self.name} did not become healthy within {timeout:g} s",
                "stopped": "stopped while starting",
            }[outcome]
            raise SidecarError(
                f"{why}. Last lines of {self.log_path}:\n{tail(self.log_path)}"
            )
        self._become_ready()
        self._watcher = threading.Thread(target=self._watch, name=f"{self.name}-watch",
                                         daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        delay = 1.0
        while not self._stopping.is_set():
            proc = self._proc
            assert proc is not None
            up_since = time.monotonic()
            why = self._wait_until_dead(proc)
            if self._stopping.is_set():
                return
            self._log_line(f"{self.name} {why}: restarting it")
            # Its engine children may outlive it. A server that exited left them orphaned:
            # nothing to shut down gracefully (vLLM's engine spent ~18 s on it after a SIGKILL
            # of its API server, before the restart could begin), so they are killed at once.
            self._kill_group(proc, grace=0.0 if proc.poll() is not None else 15.0)
            if time.monotonic() - up_since > 120:
                delay = 1.0  # it ran fine for a while: not a crash loop
            self._set_state("restarting")
            if self._stopping.wait(delay):
                return
            delay = min(delay * 2, self.max_backoff)
            self.restarts += 1
            self._spawn()
            if self._wait_healthy(900.0, None) == "ready":
                self._become_ready()

    def _become_ready(self) -> None:
        """Warm the server up (when asked to), then say ready, in its log and its state."""
        if self.warm is not None:
            try:
                self._log_line(self.warm())
            except SidecarError as err:  # the server is up: serve, and say who pays
                self._log_line(f"warm start failed ({err}); the first users pay the compile")
        self._log_line(f"{self.name} ready")
        self._set_state("ready")

    def _wait_until_dead(self, proc: subprocess.Popen[bytes]) -> str:
        """Block until the server exited, or answered no /health for `unhealthy_after` s.

        The second case is real: when vLLM's engine process dies (OOM kill), the API
        server process can stay up, serving errors forever.
        """
        failing_since: float | None = None
        while not self._stopping.wait(2.0):
            if proc.poll() is not None:
                return f"exited with code {proc.returncode}"
            if self.healthy(timeout=5.0):
                failing_since = None
            elif failing_since is None:
                failing_since = time.monotonic()
            elif time.monotonic() - failing_since > self.unhealthy_after:
                return f"failed its health check for {self.unhealthy_after:g} s"
        return "stopping"

    def _log_line(self, text: str) -> None:
        try:
            with self.log_path.open("a") as log:
                log.write(f"=== hymt-chat: {text} at {time.strftime('%F %T')} ===\n")
        except OSError:
            pass

    def _kill_group(self, proc: subprocess.Popen[bytes], grace: float = 15.0) -> None:
        """SIGTERM, *grace* seconds, then SIGKILL to the whole group (no grace: SIGKILL only)."""
        steps = ((signal.SIGTERM, grace),) if grace > 0 else ()
        for sig, wait in (*steps, (signal.SIGKILL, 5.0)):
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                return
            deadline = time.monotonic() + wait
            while time.monotonic() < deadline:
                proc.poll()
                if not _group_alive(proc.pid):
                    return
                time.sleep(0.1)

    def request_stop(self) -> None:
        """Safe from a signal handler: start() and the watcher notice within a second."""
        self._stopping.set()

    @property
    def stop_requested(self) -> bool:
        return self._stopping.is_set()

    def stop(self) -> None:
        """Stop the server with its whole process group (SIGTERM, then SIGKILL)."""
        self._stopping.set()
        with self._lock:
            proc = self._proc
        if proc is not None:
            self._kill_group(proc)
            proc.wait(timeout=5)
        if self._watcher is not None and self._watcher is not threading.current_thread():
            self._watcher.join(timeout=5)
        self._set_state("stopped")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_together(supervisors: Sequence[Supervisor], *, timeout: float,
                   progress: Callable[[float], None] | None = None) -> None:
    """Start several servers side by side (N model loads in the time of one where the machine
    allows): all spawned from this thread (see :meth:`Supervisor.spawn`), then waited for in
    parallel. When one fails its first start, all are stopped and its error is raised."""
    for supervisor in supervisors:
        supervisor.spawn()
    errors: list[BaseException] = []

    def wait(index: int, supervisor: Supervisor) -> None:
        try:
            supervisor.wait_ready(timeout=timeout, progress=progress if index == 0 else None)
        except BaseException as err:  # noqa: BLE001 - raised below, in the caller's thread
            errors.append(err)

    threads = [threading.Thread(target=wait, args=(i, s), name=f"{s.name}-start")
               for i, s in enumerate(supervisors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        for supervisor in supervisors:
            supervisor.stop()
        raise errors[0]
