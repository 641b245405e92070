"""Where Best quality's fusion calls go: the fusion endpoint, its client and its window.

On the translation's own server the fusion calls share its client (one connection pool) and
its policy (one window for one server's capacity). On a server of its own, Chimera gets a
client and a window of its own, without retries: a 503 or a refused connection downgrades a
part at once instead of making the user wait for an optional refinement.
"""

from __future__ import annotations

import threading

from hymt_chat.engine.client import ModelClient, ModelClients
from hymt_chat.engine.policy import Policy
from hymt_chat.settings import Settings
from hymt_chat.sidecar.capacity import DEFAULT_SLOTS
from hymt_chat.sidecar.endpoint import Endpoint, resolve_endpoint

__all__ = ["FusionRoute", "fusion_endpoint"]


def fusion_endpoint(settings: Settings, translation: Endpoint | None = None) -> Endpoint:
    """Where Chimera is: its own URL, else the translation endpoint ("same server").

    The key defaults to the translation key; the model defaults to the translation model
    (``None``: the first one the server lists), which is how the demo model plays Chimera.
    """
    translation = translation or resolve_endpoint(settings)
    if settings.fusion_base_url:
        key = settings.fusion_api_key if settings.fusion_api_key is not None else settings.api_key
        return Endpoint(settings.fusion_base_url.rstrip("/"), key, settings.fusion_model)
    key = translation.api_key if settings.fusion_api_key is None else settings.fusion_api_key
    return Endpoint(translation.base_url, key, settings.fusion_model or translation.model)


class FusionRoute:
    """The fusion client and policy of one app, beside its translation *policy*."""

    def __init__(self, settings: Settings, policy: Policy) -> None:
        self.settings = settings
        self._translation_policy = policy
        self._clients = ModelClients(settings)
        self._lock = threading.Lock()
        self._own_policy: Policy | None = None

    def client(self, translation: ModelClient) -> ModelClient:
        """The translation client itself when the fusion model is on its server and key."""
        endpoint = fusion_endpoint(self.settings, translation.endpoint)
        if endpoint == translation.endpoint:
            return translation
        return self._clients.at(endpoint)

    def policy(self, translation: Endpoint) -> Policy:
        """The translation's policy on the same server; else a retry-free window of its own."""
        fusion = fusion_endpoint(self.settings, translation)
        if (fusion.base_url, fusion.api_key) == (translation.base_url, translation.api_key):
            return self._translation_policy
        with self._lock:
            if self._own_policy is None:
                slots = self.settings.window_max or DEFAULT_SLOTS
                self._own_policy = Policy(
                    window_max=slots, window_min=min(self.settings.window_min, slots),
                    deadline=self.settings.chimera_wait, retries=False, reserve=0,
                    ranks=self.settings.priorities)
            return self._own_policy

    async def aclose(self) -> None:
        await self._clients.aclose()
