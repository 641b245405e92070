"""Warm start: sampled requests the sidecar sends before it reports ready, so that no user pays
for the kernels vLLM compiles on its first sampled batches.

The first batch with top-k/top-p stalls for seconds while Triton compiles
``_topk_topp_kernel`` (docs/measured.md, On a GPU). vLLM's GPU sampler (0.26) takes PyTorch's
top-k/top-p below 8 rows and that Triton kernel from 8 rows, which Triton compiles once per
batch-size class (multiples of 16 apart from the rest); its random sampler is
``torch.compile``'d with one row apart from several. So the warm start sends one request of 1
sequence, then one of 8 and one of 16 (``n``; each capped at ``--max-num-seqs``, no repeats),
with the family's official prompt and sampling: what the first users would otherwise meet.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from hymt_chat.errors import SidecarError
from hymt_chat.sidecar.profiles import parse_flags

if TYPE_CHECKING:
    from hymt_chat.sidecar.launch import Launch

__all__ = ["WarmUp", "warm_batches", "warm_up_for"]

WARM_TEXT = "Good morning, your parcel arrived today."
_MAX_TOKENS = 4  # a few decode steps: each one samples the whole batch


def warm_batches(max_num_seqs: int) -> tuple[int, ...]:
    """How many sequences each warm-up request samples at once: 1, 8 and 16, capped at the
    server's ``--max-num-seqs`` (a batch it never runs needs no kernel)."""
    return tuple(dict.fromkeys(min(n, max(1, max_num_seqs)) for n in (1, 8, 16)))


@dataclass(frozen=True, slots=True)
class WarmUp:
    """The warm-up requests of one vLLM server (blocking: the supervisor's thread sends them)."""

    url: str  # the server's /v1/chat/completions
    api_key: str
    model: str  # the served name
    prompt: str
    sampling: Mapping[str, float | int]  # temperature, top_p, top_k, repetition_penalty
    batches: tuple[int, ...]

    def body(self, n: int) -> dict[str, Any]:
        return {"model": self.model, "messages": [{"role": "user", "content": self.prompt}],
                "max_tokens": _MAX_TOKENS, "n": n, **self.sampling}

    def __call__(self, timeout: float = 600.0) -> str:
        """Send each request in turn; the line saying what was sent and how long it took.
        SidecarError when one fails (the server is up: the caller reports ready anyway)."""
        started = time.monotonic()
        took: list[str] = []
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            with httpx.Client(timeout=timeout) as http:
                for n in self.batches:
                    sent = time.monotonic()
                    response = http.post(self.url, json=self.body(n), headers=headers)
                    took.append(f"{time.monotonic() - sent:.1f}")
                    if response.status_code != 200:
                        raise SidecarError(f"HTTP {response.status_code} for {n} sequence(s): "
                                           f"{response.text[:200]}")
        except httpx.HTTPError as err:
            raise SidecarError(f"{type(err).__name__}: {err}") from err
        sampling = ", ".join(f"{k} {v}" for k, v in self.sampling.items())
        return (f"warm start: {len(self.batches)} sampled requests of "
                f"{', '.join(map(str, self.batches))} sequence(s) ({sampling}) answered in "
                f"{time.monotonic() - started:.1f} s ({', '.join(took)} s)")


def warm_up_for(launch: Launch, prompt: str, sampling: Mapping[str, float | int]) -> WarmUp:
    """The warm-up of *launch*'s server: *prompt* (the family's default one, of
    :data:`WARM_TEXT`) sent with *sampling* (the family's; a ``max_tokens`` in it is dropped),
    in the batches its ``--max-num-seqs`` runs (the CLI picks the family: engine knowledge)."""
    seqs = dict(parse_flags(launch.spec.argv[3:])).get("--max-num-seqs") or "1"
    endpoint = launch.endpoint
    return WarmUp(f"{endpoint.base_url}/chat/completions", endpoint.api_key, endpoint.model or "",
                  prompt, {k: v for k, v in sampling.items() if k != "max_tokens"},
                  warm_batches(int(seqs)))
