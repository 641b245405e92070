"""What the engine behind the endpoint can do: how many requests it runs at once, and whether
it honours request priorities. Read from the sidecar's launch flags; an external server is
described by settings (``HYMT_WINDOW_MAX``, ``HYMT_ENGINE_PRIORITY``) or learned from its
``/metrics`` (:mod:`hymt_chat.engine.window`), starting from :data:`SAFE_SLOTS`."""

from __future__ import annotations

import logging
from typing import Literal

from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings

__all__ = ["DEFAULT_SLOTS", "SAFE_SLOTS", "Origin", "app_share", "engine_slots", "engine_total"]

# A separate server (Chimera's fusion endpoint) that no window learns: its own policy's size.
DEFAULT_SLOTS = 8
# What a server reached by URL is assumed to run at once until its /metrics says more (or for
# good, when it has none): two leave one slot for documents and one kept for a live message.
# Assuming eight would keep 8 requests in flight against the demo's 2 running slots: the
# reserved slot would be an illusion, and a live message would wait behind documents.
SAFE_SLOTS = 2
# Where the window's ceiling comes from, as /health shows it.
Origin = Literal["settings", "launch flags", "engine metrics", "safe default"]
_log = logging.getLogger(__name__)


def engine_slots(settings: Settings) -> int:
    """Requests this app process may run at once, before the engine's metrics say otherwise:
    its share of what the engine runs at once, the window that leaves (almost) nothing
    waiting in it. ``HYMT_WINDOW_MAX`` wins (and is kept: no metrics move it); else
    :func:`engine_total`'s share (:func:`app_share`)."""
    if settings.window_max:
        return settings.window_max
    return app_share(engine_total(settings)[0], settings.app_replicas)


def app_share(total: int, app_replicas: int) -> int:
    """One app process's share of *total* engine slots: split between the app replicas
    (``HYMT_APP_REPLICAS``), rounded up, at least one. A fixed share, not one read from the
    others' load, because it must be right before the first request and stay right when a
    replica is busy;
    each window still shrinks on 503s by itself, and vLLM's priority scheduling orders what
    the replicas send together."""
    return max(1, -(-total // app_replicas))


def engine_total(settings: Settings) -> tuple[int, Origin]:
    """What the engine runs at once, all its servers together, and where that comes from:
    the ``--max-num-seqs`` of the sidecar's profile (plus ``HYMT_VLLM_ARGS``) times its
    data-parallel replicas times the vLLM servers behind the router (``HYMT_REPLICAS``) —
    for an external server too when ``HYMT_PROFILE`` names its profile (compose does);
    else :data:`SAFE_SLOTS` per server."""
    if settings.base_url and settings.profile == "auto":
        return SAFE_SLOTS * settings.replicas, "safe default"
    from hymt_chat.sidecar.launch import choose

    try:
        flags = dict(choose(settings).flags)
        seqs = int(flags.get("--max-num-seqs") or 0)
    except (SidecarError, ValueError):  # a bad profile or flag fails louder at launch
        return SAFE_SLOTS * settings.replicas, "safe default"
    if seqs <= 0:
        return SAFE_SLOTS * settings.replicas, "safe default"
    return seqs * settings.data_parallel_size * settings.replicas, "launch flags"

