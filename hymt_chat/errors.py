"""One error hierarchy, so the UI and the CLI can each turn any failure into one clear sentence."""

from __future__ import annotations


class HymtError(Exception):
    """Base of every error hymt-chat raises on purpose; ``str(err)`` is meant for the user."""


class UnknownLanguageError(HymtError, ValueError):
    """The user named a language that is not one of the 38."""


class EmptyTextError(HymtError, ValueError):
    """Nothing left to translate once invisible characters are removed."""


class InputTooLongError(HymtError, ValueError):
    """Input over the configured maximum: refused whole rather than truncated."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            f"The text is {size:,} characters long; the limit is {limit:,} characters. "
            "Split it into smaller parts or send it as a file."
        )


class NotTextError(HymtError, ValueError):
    """Input that is binary or not UTF-8."""


class ModelError(HymtError):
    """The model server failed in a way that is not worth retrying (bad answer, HTTP 4xx/5xx)."""


class ModelUnavailableError(ModelError):
    """The model server cannot be reached (down, starting, or restarting)."""


class ModelBusyError(ModelError):
    """The model server refused with 503 until the message's deadline ran out."""


class RateLimitedError(HymtError):
    """One user sent more messages than the per-user limit allows."""

    def __init__(self, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(
            f"You are sending messages faster than allowed; try again in {max(1, round(retry_after))} s."
        )


class SidecarError(HymtError):
    """The vLLM sidecar cannot be launched as asked (bad profile, missing model, port taken...)."""


class ModelTimeoutError(ModelError):
    """One call took longer than the request timeout; retrying would only pile up load."""
