"""What every chat session shares, whatever its mode: jobs kept for buttons, the rate limit, the
warm-up queue, short messages one at a time, long work in the background (each with its own
Cancel), and how a failure is said (with Retry, or the part translated).

A mode (:mod:`~hymt_chat.modes.translator_session`, :mod:`~hymt_chat.modes.agent.session`,
:mod:`~hymt_chat.modes.kiosk_session`) subclasses :class:`Session` and says how to run its jobs.
Nothing here knows Chainlit: output goes to a :class:`~hymt_chat.modes.screen.Screen`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Generic, Literal, TypeVar

from hymt_chat.engine import chimera
from hymt_chat.engine.pacing import expected_seconds
from hymt_chat.engine.policy import segment_parallelism
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import PartsCancelled, Translator, is_long_text, model_calls
from hymt_chat.errors import (
    HymtError,
    IncompleteTranslationError,
    InputError,
    ModelError,
    ModelUnavailableError,
    NotTextError,
    RateLimitedError,
)
from hymt_chat.lang import detect
from hymt_chat.lang.languages import find_language
from hymt_chat.modes import documents, wording
from hymt_chat.modes.cost import priced
from hymt_chat.modes.desk import Desk
from hymt_chat.modes.page_text import PAGE_LANGUAGE, PageText
from hymt_chat.modes.progress import Progress
from hymt_chat.modes.room import Rooms
from hymt_chat.modes.screen import Attachment, Button, Reply, Screen, Shown
from hymt_chat.modes.warnings import file_warnings_markdown, with_warnings
from hymt_chat.service.health import is_demo_model
from hymt_chat.service.metrics import Metrics
from hymt_chat.service.ratelimit import RateLimiter
from hymt_chat.service.readiness import Readiness
from hymt_chat.settings import Settings
from hymt_chat.speech.audio import Samples
from hymt_chat.speech.listening import Utterances
from hymt_chat.speech.recognizer import Transcript
from hymt_chat.speech.service import Speech
from hymt_chat.speech.voices import Sound
from hymt_chat.store.audit import AuditLog
from hymt_chat.text import formats, values
from hymt_chat.text.segments import estimate_tokens
from hymt_chat.words.said import Code, Said, said

__all__ = ["BUTTONS", "KEPT_JOBS", "Job", "Kept", "Services", "Session", "Upload", "player"]

T = TypeVar("T")
K = TypeVar("K")
log = logging.getLogger("hymt_chat.session")
KEPT_JOBS = 20  # jobs kept per session for the Retry / Swap buttons
# Every button a mode shows (the app routes each to the session's :meth:`Session.button`).
_UNHEARD_MAX = 3  # utterances of one tab waiting to be heard (30 s of speech each at most)
BUTTONS = ("retry", "retry_rest", "swap", "translate_into", "kiosk_target", "room_close",
           "cancel_job", "correct", "desk_take", "desk_open", "room_send_anyway", "room_edit",
           "listen")
# The background job the current task runs (its progress line carries that job's Cancel).
_JOB: contextvars.ContextVar[str | None] = contextvars.ContextVar("hymt_job", default=None)
# The current task's progress line whose work is done: the next reply it shows replaces it.
_ENDED: contextvars.ContextVar[Progress | None] = contextvars.ContextVar("hymt_ended",
                                                                         default=None)


def player(sound: Sound) -> Attachment:
    """A reading as the audio shown under its answer. Its name is shown above the player: a
    sign, not a file name in Latin letters."""
    return Attachment("🔊", sound.wav, "audio/wav")


@dataclass(frozen=True, slots=True)
class Services:
    """The parts of the app's Runtime a session uses (one of each, built once by the app)."""

    settings: Settings
    translator: Translator  # wrapped by the metrics, so every translation is counted
    readiness: Readiness
    limiter: RateLimiter
    metrics: Metrics
    max_files: int = 5  # per message, the app's own: the page lets more through, the app says so
    rooms: Rooms | None = None  # the agents' rooms (None: no rooms in this process)
    desk: Desk | None = None  # the support desk's queue (None: no desk in this process)
    audit_log: AuditLog | None = None  # who read, corrected, took over (None: not recorded)
    speech: Speech | None = None  # the voice: a mic and answers read aloud (None: none)

    def __post_init__(self) -> None:
        # Load the detector's profiles and the value tables now, at the app's start, not inside
        # the first message (about a second with the event loop blocked, every tab waiting).
        detect.warm_up()
        values.warm_up()

    def demo(self) -> bool:
        """Is the model the small demo stand-in (said under every answer)?"""
        return is_demo_model(self.settings, self.readiness.model_root)

    async def best_available(self) -> bool:
        if self.readiness.model_root is None:  # the demo model plays Chimera: know which it is
            await self.readiness.current(max_age=5)
        return chimera.chimera_available(self.settings, demo=self.demo())


@dataclass(frozen=True, slots=True)
class Upload:
    """A file the browser uploaded: where it was saved, and its name."""

    path: str
    name: str


@dataclass(frozen=True, slots=True)
class Job:
    """One piece of work a message or a button asked for, kept so that Retry can redo it."""

    kind: Literal["text", "file", "agent", "kiosk", "room"]
    text: str = ""
    doc: documents.Document | None = None  # a file, read and checked when it arrived
    target: str | None = None  # kiosk: the language tapped; file: fixed at its first run
    source: str | None = None  # file: the source used (detected or chosen)
    detected: bool = False
    partial: Any = None  # Retry the rest: the PartialTranslation or PartialDocument
    done: int = 0  # parts already translated in *partial*
    room: str | None = None  # room: the token of the room the reply goes to (several: desk)

    @property
    def chars(self) -> int:
        """What the job costs against the character allowance."""
        if self.partial is not None:
            return len(self.partial.text)
        if self.doc is not None:
            return len(self.doc.text)
        return len(self.text)


@dataclass(slots=True)
class Kept(Generic[K]):
    """What the last buttons stand for (jobs for Retry; an agent's turns for Correct): the
    browser gets a random key, never the thing itself."""

    jobs: dict[str, K] = field(default_factory=dict)

    def keep(self, job: K) -> str:
        key = uuid.uuid4().hex
        self.jobs[key] = job
        while len(self.jobs) > KEPT_JOBS:
            self.jobs.pop(next(iter(self.jobs)))
        return key

    def get(self, payload: object) -> K | None:
        """The job a button stands for; None when it expired or the payload is not ours."""
        key = payload.get("key") if isinstance(payload, Mapping) else None
        return self.jobs.get(key) if isinstance(key, str) else None


class Session:
    """One chat tab. Short messages run one at a time, in order; documents, files and long
    pastes run as background jobs beside them, so the tab never waits for its own document (a
    one-liner typed meanwhile goes in the interactive class, ahead of the document's parts).
    Everything waits for the model to be ready."""

    def __init__(self, services: Services, screen: Screen, *, session_id: str,
                 user_key: str, page: PageText | None = None) -> None:
        self.services = services
        self.page = page or PageText()  # the page's language and its words (pickers, commands)
        self.settings = services.settings
        self.translator = services.translator
        self.screen = screen
        self.id = session_id  # fairness: the policy's queue is round-robin over these
        self.user_key = user_key  # the rate limit: a signed-in agent, else the client address
        self.kept: Kept[Job] = Kept()
        self.waiting: set[asyncio.Task[None]] = set()  # jobs waiting for the model to start
        self.inline: set[asyncio.Task[Any]] = set()  # messages running in their own task
        self.jobs: dict[str, asyncio.Task[None]] = {}  # background jobs by id, for their Cancel
        self.stopped: set[asyncio.Task[Any]] = set()  # cancelled by Stop: said, with Retry
        self.lock = asyncio.Lock()  # short messages: one at a time, in order
        self.listening: Utterances | None = None  # the live microphone's utterances
        self.hearing: asyncio.Task[None] | None = None  # the newest utterance being heard
        self.unheard = 0  # utterances taken and not yet heard (bounded: _UNHEARD_MAX)
        # The context this session was opened in (the UI's, e.g. Chainlit's session): output
        # that another connection causes (a room guest's message) is shown from within it.
        self._context = contextvars.copy_context()

    async def from_outside(self, work: Awaitable[T]) -> T:
        """Run *work* (showing output) as if it came from this session's own tab."""
        return await asyncio.get_running_loop().create_task(work,  # type: ignore[arg-type]
                                                            context=self._context.copy())

    # --- what a mode implements ---------------------------------------------------------------

    async def start(self) -> None:
        """A new chat: show the mode's settings, commands and greeting."""

    async def resume(self, chat_settings: Mapping[str, Any] | None) -> None:
        """A thread reopened (history): by default, a fresh start."""
        await self.start()

    async def shown(self) -> None:
        """The page shows the resumed thread now: what the mode says on a resume goes here (the
        page replaces what came before with the thread's own messages)."""

    async def settings_changed(self, values: Mapping[str, Any]) -> None:
        """The settings panel changed (a mode without settings ignores it)."""

    async def page_language_changed(self, values: Mapping[str, Any]) -> bool:
        """Did the reader pick another language for the page? Then the tab's own script
        loads the page again in it (``public/banner.js``), and the other settings wait."""
        chosen = find_language(str(values.get(PAGE_LANGUAGE) or ""))
        if chosen is None or chosen.code == self.page.language:
            return False
        await self.screen.signal({"hymt": PAGE_LANGUAGE, "code": chosen.code})
        return True

    async def message(self, text: str, command: str | None, *, uploads: Sequence[Upload] = (),
                      shown: Shown | None = None, spoken: str | None = None) -> None:
        """A message typed (with the composer's *command*, its *uploads*; *shown* is the message
        on screen, which the kiosk takes away again), or said in the language *spoken*."""
        raise NotImplementedError

    # --- voice ------------------------------------------------------------------------------

    async def audio_start(self, rate: int) -> bool:
        """The microphone opened (16-bit PCM at *rate* Hz follows): listen, or say in one line
        why voice is unavailable (typing goes on)."""
        speech = self.services.speech
        if speech is None or not speech.enabled:
            return False
        if await speech.ready() is not None:
            await self.say(said("voice_unavailable"))
            return False
        self.listening = speech.utterances(rate)
        self.touch()
        return True

    async def audio_chunk(self, data: bytes) -> None:
        """A piece of the stream: each utterance that ends in it is heard, in order."""
        if self.listening is None:
            return
        self.touch()
        for utterance in self.listening.feed(data):
            self._hear(utterance)

    async def audio_end(self) -> None:
        """The microphone closed: the utterance under way is heard; nothing at all, said."""
        listening, self.listening = self.listening, None
        if listening is None:
            return
        last = listening.flush()
        if last is not None:
            self._hear(last)
        elif not listening.heard_any:
            await self.say(said("voice_no_speech"))

    def _hear(self, samples: Samples) -> None:
        if self.unheard >= _UNHEARD_MAX:  # a stream faster than anyone speaks: not queued
            log.warning("utterance dropped: %d still waiting to be heard", self.unheard)
            return
        previous = self.hearing
        self.unheard += 1
        self.hearing = asyncio.get_running_loop().create_task(self._heard(samples, previous))
        self.inline.add(self.hearing)
        self.hearing.add_done_callback(self.inline.discard)

    async def _heard(self, samples: Samples, previous: asyncio.Task[None] | None) -> None:
        try:
            if previous is not None:  # one utterance after the other, as they were said
                await asyncio.wait([previous])
            speech = self.services.speech
            assert speech is not None
            try:
                transcript = await speech.hear(samples, self.spoken_hint())
            except HymtError as err:
                await self.say_error(err)
                return
            await self.spoken(transcript)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("an utterance could not be heard")
            await self.say(said("voice_unavailable"))
        finally:
            self.unheard -= 1

    def spoken_hint(self) -> str | None:
        """The language the speaker is known to speak, if any (None: Whisper detects it)."""
        return None

    async def spoken(self, transcript: Transcript) -> None:
        """What was said: shown as the speaker's own message, then taken as typed text whose
        source is the language it was spoken in."""
        shown = await self.screen.heard(transcript.text)
        await self.message(transcript.text, None, shown=shown, spoken=transcript.language)

    async def read_aloud(self, text: str, code: str) -> Sound | None:
        """*text* in the server's voice for *code* (None: voice off, or no voice reads it)."""
        speech = self.services.speech
        return await speech.speak(text, code) if speech is not None else None

    def listen_button(self, text: str, code: str) -> tuple[Button, ...]:
        """"Listen" under an answer a server voice can read (the browser may have none). The
        button carries a key to the answer this session keeps, never its text: a button's
        payload comes back from the browser, and the server reads only what it said."""
        speech = self.services.speech
        if speech is None or speech.voice_for(code) is None:
            return ()
        key = self.kept.keep(Job("text", text, target=code))
        return (Button("listen", self.page["voice_listen"], {"key": key}, "volume-2"),)

    async def listen(self, payload: object) -> None:
        self.touch()
        job = self.kept.get(payload)
        if job is None or job.target is None:
            await self.say(said("button_expired"))
            return
        sound = await self.read_aloud(job.text, job.target)
        if sound is None:
            await self.say(said("voice_none", language=Code(job.target)))
            return
        await self.show(Reply("", sound=player(sound), play=True))

    async def button(self, name: str, payload: object, label: str,
                     remove: Callable[[], Awaitable[object]]) -> None:
        """A button under one of our replies was pressed; *remove* takes it away. Retry is
        every mode's; the others are the mode's own (a stale button of another mode: ignored)."""
        if name in ("retry", "retry_rest"):
            await remove()
            await self.retry(payload)
        elif name == "cancel_job":
            await remove()
            await self.cancel_job(payload)
        elif name == "listen":
            await self.listen(payload)

    async def execute(self, job: Job) -> None:
        raise NotImplementedError

    async def window_message(self, data: object) -> None:
        """A message of the tab's own script (``public/desk.js``): the agent mode's typing;
        the other modes have none."""

    def touch(self) -> None:
        """Someone used the session (the kiosk restarts its idle clock)."""

    def title(self) -> str | None:
        """A name for the tab's thread in the history, from its conversation: its first real
        words (never a command); None while there are none (the app names the thread once
        there are: Chainlit would list "/room close" or "Untitled Conversation")."""
        return None

    # --- output -----------------------------------------------------------------------------

    async def show(self, reply: Reply) -> None:
        await self.place(reply)

    async def place(self, reply: Reply) -> Shown:
        """Show *reply*: in place of the progress line of the work it answers, if one is on
        screen (:meth:`finished`), else as a new message."""
        line = _ENDED.get()
        if line is not None:
            _ENDED.set(None)
            return await line.become(reply)
        return await self.screen.send(reply)

    async def read_upload(self, upload: Upload) -> documents.Document | None:
        """The uploaded file as a document, read off the event loop; None when it cannot be
        read, said to the user in one sentence."""
        try:
            return await asyncio.to_thread(documents.read_upload, upload.path, upload.name,
                                           max_chars=self.settings.max_input_chars)
        except (HymtError, OSError) as err:
            await self.say_error(err if isinstance(err, HymtError) else NotTextError.worded(
                "upload_unreadable"))
            return None

    async def text_in_pictures(self, uploads: Sequence[Upload]) -> str | None:
        """The text OCR finds in the pictures sent (a customer's screenshot, a sign held up at
        the kiosk), paragraphs in reading order, to be translated as a message; None, said,
        for anything else, or for more files than a message may carry (the modes that take
        pictures as messages)."""
        if len(uploads) > self.services.max_files:
            await self.say(said("too_many_files", limit=self.services.max_files,
                                count=len(uploads)))
            return None
        found = []
        for upload in uploads:
            doc = await self.read_upload(upload)
            if doc is None:
                return None
            if doc.kind not in formats.PICTURES:
                await self.say(said("picture_only", name=doc.name))
                return None
            found.append(doc.text)
        return "\n\n".join(found)

    async def say(self, text: Said | str, buttons: tuple[Button, ...] = ()) -> None:
        """A sentence of ours, shown literally, in the page's language."""
        await self.show(Reply(wording.escape_markdown(self.page.say(text)), buttons))

    async def say_error(self, err: BaseException, retry: Job | None = None) -> None:
        """A refusal as it is; a failure with a Retry button for *retry* when it may pass."""
        if isinstance(err, InputError):
            await self.say(self.page.error(err))
            return
        text = self.page.error(err) if isinstance(err, HymtError) else self.page["unexpected_error"]
        buttons: tuple[Button, ...] = ()
        if retry is not None and (isinstance(err, ModelError) or not isinstance(err, HymtError)):
            buttons = (self._retry_button(retry),)
            if "press Retry" not in text:
                text = f"{text} {self.page['kept_hint']}"
        await self.say(text, buttons)

    def progress(self, title: str, *, always: bool = False, base: int = 0,
                 text: str | None = None, klass: str = BULK) -> Progress:
        """A job's progress line; a background job's is shown at once, with its Cancel.
        With the *text* it translates (as request class *klass*), the line has an estimate
        before its first part is back (:meth:`pace`)."""
        pace = self.pace(text, klass) if text is not None else {}
        job_id = _JOB.get()
        if job_id is None:
            return Progress(self.screen.progress(), title, always=always, base=base,
                            page=self.page, **pace)
        cancel = Button("cancel_job", self.page["cancel"], {"job": job_id}, "x",
                        self.page["cancel_tip"])
        return Progress(self.screen.progress(cancel), title, always=True, base=base,
                        page=self.page, **pace)

    def pace(self, text: str, klass: str = BULK) -> dict[str, Any]:
        """What a progress line of *text* estimates its time with: the parts sent at once
        (the policy's share for *klass*, re-read), and the seconds the whole should take at
        the decode rate measured on this server (None until one answer was measured)."""
        policy, concurrency = self.translator.policy, self.settings.segment_concurrency

        def parallel() -> int:
            return segment_parallelism(policy, concurrency, klass)

        rate = getattr(getattr(self.translator, "client", None), "decode_rate", None)
        expected = None
        if rate is not None and rate.measured:
            expected = expected_seconds(estimate_tokens(text), model_calls(text, self.settings),
                                        rate.value, parallel())
        return {"expected": expected, "parallel": parallel}

    def _retry_button(self, job: Job) -> Button:
        return Button("retry", self.page["retry"], {"key": self.kept.keep(job)}, "refresh-cw",
                      self.page["retry_tip"])

    # --- admission and the queue ------------------------------------------------------------

    async def charge(self, key: str, *jobs: Job) -> None:
        """Charge *jobs* to *key*, as one, at what they cost (:mod:`~hymt_chat.modes.cost`,
        :func:`~hymt_chat.modes.cost.priced`); RateLimitedError over a limit."""
        cost = await priced(jobs, self.settings)
        await self.services.limiter.ahit(key, cost)

    async def admit(self, *jobs: Job) -> bool:
        """Charge *jobs* to the user; False, said, when over a limit."""
        try:
            await self.charge(self.user_key, *jobs)
        except RateLimitedError as err:
            await self.say(self.page.error(err))
            return False
        return True

    def is_background(self, job: Job) -> bool:
        """Documents, files and long pastes (more parts than ``HYMT_BULK_SEGMENTS``, the same
        line that makes them bulk work) run in the background: the tab stays free meanwhile."""
        return (job.kind == "file" or job.partial is not None
                or is_long_text(job.text, self.settings))

    async def when_ready(self, job: Job, *, inline: bool) -> None:
        """Run *job* now if the model is ready; while it starts, queue it and say so.

        *inline*: called from the message's own task, which Chainlit's Stop cancels. A button's
        job runs as a task of the session's queue (its HTTP request must return), in order.
        A background job (:meth:`is_background`) always runs as a task of its own, at once.
        """
        readiness = self.services.readiness
        model = await readiness.current(max_age=5)
        background = self.is_background(job)
        if model == "ready" and not self.waiting and inline and not background:
            # Stop cancels this task itself: Chainlit's current_task is whichever handler set
            # it last, and a message sent while the tab's connection_successful still emits
            # loses it to on_chat_start's task (Stop then left the call running on vLLM).
            task = asyncio.current_task()
            assert task is not None  # a coroutine always runs in a task
            self.inline.add(task)
            try:
                async with self.lock:
                    await self.run(job)
            except asyncio.CancelledError:
                await self._said_stopped(task, job)
                raise
            finally:
                self.inline.discard(task)
                self.stopped.discard(task)
            return
        if model == "down" and not self.waiting:
            await self.say_error(ModelUnavailableError.worded("model_down"), retry=job)
            return
        if background:
            self._start_job(job, wait=model != "ready")
        else:
            async def later() -> None:
                try:
                    if await self._model_started(job):
                        async with self.lock:
                            await self.run(job)
                except asyncio.CancelledError:
                    await self._said_stopped(task, job)
                    raise
                finally:
                    self.waiting.discard(task)
                    self.stopped.discard(task)

            task = asyncio.get_running_loop().create_task(later())
            self.waiting.add(task)
        if model != "ready":
            await self.say(wording.warming_up_message(model, len(self.waiting), self.page))

    async def _model_started(self, job: Job) -> bool:
        """Wait for the model; False, said with a Retry for *job*, when it never came up."""
        if await self.services.readiness.wait_ready(self.settings.startup_timeout):
            return True
        message = wording.still_not_ready_message(self.settings.startup_timeout, self.page)
        await self.say_error(ModelUnavailableError(message), retry=job)
        return False

    def _start_job(self, job: Job, *, wait: bool) -> None:
        """Run *job* in the background, as a task of its own with an id its Cancel names."""
        job_id = uuid.uuid4().hex

        async def background() -> None:
            _JOB.set(job_id)  # this task's context only: its progress line gets the Cancel
            try:
                if wait:
                    if not await self._model_started(job):
                        return
                    self.waiting.discard(task)
                await self.run(job)
            except asyncio.CancelledError:
                pass  # Cancel, or the tab closed: the line said so (finished), nothing else to do
            finally:
                self.waiting.discard(task)
                self.jobs.pop(job_id, None)

        task = asyncio.get_running_loop().create_task(background())
        self.jobs[job_id] = task
        if wait:
            self.waiting.add(task)  # Stop drops it like any job waiting for the model

    async def cancel_job(self, payload: object) -> None:
        """One background job's Cancel: that job stops (its model calls are closed, vLLM aborts
        them); the tab's other jobs go on. A job already finished is said so."""
        job_id = payload.get("job") if isinstance(payload, Mapping) else None
        task = self.jobs.get(job_id) if isinstance(job_id, str) else None
        if task is None:
            await self.say(self.page["job_over"])
            return
        task.cancel()

    @property
    def busy(self) -> bool:
        """Is a translation of this tab still on its way (queued, running, in the background)?"""
        return any(not task.done() for task in (*self.waiting, *self.inline, *self.jobs.values()))

    async def settled(self) -> None:
        """Wait until every job of this tab, queued or in the background, is over."""
        while pending := {*self.waiting, *self.jobs.values()}:
            await asyncio.gather(*pending, return_exceptions=True)

    async def run(self, job: Job) -> None:
        _ENDED.set(None)
        try:
            await self.execute(job)
        except Exception as err:  # a bug must cost one message, not the session
            log.exception("translation job failed")
            await self.say_error(err, retry=job)
        # Not reached when cancelled: a Stop's message takes the line's place (_said_stopped).
        line = _ENDED.get()
        if line is not None:  # a job that showed no reply: its line says it is done
            _ENDED.set(None)
            await line.view.close(line.name(), failed=False)

    async def rerun(self, job: Job | None) -> None:
        """Run a button's kept job again: said when it expired; charged like a message."""
        if job is None:
            await self.say(self.page["expired_job"])
            return
        if await self.admit(job):
            await self.when_ready(job, inline=False)

    async def retry(self, payload: object) -> None:
        """Retry, and Retry the rest (whose kept job holds only the missing parts)."""
        self.touch()
        await self.rerun(self.kept.get(payload))

    def stop(self) -> None:
        """Stop: drop the jobs waiting for the model and the running message (its model call is
        closed, vLLM aborts it); each says so, with Retry. A background job has its own
        Cancel, so Stop leaves it running."""
        for task in (*self.waiting, *self.inline):
            if not task.done():
                self.stopped.add(task)
                task.cancel()

    def drop(self) -> None:
        """Cancel the running message and the jobs waiting for the model, without a word (the
        tab closed, or the kiosk starts afresh)."""
        for task in (*self.waiting, *self.inline):
            task.cancel()
        self.listening = None  # a closed tab's microphone buffer goes with it

    async def _said_stopped(self, task: asyncio.Task[Any] | None, job: Job) -> None:
        """A job cancelled by Stop (not by the tab closing): say so, with its Retry."""
        if task is None or task not in self.stopped:
            return
        self.stopped.discard(task)
        task.uncancel()  # the message is said; the task still ends cancelled (raised again)
        await self.say(self.page["stopped"], (self._retry_button(job),))

    def end(self) -> None:
        """The tab closed: let go of everything kept at once (Chainlit keeps a closed session
        for its reconnect window, which held every large paste in memory for an hour)."""
        self.drop()
        for task in self.jobs.values():
            task.cancel()
        self.kept = Kept()
        self.screen.forget()

    # --- running a translation --------------------------------------------------------------

    async def finished(self, progress: Progress, job: Job, work: Awaitable[T]) -> T | None:
        """Await a translation under its progress line, which the message that follows replaces
        (the answer; or, after a failure, one message with what was translated or Retry);
        None tells the caller to stop."""
        if not progress.shown:
            await progress.start()  # a background job's line (its Cancel) shows from the start
        try:
            result = await work
        except asyncio.CancelledError as err:
            if asyncio.current_task() in self.stopped:
                await self._ended(progress)  # Stop's message, with Retry, takes its place
            elif isinstance(err, PartsCancelled):  # a job's Cancel once parts were done
                await self._ended(progress)
                await self.say_cancelled(err, job)  # they take the line's place, kept
            else:
                await progress.finish(cancelled=True)  # a job's Cancel: the line says so
            raise
        except IncompleteTranslationError as err:
            await self._ended(progress)
            await self.say_partial(err, job)
            return None
        except HymtError as err:
            await self._ended(progress)
            await self.say_error(err, retry=job)
            return None
        await self._ended(progress)
        return result

    @staticmethod
    async def _ended(progress: Progress) -> None:
        """The work under *progress* is over: the message that says how (the answer, what was
        translated, the failure) takes the line's place, if it is on screen."""
        if await progress.end():
            _ENDED.set(progress)

    async def translate_rest(self, job: Job) -> None:
        """Retry the rest of a text: only the parts marked missing are sent again."""
        progress = self.progress(self.page["translating_rest"], base=job.done)
        result = await self.finished(progress, job, self.translator.translate_rest(
            job.partial, user=self.id, on_progress=progress.progress, on_event=progress.event))
        if result is not None:
            meta = wording.format_meta(result, demo=self.services.demo(), page=self.page)
            await self.show(Reply(with_warnings(wording.answer_markdown(result.text, meta),
                                                result.warnings, self.page)))

    async def say_cancelled(self, err: PartsCancelled, job: Job) -> None:
        """A job cancelled once some of its parts were done: what they say (a file: the
        partial file, the rest marked), that the rest was cancelled, and the button that
        translates only the rest."""
        rest = Job(job.kind, job.text, job.doc, job.target, job.source, job.detected,
                   err.partial, err.done)
        buttons = (Button("retry_rest", self.page["retry_rest"], {"key": self.kept.keep(rest)},
                          "refresh-cw", self.page["retry_rest_tip"]),)
        sentence = self.page.fill("cancelled_after", done=err.done, total=err.total)
        if job.kind == "file" and job.doc is not None and job.target is not None:
            full = PurePath(documents.output_name(job.doc.name, job.target))
            name = f"{full.stem}.partial{full.suffix}"
            text = err.partial.text  # type: ignore[attr-defined]
            data = await asyncio.to_thread(job.doc.encode, text, job.target)  # a zip, off the loop
            content = f"{wording.escape_markdown(sentence)} {self.page['retry_rest_hint']}"
            await self.show(Reply(content, buttons, (Attachment(name, data, job.doc.mime),)))
            return
        found = [f for _, part in getattr(err.partial, "findings", ()) for f in part]
        so_far = err.partial.so_far  # type: ignore[attr-defined]
        await self.show(Reply(with_warnings(
            wording.partial_answer_markdown(so_far, sentence, self.page), found, self.page),
            buttons))

    async def say_partial(self, err: IncompleteTranslationError, job: Job) -> None:
        """Everything translated so far, in place, and a button that resends only the rest."""
        rest = Job(job.kind, job.text, job.doc, job.target, job.source, job.detected,
                   err.partial, err.done)
        buttons = (Button("retry_rest", self.page["retry_rest"], {"key": self.kept.keep(rest)},
                          "refresh-cw", self.page["retry_rest_tip"]),)
        text = err.partial.text  # type: ignore[attr-defined]
        if job.kind == "file" and job.doc is not None and job.target is not None:
            full = PurePath(documents.output_name(job.doc.name, job.target))
            name = f"{full.stem}.partial{full.suffix}"
            data = await asyncio.to_thread(job.doc.encode, text, job.target)  # a zip, off the loop
            files = (Attachment(name, data, job.doc.mime),)
            content = (f"{wording.escape_markdown(self.page.error(err))} "
                       f"{self.page['retry_rest_hint']}")
            if isinstance(err.partial, documents.PartialDocument):  # what the parts done hold
                flagged = file_warnings_markdown(err.partial.flags, page=self.page)
                content = f"{content}\n\n{flagged}" if flagged else content
            await self.show(Reply(content, buttons, files))
            return
        found = [f for _, part in getattr(err.partial, "findings", ()) for f in part]
        await self.show(Reply(with_warnings(
            wording.partial_answer_markdown(text, self.page.error(err), self.page), found,
            self.page), buttons))
