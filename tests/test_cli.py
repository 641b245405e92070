"""The CLI without a model: listing, detection, and every refusal as one sentence on stderr."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hymt_chat.lang.languages import LANGUAGES


def cli(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None):
    return subprocess.run([sys.executable, "-m", "hymt_chat.cli.main", *args], input=stdin,
                          capture_output=True, timeout=120, env=env or dict(os.environ))


def test_languages_prints_the_table():
    out = cli("languages")
    lines = out.stdout.decode().splitlines()
    assert out.returncode == 0 and len(lines) == 38
    assert lines[0].split() == ["zh", "Chinese", "中文"]
    assert [line.split()[0] for line in lines] == [lang.code for lang in LANGUAGES]


@pytest.mark.parametrize(("text", "code"), [
    ("Bonjour tout le monde, comment allez-vous aujourd'hui ?", "fr"),
    ("ok", "unsure"),
])
def test_detect_prints_a_code_or_unsure(text, code):
    out = cli("detect", text)
    assert out.returncode == 0 and out.stdout.decode().strip() == code


def test_detect_reads_stdin():
    out = cli("detect", stdin="Это предложение написано на русском языке.".encode())
    assert out.stdout.decode().strip() == "ru"


@pytest.mark.parametrize(
    ("args", "stdin", "message", "code"),
    [
        (("translate", "--to", "xx", "hello"), None, "Unknown language 'xx'", 2),
        (("translate", "--to", "fr", "--from", "klingon", "hello"), None, "Unknown language", 2),
        (("translate", "--to", "fr", "   \u200b\ufeff  "), None, "empty", 2),
        (("translate", "--to", "fr"), b"", "empty", 2),
        (("translate", "--to", "fr"), b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not UTF-8", 2),
        (("translate", "--to", "fr", "-"), b"caf\xe9 au lait", "not UTF-8", 2),
        (("translate", "--to", "fr", "--base-url", "http://127.0.0.1:9/v1", "--wait", "2",
          "Good morning to everyone here"), None, "not reachable", 3),
    ],
)
def test_translate_errors_are_one_sentence_on_stderr(args, stdin, message, code):
    out = cli(*args, stdin=stdin)
    err = out.stderr.decode()
    assert out.returncode == code, err
    assert message in err, err
    assert "Traceback" not in err and err.count("\n") <= 2
    assert out.stdout == b""


def test_too_long_input_is_refused_with_the_limit():
    env = {**os.environ, "HYMT_MAX_INPUT_CHARS": "1000", "HYMT_BASE_URL": "http://127.0.0.1:9/v1"}
    out = cli("translate", "--to", "fr", stdin=("word " * 400).encode(), env=env)
    assert out.returncode == 2
    assert "limit is 1,000 characters" in out.stderr.decode()


def test_a_server_that_is_down_is_named_and_no_button_is_mentioned():
    out = cli("translate", "--to", "fr", "--base-url", "http://127.0.0.1:9/v1", "--wait", "2",
              "Good morning to everyone here")
    err = out.stderr.decode()
    assert out.returncode == 3
    assert "http://127.0.0.1:9/v1: connection refused" in err, err
    assert "Retry" not in err and "press" not in err  # the CLI has no button


def test_wait_is_wall_time_even_when_the_server_stalls():
    """A server that takes the request and never answers: --wait 3 must not become its stall."""
    import time

    from tests.support.fake_server import Reply, fake_server

    # The stall is far longer than any interpreter start-up, so the bound below holds on a
    # busy host and still fails a CLI that waits for the answer instead of its --wait.
    with fake_server(Reply(delay=900.0)) as fake:
        started = time.monotonic()
        out = cli("translate", "--to", "fr", "--base-url", fake.base_url, "--wait", "3",
                  "Good morning to everyone here", env={**os.environ, "HYMT_MODEL": "fake"})
        took = time.monotonic() - started
    assert out.returncode == 3, out.stderr
    assert "did not answer" in out.stderr.decode()
    assert took < 300, took  # interpreter start-up included; the stall is 900 s
