"""One error hierarchy, so the UI and the CLI can each turn any failure into one clear sentence."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Self

from hymt_chat.words.said import Said, said


class HymtError(Exception):
    """Base of every error hymt-chat raises on purpose; ``str(err)`` is meant for the user, in
    English. An error made by :meth:`worded` (or marked by :meth:`saying`) also keeps its
    sentence as a :class:`Said`, so that a page says it in its reader's language
    (:meth:`hymt_chat.modes.page_text.PageText.error`)."""

    said: Said | None = None

    @classmethod
    def worded(cls, key: str, **slots: object) -> Self:
        """The error whose sentence is the chat's message *key* with *slots* filled in."""
        sentence = said(key, **slots)
        err = cls(str(sentence))
        err.said = sentence
        return err

    def saying(self, key: str, **slots: object) -> Self:
        """This error, said on a page as the chat's message *key* with *slots*, its own English
        kept as ``str(err)`` (for logs, the API and the CLI, which may tell more: a parser's
        line, a part's name)."""
        self.said = said(key, **slots)
        return self


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
        self.said = said("too_long", size=size, limit=limit)


class NotTextError(InputError):
    """Input that is binary or not UTF-8."""


class CommandError(InputError):
    """A command the user typed cannot be carried out (missing argument, nothing to swap…)."""


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

    def __init__(self, retry_after: float, too_big: tuple[int, int] | None = None,
                 unit: str = "characters") -> None:
        """*too_big*: (this job's size, the whole allowance) in *unit* ("characters", "model
        calls"), for a job that can never pass."""
        self.retry_after = retry_after
        if too_big is not None:
            size, allowance = too_big
            super().__init__(
                f"This is {size:,} {unit}; one user may send at most {allowance:,} in that "
                "time. Split it into smaller parts."
            )
            key = "rate_too_big_calls" if unit == "model calls" else "rate_too_big_chars"
            self.said = said(key, size=size, allowance=allowance)
            return
        seconds = max(1, round(retry_after))
        super().__init__(f"You are sending more than allowed; try again in {seconds} s.")
        self.said = said("rate_limited", seconds=seconds)


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


class MetricsError(HymtError):
    """The model server's ``/metrics`` does not say what it runs (missing, slow, not vLLM's,
    impossible numbers); *down*: the server did not answer at all (not a metrics problem).

    The message names the page (its address: for the logs and ``doctor``); *public* is the
    same state in words with no address, path or key, for anyone who asks ``/health``."""

    def __init__(self, message: str, *, down: bool = False, public: str = "") -> None:
        super().__init__(message)
        self.down = down
        self.public = public or (METRICS_DOWN if down else METRICS_UNREADABLE)


METRICS_DOWN = "the model server does not answer"
METRICS_SLOW = "the model server's load figures come too late"
METRICS_MISSING = "the model server publishes no load figures"
METRICS_REFUSED = "the model server refuses to show its load figures"
METRICS_UNREADABLE = "the model server's load figures cannot be read"
METRICS_IMPOSSIBLE = "the model server's load figures are impossible"


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


@dataclass(frozen=True, slots=True)
class Reason:
    """How one kind of failure is named, wherever it is named."""

    outcome: str  # the metrics' ``outcome`` label of a failed translation
    label: str | None = None  # policy events and logs; None: the error type's name
    words: str | None = None  # in a sentence naming several failures; None: the error's own
    fusion: str | None = None  # in Best quality's note, when the fusion call failed this way


# The one map from a failure to its reason, first match wins (subclasses before their bases).
_REASONS: tuple[tuple[type[BaseException], Reason], ...] = (
    (asyncio.CancelledError, Reason("cancelled")),
    (InputError, Reason("refused")),
    (RateLimitedError, Reason("rate_limited")),
    (IncompleteTranslationError, Reason("incomplete", "model error",
                                        fusion="the fusion model failed")),
    (ModelBusyError, Reason("busy", "busy (503)", "the model server stayed busy",
                            "the fusion model is busy")),
    (ModelUnavailableError, Reason("unavailable", "unavailable",
                                   "the model server was not reachable",
                                   "the fusion model is not reachable")),
    (ModelTimeoutError, Reason("timeout", "timeout", "the model was too slow",
                               "the fusion model took too long")),
    (ModelError, Reason("model_error", "model error", fusion="the fusion model failed")),
)
_OTHER = Reason("error")
_BY_LABEL = {reason.label: reason for _, reason in _REASONS if reason.label}

# HTTP statuses of a model server that mean the same whichever server answered: what it did,
# and the setting to check (after the HYMT_ or HYMT_FUSION_ prefix).
_STATUS: dict[int, tuple[str, str]] = {
    401: ("refused the API key", "API_KEY"),
    403: ("refused the API key", "API_KEY"),
    404: ("does not serve that model", "MODEL"),
}


def reason_of(err: BaseException | None) -> Reason:
    """The row of :data:`_REASONS` for *err* (``outcome="error"`` when none matches)."""
    for kind, reason in _REASONS:
        if isinstance(err, kind):
            return reason
    return _OTHER


def reason_by_label(label: str) -> Reason | None:
    """The reason a policy event names by its label ("busy (503)"…), or None."""
    return _BY_LABEL.get(label)


def reason_label(err: BaseException | None) -> str:
    """"busy (503)", "unavailable", "timeout", "model error", or the type's name."""
    if err is None:
        return ""
    return reason_of(err).label or type(err).__name__


def short_reason(err: BaseException) -> str:
    """A few words for why a model call failed, for sentences that name several failures."""
    return reason_of(err).words or str(err).rstrip(".") or type(err).__name__


def status_words(status: int | None) -> tuple[str, str] | None:
    """(what the server did, the setting to check) for an HTTP status with a fixed meaning."""
    return _STATUS.get(status) if status is not None else None


def http_status(err: BaseException) -> int | None:
    """The HTTP status behind a model error (the SDK's ``APIStatusError`` it was mapped
    from), if any."""
    status = getattr(err.__cause__, "status_code", None)
    return status if isinstance(status, int) else None


INTERNAL_ERROR = "The server failed on this request (logged); try again, or tell its operator."


def public_text(err: BaseException) -> str:
    """What an error says to someone outside: its sentence without where the model server is
    (``public``, set by the client's error mapping; a log or the CLI keep the full one), and
    for a bug — not one of ours — no exception text at all."""
    if not isinstance(err, HymtError):
        return INTERNAL_ERROR
    public = getattr(err, "public", None)
    return public if isinstance(public, str) else (str(err) or type(err).__name__)
