"""``benchmarks/speech.py`` runs end to end and writes its page: a WER per language heard, the
two English voices side by side, the speed and the wait after speech.

The quick run hears English and German only: those are the languages Whisper base hears from
espeak-ng at about real time; a sentence it mishears (French, Italian, Portuguese in espeak's
voice) can take it several decoding passes, up to tens of seconds on two cores."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Whisper base on the CPU: 15-25 s on this project's 2-core machine, more under load.
pytestmark = pytest.mark.slow


def test_the_quick_run_writes_a_wer_for_each_language(tmp_path: Path) -> None:
    page = tmp_path / "speech.md"
    env = {k: v for k, v in os.environ.items() if k != "HYMT_BASE_URL"}
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "speech.py"), "--quick", "--languages",
         "en,de", "--page", str(page)],
        capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    text = page.read_text(encoding="utf-8")
    wer = r"\d+ \| \d+ \| \*\*\d+\.\d %\*\* \| \d+/\d+ \|"
    for row in ("| English (en) | espeak-ng en-us |", "| German (de) | espeak-ng de |",
                "| English (en) | piper en_US-joe-medium |"):
        assert re.search(re.escape(row) + " " + wer, text), f"no WER row {row!r}:\n{text}"
    assert "| robotic cost (espeak − Piper) |" in text
    assert re.search(r"so \*\*it (holds|does not hold)\*\*", text)
    for group, count in (("every sentence", 3), ("English only (both voices)", 2)):
        assert re.search(rf"\| base int8, {re.escape(group)} \| \d+ \| {count} \| "
                         r"\*\*\d+\.\d\d\*\* \|", text), f"no RTF row for {group}"
        assert re.search(rf"\| end of speech → transcript, {re.escape(group)} \| {count} \| "
                         r"[\d.]+ s \| \*\*[\d.]+ s\*\* \|", text), f"no wait for {group}"
    assert "No translation column" in text
