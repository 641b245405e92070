"""The Translator mode: pick the languages, paste text or drop files, get translations.

Its state is a :class:`~hymt_chat.modes.chat.ChatState`; its decisions — commands, what a file
costs, when the text is already in the target language and which buttons that offers, Best
quality — are here, driven by a unit test without Chainlit.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, cast

from hymt_chat.engine import chimera
from hymt_chat.engine.policy import segment_parallelism
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translation, Translator, plan_translation
from hymt_chat.errors import HymtError, InputTooLongError
from hymt_chat.lang.detect import detect_language
from hymt_chat.lang.names import AUTO
from hymt_chat.modes import chat, documents, wording
from hymt_chat.modes.chat import ChatState
from hymt_chat.modes.page_text import PageText
from hymt_chat.modes.progress import Progress
from hymt_chat.modes.screen import (
    Attachment,
    Button,
    Choice,
    Field,
    Reply,
    Screen,
    Shown,
    Toggle,
)
from hymt_chat.modes.session import Job, Services, Session, Upload
from hymt_chat.modes.warnings import file_warnings_markdown, with_warnings
from hymt_chat.service.metrics import outcome_of
from hymt_chat.text import formats
from hymt_chat.text.cleanup import clean_text, headline, is_blank
from hymt_chat.words.said import said

__all__ = ["QUICK_TARGETS", "TranslatorSession"]

QUICK_TARGETS = ("zh", "en", "es", "fr", "ja", "de")  # offered when the text is in the target


class TranslatorSession(Session):
    def __init__(self, services: Services, screen: Screen, *, session_id: str,
                 user_key: str, page: PageText | None = None) -> None:
        super().__init__(services, screen, session_id=session_id, user_key=user_key, page=page)
        self.state = ChatState.new(self.settings.default_target)
        self.best = False
        self._title: str | None = None  # the thread's name: its first text, or file's name

    # --- settings and commands --------------------------------------------------------------

    async def start(self) -> None:
        await self.send_pickers()
        await self._composer()

    async def _composer(self) -> None:
        """The command menu, and the empty box saying which languages it translates between
        ("Auto-detect → English: type or paste text…"): what a first load shows of the
        languages, whose pickers are behind the settings' button."""
        pair = wording.settings_pair(self.state, self.page)
        await self.screen.commands([(cid, self.page[f"command_{cid}"], icon)
                                    for cid, _, icon in chat.COMMANDS],
                                   self.page.fill("placeholder_pair", pair=pair))

    def title(self) -> str | None:
        return self._title

    async def resume(self, chat_settings: Mapping[str, Any] | None) -> None:
        """A thread reopened: its pickers as they were (an unknown value keeps the default)."""
        try:
            self.state.set_languages(**{k: v for k, v in (chat_settings or {}).items()
                                        if k in ("source", "target") and isinstance(v, str)})
        except HymtError:
            pass
        await self.start()

    async def send_pickers(self) -> None:
        fields: list[Field] = [
            Choice("source", self.page["from"], self.page.choices(include_auto=True),
                   self.state.source),
            Choice("target", self.page["into"], self.page.choices(include_auto=False),
                   self.state.target),
        ]
        if await self.services.best_available():
            stand_in = self._stand_in()
            fields.append(Toggle("best", wording.best_label(True, self.page) if stand_in else self.page["best"],
                                 self.best, self.page["best_tip"]))
        await self.screen.settings([*fields, self.page.page_choice()])

    def _stand_in(self) -> bool:
        """Does the demo model play Hunyuan-MT-Chimera (Best quality says so)?"""
        return chimera.fusion_stand_in(self.settings, demo=self.services.demo())

    async def settings_changed(self, values: Mapping[str, Any]) -> None:
        if await self.page_language_changed(values):
            return
        self.best = bool(values.get("best"))
        try:
            changed = self.state.set_languages(values.get("source"), values.get("target"))
        except HymtError as err:
            await self.say_error(err)
            return
        if changed:
            await self._composer()
            await self.say(wording.settings_changed_message(self.state, self.page))

    async def command(self, command: chat.Command) -> None:
        state = self.state
        try:
            if isinstance(command, chat.ToCommand):
                state.set_languages(target=command.language.code)
            elif isinstance(command, chat.SwapCommand):
                state.swap()
            elif isinstance(command, chat.ResetCommand):
                state.reset(self.settings.default_target)
            elif isinstance(command, chat.DetectCommand):
                if command.text.strip():
                    await self.say(wording.detect_message(
                        detect_language(clean_text(command.text)), self.page))
                else:
                    await self.say(wording.last_detected_message(state.last_detected, self.page))
                return
        except HymtError as err:
            await self.say_error(err)
            return
        await self._languages_changed()

    async def _languages_changed(self) -> None:
        await self.send_pickers()
        await self._composer()
        await self.say(wording.settings_changed_message(self.state, self.page))

    async def swap(self, payload: object,
                   done: Callable[[], Awaitable[object]] | None = None) -> None:
        """The Swap button under "already in the target language": swap, then translate;
        *done* (taking the button away) is called once the swap went through."""
        try:
            self.state.swap()
        except HymtError as err:
            await self.say_error(err)
            return
        if done is not None:
            await done()
        await self._languages_changed()
        await self.rerun(self.kept.get(payload))

    async def translate_into(self, payload: Mapping[str, Any]) -> None:
        """A quick-target button: that language, then translate the kept text into it."""
        try:  # the payload comes from the browser: check it like any input
            self.state.set_languages(target=str(payload.get("target", "")))
        except HymtError as err:
            await self.say_error(err)
            return
        await self._languages_changed()
        await self.rerun(self.kept.get(payload))

    # --- messages ---------------------------------------------------------------------------

    async def button(self, name: str, payload: object, label: str,
                     remove: Callable[[], Awaitable[object]]) -> None:
        if name == "swap":
            await self.swap(payload, done=remove)
        elif name == "translate_into" and isinstance(payload, Mapping):
            await self.translate_into(payload)
        else:
            await super().button(name, payload, label, remove)

    def spoken_hint(self) -> str | None:
        """The source the reader chose, if any: Whisper hears it rather than guessing."""
        return None if self.state.source == AUTO else self.state.source

    async def message(self, text: str, command: str | None, *, uploads: Sequence[Upload] = (),
                      shown: Shown | None = None, spoken: str | None = None) -> None:
        """A message: a command (free), or its files and text (charged by size, then run)."""
        try:
            parsed = chat.parse_command(text, command)
        except HymtError as err:
            await self.say_error(err)
            return
        if parsed is not None:
            await self.command(parsed)
            return
        jobs = await self._file_jobs(uploads)
        if jobs is None:
            return
        if not is_blank(text):
            jobs.append(Job("text", text, source=spoken))
        if self._title is None and jobs:  # the thread is named after its first real message
            first = next((job for job in jobs if job.doc is None), jobs[0])
            self._title = headline(first.text) if first.doc is None else first.doc.name
        size = sum(job.chars for job in jobs)
        if size > self.settings.max_input_chars:  # files count against the same limit as text
            await self.say_error(InputTooLongError(size, self.settings.max_input_chars))
            return
        if jobs and await self.admit(*jobs):
            for job in jobs:
                await self.when_ready(job, inline=True)

    async def _file_jobs(self, uploads: Sequence[Upload]) -> list[Job] | None:
        """The message's files, read and checked now (type, size, characters, how many);
        None, said, when one is refused."""
        limit = self.services.max_files
        if len(uploads) > limit:
            await self.say(said("too_many_files", limit=limit, count=len(uploads)))
            return None
        jobs = []
        for upload in uploads:
            doc = await self.read_upload(upload)
            if doc is None:
                return None
            jobs.append(Job("file", doc=doc))
        return jobs

    async def execute(self, job: Job) -> None:
        if job.partial is not None:
            await self._translate_rest(job)
        elif job.kind == "file":
            await self._translate_file(job)
        else:
            await self._translate_text(job)

    # --- text -------------------------------------------------------------------------------

    async def _translate_text(self, job: Job) -> None:
        state = self.state
        # Said aloud: the language it was spoken in, unless the reader chose the source.
        source = state.source if state.source != AUTO else job.source or AUTO
        try:
            plan = plan_translation(job.text, state.target, source, self.settings)
        except HymtError as err:
            await self.say_error(err)
            return
        if plan.same_language:
            state.remember(plan.source)
            await self._same_language(job)
            return
        best = self.best and await self.services.best_available()
        progress = self.progress(self.page["translating_best" if best else "translating"],
                                 text=plan.text, klass=self.translator.request_class(plan))
        fused: chimera.BestTranslation | None = None
        if best:
            fused = await self.finished(progress, job, self._translate_best(job.text, progress))
            if fused is None:
                return
            result = fused.translation
        else:
            plain = await self.finished(progress, job, self.translator.translate(
                job.text, state.target, source, user=self.id, plan=plan,
                on_progress=progress.progress, on_event=progress.event))
            if plain is None:
                return
            result = plain
        state.remember(result.source)
        meta = wording.format_meta(result, demo=self.services.demo(), page=self.page)
        if fused is not None:
            note = wording.best_meta(meta, chimera.best_note(fused, stand_in=self._stand_in()),
                                     downgraded=fused.downgraded)
            body = f"{wording.literal_block(result.text)}\n\n{note}"
        else:
            body = wording.answer_markdown(result.text, meta)
        await self.show(Reply(with_warnings(body, result.warnings, self.page),
                              self.listen_button(result.text, result.target)))

    async def _translate_best(self, text: str, progress: Progress) -> chimera.BestTranslation:
        """Best quality through the translator inside the metrics' wrapper (chimera re-sizes
        segments with a Translator of its own), counted in /metrics like any translation."""
        metrics, state = self.services.metrics, self.state
        started = time.monotonic()
        # Services types its translator as a Translator; it is the metrics' wrapper of one.
        inner = cast(Translator, getattr(self.translator, "wrapped", self.translator))
        try:
            fused = await chimera.translate_best(
                inner, text, state.target, state.source, user=self.id,
                on_progress=progress.progress, on_event=progress.event)
        except Exception as err:
            metrics.observe_translation(state.source, state.target, outcome_of(err))
            raise
        result = fused.translation
        metrics.observe_translation(result.source, result.target,
                                    "same_language" if result.same_language else "ok",
                                    time.monotonic() - started)
        return fused

    async def _same_language(self, job: Job) -> None:
        """Already in the target: offer Swap when there is another side, else quick targets."""
        state = self.state
        can_swap = state.source != AUTO or state.previous not in (None, state.target)
        key = self.kept.keep(job)
        if can_swap:
            buttons: tuple[Button, ...] = (Button("swap", self.page["swap_translate"],
                                                  {"key": key}, "arrow-left-right"),)
        else:
            buttons = tuple(Button("translate_into", self.page.name_of(code),
                                   {"key": key, "target": code})
                            for code in QUICK_TARGETS if code != state.target)
        await self.say(wording.same_language_message(state.target, can_swap=can_swap,
                                                     page=self.page), buttons)

    # --- files ------------------------------------------------------------------------------

    def _document_share(self) -> int:
        """Pieces of a file translated at once: the documents' share of the window."""
        return segment_parallelism(self.translator.policy, self.settings.segment_concurrency,
                                   BULK)

    def _document_translate(self, target: str, source: str | None,
                            progress: Progress) -> documents.Translate:
        """A file's translate callback: each part's translation with its warnings, which
        documents collects by part for the file's answer."""
        async def translate(text: str, *, on_progress: Any = None) -> Translation:
            return await self.translator.translate(
                text, target, source or AUTO, user=self.id, on_progress=on_progress,
                on_event=progress.event, klass=BULK)
        return translate

    def _document_resume(self, progress: Progress) -> documents.Resume:
        async def resume(partial: Any, *, on_progress: Any = None) -> Translation:
            return await self.translator.translate_rest(
                partial, user=self.id, on_progress=on_progress, on_event=progress.event)
        return resume

    async def _translate_file(self, job: Job) -> None:
        state, doc = self.state, job.doc
        assert doc is not None  # a file job always carries the document read at arrival
        detected = state.source == AUTO
        source = (await asyncio.to_thread(documents.detect_document_language, doc)
                  if detected else state.source)
        if source == state.target:
            state.remember(source)
            await self._same_language(job)
            return
        target = state.target
        progress = self.progress(self.page.fill("translating_file", name=doc.name), always=True,
                                 text=doc.text)
        job = Job("file", doc=doc, target=target, source=source, detected=detected)
        await progress.start()
        # JSON, YAML and .po values in blocks through the family's structured-data instruction
        # (None: the family has none, values go one by one).
        structured = documents.StructuredCall.for_translator(
            self.translator, source, target, user=self.id, on_event=progress.event)
        flags = documents.FileFlags()
        out = await self.finished(progress, job, documents.translate_document(
            doc, self._document_translate(target, source, progress),
            resume=self._document_resume(progress), on_progress=progress.progress,
            concurrency=self._document_share, structured=structured, flags=flags))
        if out is None:
            return
        state.remember(source)
        await self._send_file(job, out, progress, flags)

    async def _translate_rest(self, job: Job) -> None:
        """Retry the rest: the kept partial translation, only its missing parts sent."""
        if job.kind != "file" or job.target is None:
            await self.translate_rest(job)
            return
        progress = self.progress(self.page["translating_rest"], always=True, base=job.done)
        await progress.start()
        flags = documents.FileFlags()  # the earlier parts' come with the partial document
        out = await self.finished(progress, job, documents.translate_document_rest(
            job.partial, self._document_translate(job.target, job.source, progress),
            resume=self._document_resume(progress), on_progress=progress.progress,
            concurrency=self._document_share, flags=flags))
        if out is not None:
            await self._send_file(job, out, progress, flags)

    async def _send_file(self, job: Job, out: str, progress: Progress,
                         flags: documents.FileFlags) -> None:
        doc, target = job.doc, job.target
        assert doc is not None and target is not None
        name = documents.output_name(doc.name, target)
        result = Translation(out, job.source, target, job.detected, False,
                             max(1, progress.total), progress.seconds)
        meta = wording.format_meta(result, demo=self.services.demo(), page=self.page)
        data = await asyncio.to_thread(doc.encode, out, target)  # a zip for office files
        body = wording.file_answer_markdown(doc.name, name, meta,
                                            self.page.say(documents.file_summary(doc)),
                                            file_warnings_markdown(flags.by_part(), page=self.page))
        if doc.kind in formats.PICTURES:
            body = f"{wording.found_text_markdown(documents.found_text(doc, out), self.page)}\n\n{body}"
        await self.show(Reply(body, files=(Attachment(name, data, doc.mime),)))
