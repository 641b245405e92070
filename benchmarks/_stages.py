"""Where one message's CPU goes in the app: py-spy's collapsed stacks, split into stages.

A sample belongs to the stage of its innermost frame that names one (walking out from the leaf):
``json.dumps`` under engine.io is socket handling, ``random.choice`` under langdetect is
detection. py-spy counts only samples of threads that were running, so a stage's share of the
samples is its share of the process's CPU; times the process's CPU per message (read from the
kernel over the same window) it is the stage's CPU per message.
"""

from __future__ import annotations

from collections import Counter

__all__ = ["STAGES", "split", "stage_table"]

# (stage, prefixes of the frame's file as py-spy writes it: package folder or module path).
STAGES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Socket.IO and websocket (engine.io, socket.io, wsproto, uvicorn)",
     ("engineio/", "socketio/", "wsproto/", "websockets/", "uvicorn/", "h11/_connection",
      "starlette/")),
    ("Chainlit: messages, steps, emitter, persistence",
     ("chainlit/", "literalai/", "sqlalchemy/")),
    ("Our session and presenter (modes, presenter.py, app.py)",
     ("hymt_chat/modes/", "presenter.py", "app.py")),
    ("Detection (hymt_chat.lang.detect, langdetect)", ("hymt_chat/lang/", "langdetect/")),
    ("Checks and masking (text/, engine/fidelity.py)",
     ("hymt_chat/text/", "hymt_chat/engine/fidelity.py", "babel/")),
    ("Metrics", ("hymt_chat/service/metrics", "prometheus_client/")),
    ("Logging", ("logging/", "pythonjsonlogger/", "hymt_chat/service/logs")),
    ("Model call (HTTP client: aiohttp or the openai SDK on httpx; engine/client.py)",
     ("aiohttp/", "multidict/", "yarl/", "propcache/", "aiosignal/", "frozenlist/", "openai/",
      "httpx", "httpcore", "h11/", "anyio/", "hymt_chat/engine/client.py", "stamina/",
      "tenacity/", "pydantic", "ssl.py", "json/")),
    ("Translator, policy, readiness (engine/, service/)", ("hymt_chat/",)),
    ("Event loop (asyncio)", ("asyncio/", "selectors.py", "nest_asyncio.py")),
)
OTHER = "Other (Python itself, click, the rest)"


def _file(frame: str) -> str:
    """``func (path/to/file.py:12)`` -> ``path/to/file.py``."""
    return frame[frame.rfind("(") + 1:].rsplit(":", 1)[0]


def _stage(frames: list[str]) -> str:
    for frame in reversed(frames):
        path = _file(frame)
        for stage, prefixes in STAGES:
            if path.startswith(prefixes):
                return stage
    return OTHER


def split(raw: str) -> Counter[str]:
    """Samples per stage, from py-spy's ``--format raw`` output (``a;b;c 12`` per line)."""
    counts: Counter[str] = Counter()
    for line in raw.splitlines():
        stack, _, n = line.rpartition(" ")
        if stack and n.isdigit():
            counts[_stage(stack.split(";"))] += int(n)
    return counts


def stage_table(raw: str, cpu_per_message: float) -> str:
    """A Markdown table: each stage's CPU µs per message (of *cpu_per_message* seconds)."""
    counts = split(raw)
    total = sum(counts.values()) or 1
    rows = ["| stage | CPU µs / message | share |", "|---|---:|---:|"]
    for stage in [s for s, _ in STAGES] + [OTHER]:
        share = counts[stage] / total
        rows.append(f"| {stage} | {share * cpu_per_message * 1e6:,.0f} | {share:.0%} |")
    rows.append(f"| **all (the process's own CPU time)** | **{cpu_per_message * 1e6:,.0f}** | "
                f"{total} samples |")
    return "\n".join(rows) + "\n"
