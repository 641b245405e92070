"""DeepL's document translation: ``POST /v2/document`` (multipart ``file``, ``target_lang``,
``source_lang``, ``formality``, ``glossary_id``, ``output_format``) answers ``document_id`` and
``document_key``; ``POST /v2/document/{id}`` (``document_key``) the status — ``queued``,
``translating`` with ``seconds_remaining``, ``done`` with ``billed_characters``, ``error`` with
``error_message``; ``POST /v2/document/{id}/result`` the translated file, once (then it is
gone). What deepl-python's ``translate_document*`` and deepl-node's ``translateDocument`` call.

The file is read, checked and charged at the upload (a corrupt file, an unknown type or one over
the limits is refused there, with nothing kept); the replica that took it translates it in the
bulk class, part by part, recording its progress in :mod:`hymt_chat.store.documents`, so that
any replica answers the status and the download. The formats are the chat's and
LibreTranslate's (:mod:`hymt_chat.modes.documents`), each written back as the same kind:
``output_format`` may only name that kind, or for a PDF ``docx`` (DeepL's own rule: a PDF may
come back as an editable Word file). A translation that fails is refunded and reported
in the status.

A document already in the target language (``source_lang`` equal to ``target_lang``, or
detected so) is not translated and not billed: its job fails at once with DeepL's words,
"Source and target language are equal." (DeepL's OpenAPI, the status's error example), which
deepl-python turns into ``DocumentTranslationException`` carrying the document handle
(tests/test_translate_document.py::test_document_failure_during_translation). An unsupported
file type is refused at the upload with DeepL's ``Invalid file`` and ``file extension`` words
before ours (:mod:`.uploads`).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from pathlib import PurePath
from typing import Any

from fastapi import APIRouter
from starlette.responses import JSONResponse, Response

from hymt_chat.api.access import Charge
from hymt_chat.api.deepl_door import DeepLDoor, message, requested_languages
from hymt_chat.api.deepl_glossaries import glossary_terms
from hymt_chat.api.deepl_options import Options, parse_options
from hymt_chat.api.service import ApiService, Context
from hymt_chat.api.uploads import UnsupportedKindError, load_upload
from hymt_chat.api.work import Job, translate_piece
from hymt_chat.engine.families import family_in_force
from hymt_chat.engine.priority import BULK
from hymt_chat.errors import InputError, public_text
from hymt_chat.lang.languages import get_language
from hymt_chat.modes import documents
from hymt_chat.modes.cost import document_cost
from hymt_chat.service.ratelimit import Cost
from hymt_chat.store.documents import DocumentJobs, documents_location
from hymt_chat.text import formats

__all__ = ["add_document_routes"]

_log = logging.getLogger("hymt_chat.api")
FILE_SLACK = 64 * 1024  # multipart headers and the other fields around the file
PROGRESS_EVERY = 1.0  # seconds between two progress writes of one job
UPLOAD_WAIT = 2.0  # seconds the upload's answer waits for a small document to be done
SAME_LANGUAGE = "Source and target language are equal."  # DeepL's words (its OpenAPI example)


class _Work:
    """The jobs this replica is translating (kept referenced until done) and their store."""

    def __init__(self, svc: ApiService) -> None:
        self.svc = svc
        self._jobs: DocumentJobs | None = None
        self._opening = threading.Lock()
        self.running: set[asyncio.Task[None]] = set()

    def jobs(self) -> DocumentJobs:
        """The store, opened on first use (from a worker thread: it may be a network trip)."""
        with self._opening:
            if self._jobs is None:
                self._jobs = DocumentJobs(documents_location(self.svc.settings))
            return self._jobs

    async def call(self, method: str, *args: Any) -> Any:
        """A store call off the event loop (a database round trip)."""
        jobs = await asyncio.to_thread(self.jobs)
        return await asyncio.to_thread(getattr(jobs, method), *args)

    def start(self, job_id: str, doc: documents.Document, job: Job, user: str,
              charge: Charge | None, convert: str | None = None) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(
            self._translate(job_id, doc, job, user, charge, convert))
        self.running.add(task)
        task.add_done_callback(self.running.discard)
        return task

    async def _translate(self, job_id: str, doc: documents.Document, job: Job, user: str,
                         charge: Charge | None, convert: str | None) -> None:
        done, last = 0, 0.0

        async def piece(text: str, *, on_progress: object = None) -> str:
            nonlocal done, last
            out = await translate_piece(self.svc.translator, text, job, job.source, user)
            done += 1
            if time.monotonic() - last >= PROGRESS_EVERY:
                last = time.monotonic()
                await self.call("progress", job_id, done)
            return out

        try:
            await self.call("progress", job_id, 0)
            out = await documents.translate_document(doc, piece)
            data = await asyncio.to_thread(doc.encode, out, job.target, convert)
            mime = documents.conversions(doc)[convert] if convert else doc.mime
            await self.call("finish", job_id, data,
                            documents.output_name(doc.name, job.target, convert), mime,
                            len(doc.text))
        except Exception as err:  # noqa: BLE001 - any failure is the job's status, refunded
            if not isinstance(err, InputError):
                _log.warning("document %s failed: %s", job_id, err)
            if charge is not None:
                await self.svc.access.refund(charge)
            try:
                await self.call("fail", job_id, public_text(err))
            except Exception:  # noqa: BLE001 - the database itself is down: logged
                _log.exception("document %s: its failure could not be recorded", job_id)


def _kind(name: str) -> str:
    return PurePath(name).suffix.lower().lstrip(".")


def add_document_routes(router: APIRouter, door: DeepLDoor, prefix: str,
                        work: _Work | None = None) -> _Work:
    """The three document routes under *prefix*; the same :class:`_Work` for every prefix."""
    svc = door.svc
    work = work or _Work(svc)
    settings = svc.settings

    async def upload(ctx: Context) -> Response:
        fields = await door.begin(ctx, documents.MAX_FILE_BYTES + FILE_SLACK)
        assert ctx.caller is not None
        upload = fields.file("file")
        if upload is None:
            raise InputError("Parameter 'file' not specified.")
        name = fields.text("filename") or upload.filename or "document.txt"
        source, target = requested_languages(fields)
        wanted = (fields.text("output_format") or "").lower().lstrip(".")
        other = formats.CONVERSIONS.get(_kind(name), {})
        if wanted and wanted != _kind(name) and {wanted, _kind(name)} != {"htm", "html"} and (
                wanted not in other):
            also = "".join(f" or {kind}" for kind in other)
            raise InputError(f"Value for 'output_format' not supported: {wanted!r}: a document "
                             f"comes back as the kind it was sent ({_kind(name) or 'text'}"
                             f"{also}).")
        convert = wanted if wanted in other else None
        options = parse_options(target=target, family=family_in_force(settings),
                                quality_available=False, formality=fields.text("formality"))
        terms = await glossary_terms(svc, ctx, fields.text("glossary_id"), source, target)
        data = await upload.read()
        try:
            doc = await asyncio.to_thread(load_upload, name, data,
                                          max_chars=settings.max_input_chars)
        except UnsupportedKindError as err:
            raise InputError(f"Invalid file: file extension {err.suffix or '(none)'} is not "
                             f"supported. {err.sentence}") from None
        if source == "auto":
            found = await asyncio.to_thread(documents.detect_document_language, doc)
            source = found or "auto"
        if source == target:
            await svc.access.admit(ctx.caller)  # a request all the same: the per-minute limit
            job_id, key = await work.call("create", ctx.caller.name, name, 1)
            await work.call("fail", job_id, f"{SAME_LANGUAGE} The document is already in "
                            f"{get_language(target).english}: nothing to translate, nothing "
                            "billed.")
            return JSONResponse({"document_id": job_id, "document_key": key})
        cost = await asyncio.to_thread(document_cost, doc, settings)
        ctx.charge = await svc.access.admit(ctx.caller, Cost(cost.calls, len(doc.text)))
        parts = await asyncio.to_thread(lambda: sum(p.translate
                                                    for p in documents.split_document(doc)))
        job_id, key = await work.call("create", ctx.caller.name, name, max(1, parts))
        ctx.billed = len(doc.text)
        job = Job([doc.text], target, source, "text", terms,
                  options=Options(klass=BULK, prompt=options.prompt))
        task = work.start(job_id, doc, job, ctx.caller.user, ctx.charge, convert)
        ctx.charge = None  # the job refunds it if it fails; the upload itself succeeded
        # deepl-python polls every 5 s: a small document done within UPLOAD_WAIT is "done" at
        # the first status, not 5 s later (the job goes on either way: wait() never cancels).
        await asyncio.wait({task}, timeout=UPLOAD_WAIT)
        return JSONResponse({"document_id": job_id, "document_key": key})

    async def keyed(ctx: Context) -> tuple[str, str, str]:
        fields = await door.begin(ctx)
        assert ctx.caller is not None
        key = fields.text("document_key")
        if not key:
            raise InputError("Parameter 'document_key' not specified.")
        return ctx.caller.name, ctx.request.path_params["document_id"], key

    async def status(ctx: Context) -> Response:
        found = await work.call("status", *await keyed(ctx))
        if found is None:
            return message(404, "Document not found.")
        body: dict[str, Any] = {"document_id": found.id, "status": found.status}
        if found.status == "translating" and found.seconds_remaining is not None:
            body["seconds_remaining"] = found.seconds_remaining
        if found.status == "done":
            body["billed_characters"] = found.billed
        if found.status == "error":  # deepl-python reads error_message; DeepL's OpenAPI message
            body["error_message"] = body["message"] = found.error
        return JSONResponse(body)

    async def result(ctx: Context) -> Response:
        owner, job_id, key = await keyed(ctx)
        taken = await work.call("take", owner, job_id, key)
        if taken is not None:
            data, name, mime = taken
            return Response(data, media_type=mime,
                            headers={"Content-Disposition": f'attachment; filename="{name}"'})
        found = await work.call("status", owner, job_id, key)
        if found is None:
            return message(404, "Document not found.")
        if found.status == "error":
            return message(400, f"The document could not be translated: {found.error}")
        return message(503, "Document not ready: ask its status until it is done.")

    for path, route in (("/v2/document", upload), ("/v2/document/{document_id}", status),
                        ("/v2/document/{document_id}/result", result)):
        router.add_api_route(prefix + path, door.route(route), methods=["POST"],
                             include_in_schema=False)
    return work
