"""A real Docker engine for the image tests: Debian's dockerd, started here, and a local stand-in
for ``python:3.11-slim``.

No registry of images is reachable from these machines, so the engine is this test's own
(its socket, data and state under the project's cache, nothing of a developer's Docker touched):
``dockerd --iptables=false --bridge=none`` (no network of its own; builds and containers use the
host's). The base image is made once and cached: ``debootstrap --variant=minbase bookworm`` with
Debian's python3, python3-venv and python3-pip, imported and tagged ``python:3.11-slim``, so that
the Dockerfiles' unchanged ``FROM python:3.11-slim`` finds it. It differs from the real one in
what the tests need not care about (Debian's Python 3.11.2 in /usr/bin, pip 23.0.1), and it
trusts the host's certificate authorities (the machine's network may present its own), as an
image on that network would.

A missing part is an error that says what to install, never a skip.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hymt_chat.settings import Settings

# Debian's client, the daemon's own version: its built-in BuildKit needs no buildx plugin (a
# newer docker CLI on PATH would insist on one).
DOCKER = Path("/usr/bin/docker")
DOCKERD = Path("/usr/sbin/dockerd")
BASE_TAG = "python:3.11-slim"
STANDIN_LABEL = "hymt.standin"
STANDIN_VERSION = "1"  # bump to make the stand-in again (its recipe changed)
STANDIN_PACKAGES = ("python3", "python3-venv", "python3-pip", "python-is-python3")


class EngineError(RuntimeError):
    """Docker cannot run here: the message says what is missing."""


@dataclass(frozen=True)
class Engine:
    """A running dockerd of this test session's, reached at *host* (a unix socket)."""

    host: str
    root: Path  # its data (images, build cache): kept between sessions

    def env(self, buildkit: bool = True) -> dict[str, str]:
        env = {**os.environ, "DOCKER_HOST": self.host,
               "DOCKER_BUILDKIT": "1" if buildkit else "0"}
        env.pop("DOCKER_CONTEXT", None)
        return env

    def run(self, *args: str, timeout: float = 120, check: bool = True,
            buildkit: bool = True) -> subprocess.CompletedProcess[str]:
        """``docker ARGS`` on this engine; *check*: an error carries docker's own output."""
        proc = subprocess.run([str(DOCKER), *args], env=self.env(buildkit), capture_output=True,
                              text=True, errors="replace", timeout=timeout)
        if check and proc.returncode != 0:
            raise EngineError(f"docker {' '.join(args[:3])}… exited {proc.returncode}:\n"
                              f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
        return proc

    def inspect(self, thing: str) -> dict:
        return json.loads(self.run("inspect", thing).stdout)[0]

    def build(self, context: Path, tag: str, *, buildkit: bool,
              dockerfile: Path | None = None, timeout: float = 1200) -> str:
        """Build *context* into *tag* on the host's network; the build's log."""
        args = ["build", "--network", "host", "-t", tag]
        if dockerfile is not None:
            args += ["-f", str(dockerfile)]
        proc = self.run(*args, str(context), timeout=timeout, buildkit=buildkit)
        return proc.stdout + proc.stderr


def _cache_dir() -> Path:
    return Settings(_env_file=None).cache_dir / "docker"  # type: ignore[call-arg]


def _require_tools() -> None:
    missing = [str(p) for p in (DOCKER, DOCKERD) if not p.exists()]
    missing += [name for name in ("debootstrap",)
                if shutil.which(name, path="/usr/sbin:/usr/bin:/sbin:/bin") is None]
    if missing:
        raise EngineError(f"the image tests need {', '.join(missing)}: scripts/setup.sh --test "
                          "installs Debian's docker.io and debootstrap")
    if os.geteuid() != 0:
        raise EngineError("the image tests start their own dockerd, which needs root")


def _answers(host: str) -> bool:
    proc = subprocess.run([str(DOCKER), "version", "--format", "{{.Server.Version}}"],
                          env={**os.environ, "DOCKER_HOST": host}, capture_output=True,
                          text=True, timeout=30)
    return proc.returncode == 0


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def engine(timeout: float = 120) -> Iterator[Engine]:
    """This session's dockerd (started unless one of ours already answers), stopped after."""
    _require_tools()
    cache = _cache_dir()
    root = cache / "root"
    # The daemon's runtime state: short paths (containerd's sockets live there).
    run_dir = Path(tempfile.gettempdir()) / "hymt-dockerd"
    host = f"unix://{run_dir / 'docker.sock'}"
    proc = None
    with _locked(cache / "engine.lock"):
        if not _answers(host):
            run_dir.mkdir(parents=True, exist_ok=True)
            root.mkdir(parents=True, exist_ok=True)
            log = (cache / "dockerd.log").open("ab")
            proc = subprocess.Popen(
                [str(DOCKERD), "--iptables=false", "--bridge=none", "--host", host,
                 "--data-root", str(root), "--exec-root", str(run_dir / "exec"),
                 "--pidfile", str(run_dir / "dockerd.pid")],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            log.close()
            deadline = time.monotonic() + timeout
            while not _answers(host):
                if proc.poll() is not None or time.monotonic() > deadline:
                    tail = (cache / "dockerd.log").read_text(errors="replace")[-3000:]
                    proc.kill()
                    raise EngineError(f"dockerd did not start:\n{tail}")
                time.sleep(0.5)
    try:
        yield Engine(host, root)
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _standin_ready(eng: Engine) -> bool:
    proc = eng.run("image", "inspect", "--format", "{{json .Config.Labels}}", BASE_TAG,
                   check=False)
    if proc.returncode != 0:
        return False
    labels = json.loads(proc.stdout.strip() or "null") or {}
    return labels.get(STANDIN_LABEL) == STANDIN_VERSION


def _debootstrap(rootfs: Path, log: Path) -> None:
    """Debian bookworm's minimal base with Debian's Python, shaped like python:3.11-slim."""
    with log.open("wb") as out:
        proc = subprocess.run(
            ["debootstrap", "--variant=minbase", f"--include={','.join(STANDIN_PACKAGES)}",
             "bookworm", str(rootfs)], stdout=out, stderr=subprocess.STDOUT, timeout=1800)
    if proc.returncode != 0:
        raise EngineError(f"debootstrap failed:\n{log.read_text(errors='replace')[-3000:]}")
    # The official image's pip installs into its Python; Debian's refuses without this removed.
    for marker in rootfs.glob("usr/lib/python3*/EXTERNALLY-MANAGED"):
        marker.unlink()
    shutil.copy2("/etc/ssl/certs/ca-certificates.crt",
                 rootfs / "etc" / "ssl" / "certs" / "ca-certificates.crt")
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for path in (rootfs / junk).glob("*"):
            if path.is_file():
                path.unlink()


def base_standin(eng: Engine) -> str:
    """Tag the stand-in as python:3.11-slim in *eng*: imported from the cached tarball, which
    is made (debootstrap, about 90 s and 190 MB) only the first time."""
    if _standin_ready(eng):
        return BASE_TAG
    cache = _cache_dir()
    tarball = cache / f"python-3.11-slim-standin-{STANDIN_VERSION}.tar"
    with _locked(cache / "standin.lock"):
        if not tarball.exists():
            with tempfile.TemporaryDirectory(dir=cache) as work:
                rootfs = Path(work) / "rootfs"
                _debootstrap(rootfs, cache / "debootstrap.log")
                partial = Path(work) / "rootfs.tar"
                subprocess.run(["tar", "-C", str(rootfs), "--numeric-owner", "-cf",
                                str(partial), "."], check=True, timeout=600)
                partial.replace(tarball)
        changes = ['ENV LANG=C.UTF-8', 'CMD ["python3"]',
                   f"LABEL {STANDIN_LABEL}={STANDIN_VERSION}"]
        args = ["import", *(a for c in changes for a in ("--change", c)), str(tarball), BASE_TAG]
        eng.run(*args, timeout=600)
    return BASE_TAG


@dataclass
class Container:
    eng: Engine
    id: str

    def exec(self, *cmd: str, check: bool = True) -> str:
        return self.eng.run("exec", self.id, *cmd, check=check).stdout

    def state(self) -> dict:
        return self.eng.inspect(self.id)["State"]

    def logs(self) -> str:
        proc = self.eng.run("logs", self.id, check=False)
        return (proc.stdout + proc.stderr)[-6000:]


@contextmanager
def container(eng: Engine, image: str, *, args: Sequence[str] = (),
              command: Sequence[str] = (), env: dict[str, str] | None = None
              ) -> Iterator[Container]:
    """``docker run -d`` on the host's network; removed afterwards."""
    env_args = [a for k, v in (env or {}).items() for a in ("-e", f"{k}={v}")]
    cid = eng.run("run", "-d", "--network", "host", *env_args, *args, image, *command).stdout
    box = Container(eng, cid.strip())
    try:
        yield box
    finally:
        eng.run("rm", "-f", box.id, check=False)
