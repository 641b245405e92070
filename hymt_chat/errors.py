"""One error hierarchy, so the UI and the CLI can each turn any failure into one clear sentence."""

from __future__ import annotations


class HymtError(Exception):
    """Base of every error hymt-chat raises on purpose; ``str(err)`` is meant for the user."""


class InputError(HymtError, ValueError):
    """What the user sent was refused as it is (nothing is worth retrying): the base of every
    refusal, so that the UI, the CLI and the metrics tell input from failure one way."""


class UnknownLanguageError(InputError):
    """The user named a language that is not one of the 38."""


class EmptyTextError(InputError):
    """Nothing left to translate once invisible characters are removed."""


class InputTooLongError(InputError):
    """Input over the configured maximum: refused whole rather than truncated."""

    def __init__(self, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(
            f"The text is {size:,} characters long; the limit is {limit:,} characters. "
            "Split it into smaller parts or send it as a file."
        )


class NotTextError(InputError):
    """Input that is binary or not UTF-8."""


class UnsupportedPromptError(HymtError, ValueError):
    """The model family publishes no instruction of that kind (``Family.prompt``): callers fall
    back to what works with every family (the default prompt, masking, value by value)."""


class ModelError(HymtError):
    """The model server failed in a way that is not worth retrying (bad answer, HTTP 4xx/5xx)."""


class ModelUnavailableError(ModelError):
    """The model server cannot be reached (down, starting, or restarting)."""


class ModelBusyError(ModelError):
    """The model server refused with 503 until the message's deadline ran out."""


class RateLimitedError(HymtError):
    """One user sent more messages than the per-user limit allows."""

    def __init__(self, retry_after: float, too_big: tuple[int, int] | None = None) -> None:
        self.retry_after = retry_after
        if too_big is not None:
            size, allowance = too_big
            super().__init__(
                f"This is {size:,} characters; one user may send at most {allowance:,} in that "
                "time. Split it into smaller parts."
            )
            return
        super().__init__(
            f"You are sending more than allowed; try again in {max(1, round(retry_after))} s."
        )


class BodyTooLargeError(InputError):
    """An HTTP request body over the API's limit: refused before it is read whole."""

    def __init__(self, size: int, limit: int) -> None:
        self.size, self.limit = size, limit
        super().__init__(
            f"The request body is {size:,} bytes; the limit is {limit:,} bytes. "
            "Send less text per request."
        )


class AccessDeniedError(HymtError):
    """An API request without a valid key (missing, unknown, revoked) or with the API off."""


class QuotaExceededError(HymtError):
    """An API key's monthly character quota would be exceeded by this request."""

    def __init__(self, used: int, limit: int, asked: int) -> None:
        self.used, self.limit, self.asked = used, limit, asked
        super().__init__(
            f"This key's quota is {limit:,} characters a month; {used:,} are used and this "
            f"request has {asked:,}. It renews on the 1st (UTC)."
        )


class SidecarError(HymtError):
    """The vLLM sidecar cannot be launched as asked (bad profile, missing model, port taken...)."""


class ModelTimeoutError(ModelError):
    """One call took longer than the request timeout; retrying would only pile up load."""


class IncompleteTranslationError(ModelError):
    """Some parts could not be translated before their deadline; the others were.

    ``partial`` holds everything translated so far (a ``PartialTranslation`` or a document's
    ``PartialDocument``): the UI shows it with the missing parts marked and offers to retry only
    those; the CLI prints it and exits non-zero. Nothing translated is thrown away.
    """

    def __init__(self, partial: object, done: int, total: int, missing: list[int],
                 cause: BaseException) -> None:
        self.partial = partial
        self.done, self.total, self.missing = done, total, missing
        self.cause = cause
        super().__init__(
            f"Translated {done} of {total} parts; {_parts(missing)} could not be translated "
            f"({short_reason(cause)}) and {'is' if len(missing) == 1 else 'are'} marked "
            "[not translated]."
        )


def _parts(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:10]) + (" …" if len(numbers) > 10 else "")
    return f"part {shown}" if len(numbers) == 1 else f"parts {shown}"


# The one map from a model failure to its reason: a label for events and metrics, and the few
# words a sentence about several failures uses.
_REASONS: tuple[tuple[type[ModelError], str, str], ...] = (
    (ModelBusyError, "busy (503)", "the model server stayed busy"),
    (ModelUnavailableError, "unavailable", "the model server was not reachable"),
    (ModelTimeoutError, "timeout", "the model was too slow"),
)


def reason_label(err: BaseException | None) -> str:
    """"busy (503)", "unavailable", "timeout", "model error", or the type's name."""
    for kind, label, _ in _REASONS:
        if isinstance(err, kind):
            return label
    if isinstance(err, ModelError):
        return "model error"
    return type(err).__name__ if err is not None else ""


def short_reason(err: BaseException) -> str:
    """A few words for why a model call failed, for sentences that name several failures."""
    for kind, _, words in _REASONS:
        if isinstance(err, kind):
            return words
    return str(err).rstrip(".") or type(err).__name__


class CommandError(InputError):
    """A command the user typed cannot be carried out (missing argument, nothing to swap…)."""
