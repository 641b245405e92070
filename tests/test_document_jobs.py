"""DeepL document jobs in the database (hymt_chat.store.documents), on SQLite and PostgreSQL,
with an injected clock. DeepL's rules they keep (developers.deepl.com "Translate documents",
and deepl-python's translate_document_* calls): a document is found with its id and its key;
status goes queued -> translating (with seconds_remaining) -> done (billed_characters) or
error (error_message); the result is downloaded once, then it is gone."""

from __future__ import annotations

from pathlib import Path

from hymt_chat.store.documents import KEEP_SECONDS, STALLED_AFTER, DocumentJobs


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_job_goes_from_queued_to_done_and_is_downloaded_once(keys_at: Path | str) -> None:
    clock = Clock()
    jobs = DocumentJobs(keys_at, clock=clock)
    try:
        job_id, key = jobs.create("weblate", "letter.docx", parts=10)
        assert len(job_id) == 32 and len(key) == 64
        assert jobs.status("weblate", job_id, key).status == "queued"
        jobs.progress(job_id, 0)
        clock.now += 4
        jobs.progress(job_id, 4)  # 1 s a part so far: 6 parts left
        running = jobs.status("weblate", job_id, key)
        assert (running.status, running.done, running.seconds_remaining) == ("translating", 4, 6)
        assert jobs.take("weblate", job_id, key) is None  # not done: nothing to take
        jobs.finish(job_id, b"PK-bytes", "letter.de.docx", "application/x-test", 1234)
        done = jobs.status("weblate", job_id, key)
        assert (done.status, done.billed, done.done) == ("done", 1234, 10)
        assert jobs.status("weblate", job_id, "0" * 64) is None  # another key: not found
        assert jobs.status("other-key-owner", job_id, key) is None  # another API key's
        assert jobs.take("weblate", job_id, key) == (b"PK-bytes", "letter.de.docx",
                                                     "application/x-test")
        assert jobs.take("weblate", job_id, key) is None  # once
        assert jobs.status("weblate", job_id, key) is None
    finally:
        jobs.close()


def test_a_failed_or_abandoned_job_says_why_and_old_jobs_go(keys_at: Path | str) -> None:
    clock = Clock()
    jobs = DocumentJobs(keys_at, clock=clock)
    try:
        failed, failed_key = jobs.create("k", "a.txt", parts=1)
        jobs.fail(failed, "The model server is not answering.")
        report = jobs.status("k", failed, failed_key)
        assert (report.status, report.error) == ("error", "The model server is not answering.")
        stuck, stuck_key = jobs.create("k", "b.txt", parts=3)
        jobs.progress(stuck, 1)
        clock.now += STALLED_AFTER + 1  # the replica translating it went away
        assert jobs.status("k", stuck, stuck_key).status == "error"
        clock.now += KEEP_SECONDS
        jobs.create("k", "c.txt", parts=1)  # a write clears what expired
        assert jobs.status("k", failed, failed_key) is None
    finally:
        jobs.close()
