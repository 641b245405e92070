"""drop_blocking_sleep: a library's time.sleep stops blocking, the rest of ``time`` still works."""

from __future__ import annotations

import importlib
import sys
import time
import types
from pathlib import Path

import pytest

from hymt_chat.service.nonblocking import drop_blocking_sleep


def test_sleep_is_dropped_in_that_module_only(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    (tmp_path / "sleepy.py").write_text(
        "import time\n\ndef make():\n    time.sleep(5)\n    return time.time()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("sleepy")
    monkeypatch.delitem(sys.modules, "sleepy")
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)  # the real one, watched
    drop_blocking_sleep(module)
    assert module.make() > 0  # time.time() still answers
    assert slept == []  # the module's sleep never reached time.sleep
    time.sleep(0.5)
    assert slept == [0.5]  # everyone else's sleep is untouched


def test_chainlits_message_and_step_sleep_on_the_loop_and_can_be_freed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The cost this removes is real: both modules call time.sleep in their constructors.
    # (``chainlit.message`` as an attribute is a function: take the modules by name.)
    message, step = (importlib.import_module(f"chainlit.{name}") for name in ("message", "step"))
    for module in (message, step):
        source = Path(module.__file__).read_text(encoding="utf-8")
        assert "time.sleep(0.001)" in source, module.__name__
        monkeypatch.setattr(module, "time", time)  # restored after the test
    drop_blocking_sleep(message, step)
    assert message.time.sleep(1) is None and step.time.sleep(1) is None
    assert message.time.time() > 0


def test_a_module_without_time_is_refused_by_name() -> None:
    with pytest.raises(TypeError, match="sleepless"):
        drop_blocking_sleep(types.ModuleType("sleepless"))
