"""What the engine behind the endpoint can do: how many requests it runs at once, and whether
it honours request priorities. Read from the sidecar's launch flags; an external server is
described by settings (``HYMT_WINDOW_MAX``, ``HYMT_ENGINE_PRIORITY``)."""

from __future__ import annotations

from hymt_chat.errors import SidecarError
from hymt_chat.settings import Settings

__all__ = ["DEFAULT_SLOTS", "engine_slots"]

DEFAULT_SLOTS = 8  # an external server we know nothing of (set HYMT_WINDOW_MAX to its seqs)


def engine_slots(settings: Settings) -> int:
    """Requests this app process may run at once: its share of what the engine runs at once,
    the window that leaves (almost) nothing waiting in it.

    ``HYMT_WINDOW_MAX`` wins; else the ``--max-num-seqs`` of the sidecar's profile (plus
    ``HYMT_VLLM_ARGS``) times its data-parallel replicas times the vLLM servers behind the
    router (``HYMT_REPLICAS``) — for an external server too when ``HYMT_PROFILE`` names its
    profile (compose does); else :data:`DEFAULT_SLOTS`. Split between the app replicas
    (``HYMT_APP_REPLICAS``), rounded up: a fixed share, not one read from the router's metrics,
    because the share must be right before the first request and stay right when a replica
    is busy; each window still shrinks on 503s by itself, and vLLM's priority scheduling
    orders what the replicas send together.
    """
    if settings.window_max:
        return settings.window_max
    return -(-_engine_total(settings) // settings.app_replicas)


def _engine_total(settings: Settings) -> int:
    if settings.base_url and settings.profile == "auto":
        return DEFAULT_SLOTS * settings.replicas
    from hymt_chat.sidecar.launch import choose

    try:
        flags = dict(choose(settings).flags)
        seqs = int(flags.get("--max-num-seqs") or 0)
    except (SidecarError, ValueError):  # a bad profile or flag fails louder at launch
        return DEFAULT_SLOTS
    per_server = seqs * settings.data_parallel_size if seqs > 0 else DEFAULT_SLOTS
    return per_server * settings.replicas
