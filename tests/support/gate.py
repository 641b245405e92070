"""A stand-in model's answer that holds some requests back until the test opens it: a real vLLM
cannot be told to sit on one request and answer another, and that moment is what the tests of
"a long job holds nothing else" need (``tests/test_background_jobs.py``, the sockets' tests)."""

from __future__ import annotations

import threading
from collections.abc import Callable

from tests.support.stub_model import echo_source

__all__ = ["Gate"]


class Gate:
    """The stand-in's answer (*answer*: the source echoed); a part containing *held* waits for
    open(); the first containing *fail_once* fails (HTTP 500)."""

    def __init__(self, held: str = "Paragraphe", fail_once: str | None = None,
                 answer: Callable[[str], str] = echo_source) -> None:
        self.held = held
        self.answer = answer
        self.fail_once = fail_once
        self.opened = threading.Event()
        self.waiting = 0  # held requests the server is sitting on

    def __call__(self, prompt: str) -> str:
        source = echo_source(prompt)
        if self.fail_once and self.fail_once in source:
            self.fail_once = None
            raise RuntimeError("scripted failure of one part")
        if self.held in source:
            self.waiting += 1
            self.opened.wait(60)
        return self.answer(prompt)

    def open(self) -> None:
        self.opened.set()

    def close(self) -> None:
        self.opened.clear()
