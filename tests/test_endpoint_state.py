"""The sidecar's state file is read once, and again only when it changes or when the endpoint it
named failed (Translator.client runs before every model call)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hymt_chat.engine.policy import Policy
from hymt_chat.engine.translator import Translator
from hymt_chat.errors import ModelUnavailableError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import (
    Endpoint,
    forget_state,
    read_state,
    resolve_endpoint,
    state_file,
    write_state,
)
from tests.support.ports import free_port
from tests.support.stub_model import StubModel


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every Path.read_text call (the real one runs; this only counts)."""
    seen: list[Path] = []
    real = Path.read_text

    def counting(self: Path, *args: object, **kwargs: object) -> str:
        seen.append(self)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counting)
    return seen


def _settings(tmp_path: Path) -> Settings:
    return Settings(base_url=None, cache_dir=tmp_path, port=free_port(), api_key="")


def _rewrite_in_place(path: Path, data: dict[str, object]) -> None:
    """Change the file but keep its stamp (inode, size, mtime): what a coarse-time or network
    file system can show. Only a forced re-read can see it."""
    before = path.stat()
    text = json.dumps(data)
    assert len(text) == before.st_size
    with path.open("r+") as fh:
        fh.write(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_many_resolutions_read_the_file_once(tmp_path, reads):
    s = _settings(tmp_path)
    write_state(s, Endpoint("http://127.0.0.1:1/v1", "key-1", "m"), pid=1)
    for _ in range(100):
        assert resolve_endpoint(s) == Endpoint("http://127.0.0.1:1/v1", "key-1", "m")
        assert read_state(s)["state"] == "ready"
    assert reads.count(state_file(s)) == 1


def test_a_new_state_file_is_read_at_once(tmp_path, reads):
    s = _settings(tmp_path)
    write_state(s, Endpoint("http://127.0.0.1:1/v1", "key-1"), pid=1)
    assert resolve_endpoint(s).api_key == "key-1"
    write_state(s, Endpoint("http://127.0.0.1:1/v1", "key-2"), pid=1, state="restarting")
    assert resolve_endpoint(s).api_key == "key-2"
    assert read_state(s)["state"] == "restarting"
    state_file(s).unlink()
    assert resolve_endpoint(s) == Endpoint(f"http://{s.host}:{s.port}/v1", "", None)
    assert read_state(s) == {}
    assert reads.count(state_file(s)) == 2


def test_a_broken_file_is_not_remembered(tmp_path):
    s = _settings(tmp_path)
    path = state_file(s)
    path.parent.mkdir(parents=True)
    path.write_text('{"base_url": ')  # cut short
    assert resolve_endpoint(s).base_url == f"http://{s.host}:{s.port}/v1"
    path.write_text(json.dumps({"base_url": "http://127.0.0.1:1/v1", "api_key": "k"}))
    assert resolve_endpoint(s) == Endpoint("http://127.0.0.1:1/v1", "k", None)


def test_forget_state_reads_a_file_whose_stamp_did_not_change(tmp_path):
    s = _settings(tmp_path)
    write_state(s, Endpoint("http://127.0.0.1:1/v1", "key-1"), pid=1)
    assert resolve_endpoint(s).api_key == "key-1"
    data = json.loads(state_file(s).read_text())
    _rewrite_in_place(state_file(s), {**data, "api_key": "key-2"})
    assert resolve_endpoint(s).api_key == "key-1"  # same stamp: not read again
    forget_state(s)
    assert resolve_endpoint(s).api_key == "key-2"


async def test_an_unreachable_endpoint_makes_the_translator_read_the_file_again(tmp_path):
    # The sidecar moved (new port, new key) but its file kept its stamp; the first call fails on
    # the old port, and the next one finds the stand-in model server at the new place.
    # checks off: the stub echoes the source (a marker), which the answer checks
    # would rightly ask for again as French.
    s = _settings(tmp_path).model_copy(update={"retries": False, "checks": False})
    dead = f"http://127.0.0.1:{free_port()}/v1"
    write_state(s, Endpoint(dead, "k" * 40, "stub"), pid=1)
    translator = Translator(s, policy=Policy(retries=False))
    with StubModel() as stub:
        assert translator.client.endpoint.base_url == dead
        old = json.loads(state_file(s).read_text())
        new = {**old, "base_url": stub.base_url, "api_key": ""}
        pad = len(json.dumps(old)) - len(json.dumps(new))
        new["api_key"] = "n" * pad  # same size: the stamp stays
        _rewrite_in_place(state_file(s), new)
        assert translator.client.endpoint.base_url == dead  # not read again yet
        with pytest.raises(ModelUnavailableError):
            await translator.translate("Bonjour tout le monde", "en", "fr")
        assert translator.client.endpoint == Endpoint(stub.base_url, "n" * pad, "stub")
        result = await translator.translate("Bonjour tout le monde", "en", "fr")
        assert result.text == "Bonjour tout le monde"  # the stub echoes the source
        assert len(stub.prompts) == 1
