"""Shared fixtures. The real vLLM server is started ONCE per test session (2-4 min on CPU)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hymt_chat.cli.sidecar import warm_start
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import Endpoint
from hymt_chat.sidecar.launch import plan_launch
from hymt_chat.sidecar.supervisor import Supervisor
from tests.support.clean_tree import (  # noqa: F401 - its hooks: the run leaves the tree as it was
    asked_folder,
    pytest_sessionfinish,
    pytest_sessionstart,
)
from tests.support.engine_double import EngineDouble, running_double
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
# The hymt-chat command speaks the terminal's language (hymt_chat/cli/words.py): the tests read
# its English, whatever the locale of the machine running them (LANGUAGE is read first).
os.environ["LANGUAGE"] = "en"
# Tight admission (2 running + 2 queued) so that bursts meet real 503s from vLLM itself.
# (The profiles keep vLLM's stats on: its /metrics has the vllm:* series the app's window and
# the cancellation test read.)
# --enable-log-requests: one log line per request with the sampling vLLM used
# (tests/test_e2e_families.py reads it).
TIGHT_ADMISSION = "--max-num-seqs 2 --max-num-queued-reqs 4 --enable-log-requests"
# The test servers' KV cache: 512 MiB holds 21k tokens of the demo model in float32, five times
# what 2 sequences of 4096 need. The profile's 2 GiB each, on three servers at once (the demo
# server and the scaled-out stack's two replicas) beside the browser tests, do not fit a
# 24 GiB machine: the kernel kills a vLLM worker (about 6 GB each in float32).
SMALL_KV_CACHE = "--kv-cache-memory-bytes 512M"


@dataclass
class Server:
    endpoint: Endpoint
    supervisor: Supervisor
    log_path: Path

    def settings(self, **overrides: object) -> Settings:
        """Settings of an app that talks to this server."""
        base = dict(base_url=self.endpoint.base_url, api_key=self.endpoint.api_key,
                    model=self.endpoint.model)
        return Settings(**{**base, **overrides})  # type: ignore[arg-type]

    def env(self) -> dict[str, str]:
        return {**os.environ, "HYMT_BASE_URL": self.endpoint.base_url,
                "HYMT_API_KEY": self.endpoint.api_key, "HYMT_MODEL": self.endpoint.model or ""}


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the browser tests put the pictures they take on the way: a temporary folder, so a
    test run changes no tracked file; ``make screenshots`` names the docs' own folder
    (``HYMT_SCREENSHOTS=docs/screenshots``) to refresh them on purpose."""
    folder = asked_folder()
    if folder is None:
        return tmp_path_factory.mktemp("screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="session")
def demo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The embedded default: vLLM's CPU build serving the demo model, started by our launcher
    and warmed up as serve-model does (tests/test_warm_start.py reads what it sent)."""
    settings = Settings(profile="cpu", port=free_port(), api_key="",
                        vllm_args=f"{TIGHT_ADMISSION} {SMALL_KV_CACHE}",
                        base_url=None)
    launch = plan_launch(settings)
    log_path = tmp_path_factory.mktemp("vllm") / "demo.log"
    supervisor = Supervisor(launch.spec, health_url=f"{launch.endpoint.root}/health",
                            log_path=log_path, warm=warm_start(launch, None))
    supervisor.start(timeout=900)
    try:
        yield Server(launch.endpoint, supervisor, log_path)
    finally:
        supervisor.stop()


@pytest.fixture
def engine() -> Iterator[EngineDouble]:
    """The engine double (tests/support/engine_double.py), admitting as the demo sidecar does
    (2 running + 2 waiting); it has a ``settings()`` and ``env()`` like :class:`Server`'s."""
    with running_double(max_num_seqs=2, max_queued=4) as double:
        yield double


@pytest.fixture(params=["sqlite", "postgresql"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> Path | str:
    """A store's database, once per backend: a SQLite file in *tmp_path*, or a fresh database
    on the session's PostgreSQL (an asyncpg URL, as HYMT_DATABASE_URL has it)."""
    if request.param == "sqlite":
        return tmp_path / "store.db"
    from tests.support.postgres import fresh_database

    return fresh_database(request.getfixturevalue("postgres_url"))


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """HYMT_TEST_POSTGRES_URL, else ONE throwaway PostgreSQL cluster for the session (about 3 s
    to start): an asyncpg URL, as HYMT_DATABASE_URL takes it. Tests that need an empty database
    take :func:`tests.support.postgres.fresh_database` of it."""
    if url := os.environ.get("HYMT_TEST_POSTGRES_URL"):
        yield url
        return
    import asyncpg  # noqa: F401 - the test extra installs it; missing must fail, not skip

    from tests.support.postgres import postgres_server

    with postgres_server() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    """Debian's chromium driven by Playwright, one per test module (tests/support/browser.py
    has the moves on the page)."""
    from playwright.sync_api import expect, sync_playwright

    from tests.support.browser import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make setup` (it installs Debian's chromium)")
    # Playwright's expect() waits 5 s unless told, its actions 30 s: verdicts on the host's
    # speed. Both wait as long as a page's other waits (tests/support/browser.py new_page).
    expect.set_options(timeout=120_000)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def patient_deepl(monkeypatch: pytest.MonkeyPatch) -> None:
    """deepl-python gives a request 10 s (``deepl.http_client.min_connection_timeout``) and
    retries up to 5 times: DeepL answers within that, the CPU demo model on a busy 2-core host
    may not, and each retry would start the translation again. The module setting is how a
    user of a slower server widens it."""
    import deepl

    monkeypatch.setattr(deepl.http_client, "min_connection_timeout", 300.0)


@pytest.fixture
def keys_at(where: Path | str) -> Path | str:
    """Where a test's API key store lives, once per backend (:func:`where`)."""
    return where


@pytest.hookimpl(tryfirst=True)  # before -m reads the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test of the session's demo vLLM is marked ``vllm`` as the scaled-out stack's are:
    the test command runs those in one process, one after the other, beside the others."""
    for item in items:
        if "demo_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.vllm)
