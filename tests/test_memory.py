"""The translation memory: a segment translated once is answered again without a model call,
marked and counted; its key holds everything that changes the answer; a hit passes the same
checks as a fresh answer; failed answers are not kept; it is off per deployment and per scope;
the kiosk reads it but writes nothing a visitor typed; LRU eviction past the cap; SQLite and
PostgreSQL (two replicas share one); the database gone leaves translation running, said once.

The model is tests/support/stub_model.py (a real HTTP server whose answers the test picks: a
wrong number on purpose is what the real demo model cannot be made to produce on demand)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.families import forget_served_model, note_served_model
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.recall import (
    Memory,
    memory_use,
)
from hymt_chat.engine.translator import Translator
from hymt_chat.modes import wording
from hymt_chat.modes.kiosk import kiosk_memory
from hymt_chat.service.metrics import Metrics
from hymt_chat.settings import Settings
from hymt_chat.store.memory import (
    CORRECTED,
    ENTRIES,
    MACHINE,
    MemoryStore,
    TeamEntry,
    line_pairs,
    memory_location,
)
from tests.support.ports import free_port
from tests.support.postgres import fresh_database
from tests.support.stub_model import StubModel, echo_source

SPANISH = {
    "Hello, how can I help you today?": "Hola, ¿en qué puedo ayudarle hoy?",
    "Thank you for waiting.": "Gracias por esperar.",
    "Your order ships in 3 days.": "Su pedido se envía en 3 días.",
    "We are sorry for the delay.": "Lamentamos el retraso.",
}


def spanish(prompt: str) -> str:
    return SPANISH.get(echo_source(prompt).strip(), "Texto traducido de prueba.")


@pytest.fixture
def stub() -> Iterator[StubModel]:
    with StubModel(spanish) as model:
        yield model


def _settings(stub: StubModel, tmp_path: Path, **overrides: object) -> Settings:
    return Settings(base_url=stub.base_url, api_key="k", model="stub", cache_dir=tmp_path,
                    **overrides)  # type: ignore[arg-type]


def _translator(settings: Settings, where: Path | str | None = None,
                heard: list[str] | None = None, **memory: object) -> Translator:
    """A translator with its own memory; *heard* collects the memory's events."""
    at = where or settings.memory_file
    mem = Memory(lambda: MemoryStore(at), **memory)  # type: ignore[arg-type]
    if heard is not None:
        mem.hooks.add(lambda event: heard.append(event.outcome))
    return Translator(settings, ModelClient(settings), Policy(retries=False), memory=mem)


@pytest.fixture
def events() -> list[str]:
    """What the memory said (pass it to :func:`_translator` as *heard*)."""
    return []


# --- a repeat is answered from the memory -------------------------------------------------------

async def test_a_repeated_segment_is_answered_without_a_model_call_and_marked(
        stub: StubModel, tmp_path: Path, where: Path | str, events: list[str]) -> None:
    translator = _translator(_settings(stub, tmp_path), where, heard=events)
    first = await translator.translate("Hello, how can I help you today?", "es", "en")
    again = await translator.translate("Hello, how can I help you today?", "es", "en")
    assert len(stub.prompts) == 1  # the second never reached the model
    assert again.text == first.text == "Hola, ¿en qué puedo ayudarle hoy?"
    assert (first.remembered, first.segments) == ((), 1)
    assert (again.remembered, again.segments) == ((MACHINE,), 0)
    assert "from memory" in wording.format_meta(again)
    assert "memory" not in wording.format_meta(first)
    assert events == ["miss", "stored", "hit"]


async def test_a_message_of_several_lines_reuses_the_lines_it_had(
        stub: StubModel, tmp_path: Path) -> None:
    translator = _translator(_settings(stub, tmp_path))
    await translator.translate("Thank you for waiting.", "es", "en")
    mixed = await translator.translate("Thank you for waiting.\nWe are sorry for the delay.",
                                       "es", "en")
    assert mixed.text == "Gracias por esperar.\nLamentamos el retraso."
    assert len(stub.prompts) == 2 and mixed.remembered == (MACHINE,) and mixed.segments == 1
    assert "1 of 2 parts from memory" in wording.format_meta(mixed)


async def test_the_metric_counts_hits_and_misses(stub: StubModel, tmp_path: Path) -> None:
    metrics = Metrics()
    translator = _translator(_settings(stub, tmp_path))
    metrics.attach_checks(translator, translator.memory)
    for _ in range(3):
        await translator.translate("Thank you for waiting.", "es", "en")
    body = metrics.render()[0].decode()
    assert 'hymt_memory_total{outcome="hit"} 2.0' in body
    assert 'hymt_memory_total{outcome="miss"} 1.0' in body
    assert 'hymt_memory_total{outcome="stored"} 1.0' in body


# --- the key: everything that changes the answer ---------------------------------------------

async def test_another_model_prompt_pair_or_sampling_misses(stub: StubModel,
                                                            tmp_path: Path) -> None:
    settings = _settings(stub, tmp_path)
    store = tmp_path / "memory.db"
    text = "Thank you for waiting."
    await _translator(settings, store).translate(text, "es", "en")

    async def misses(translator: Translator, target: str = "es", **kwargs: object) -> bool:
        before = len(stub.prompts)
        await translator.translate(text, target, "en", **kwargs)  # type: ignore[arg-type]
        return len(stub.prompts) > before  # the model was asked (a French one twice: the
        # stub answers in Spanish, which the checks ask for again)

    assert await misses(_translator(settings, store), prompt=lambda s, _a, _b: f"Formal: {s}")
    assert await misses(_translator(settings, store), target="fr")
    assert await misses(_translator(settings.model_copy(update={"temperature": 0.1}), store))
    assert await misses(_translator(settings.model_copy(update={"mask_kinds": "amount,date"}),
                                    store))
    assert await misses(_translator(settings.model_copy(update={"model_family": "hy-mt2"}),
                                    store))
    note_served_model("/models/another-model")  # the same served name, another model behind it
    try:
        assert await misses(_translator(settings, store))
    finally:
        forget_served_model()
    before = len(stub.prompts)
    await _translator(settings, store).translate(text, "es", "en")  # the first key still hits
    assert len(stub.prompts) == before


# --- never wrong silently ------------------------------------------------------------------------

async def test_an_answer_that_fails_the_checks_is_not_kept(tmp_path: Path,
                                                           events: list[str]) -> None:
    with StubModel(lambda _p: "Su pedido se envía en 5 días.") as wrong:
        translator = _translator(_settings(wrong, tmp_path), heard=events)
        for _ in range(2):
            result = await translator.translate("Your order ships in 3 days.", "es", "en")
            assert [f.kind for f in result.warnings] == ["duration"]
        assert len(wrong.prompts) == 4  # each time: the answer and its repair, never the memory
    assert "stored" not in events and events.count("unstored") == 2
    assert translator.memory is not None and translator.memory.store().stats().total == 0


async def test_a_kept_answer_that_fails_the_checks_now_is_dropped_and_asked_again(
        stub: StubModel, tmp_path: Path, events: list[str]) -> None:
    translator = _translator(_settings(stub, tmp_path), heard=events)
    await translator.translate("Your order ships in 3 days.", "es", "en")
    store = translator.memory.store()  # type: ignore[union-attr]
    with store._engine.begin() as db:  # what an older version, or a hand, left in the table
        db.execute(sa.update(ENTRIES).values(translation="Su pedido se envía en 5 días."))
    result = await translator.translate("Your order ships in 3 days.", "es", "en")
    assert result.text == "Su pedido se envía en 3 días." and result.remembered == ()
    assert len(stub.prompts) == 2 and "rejected" in events
    assert [e.translation for e in store.entries([MACHINE])] == ["Su pedido se envía en 3 días."]


async def test_off_for_the_deployment_and_inside_a_scope(stub: StubModel, tmp_path: Path) -> None:
    assert Memory.for_settings(_settings(stub, tmp_path, memory=False)) is None
    assert Memory.for_settings(_settings(stub, tmp_path, checks=False)) is None  # hits need them
    translator = _translator(_settings(stub, tmp_path))
    with memory_use(read=False, write=False) as use:
        for _ in range(2):
            await translator.translate("Thank you for waiting.", "es", "en")
    assert len(stub.prompts) == 2 and use.summary == "off"
    assert translator.memory.store().stats().total == 0  # type: ignore[union-attr]
    with memory_use() as use:
        await translator.translate("Thank you for waiting.", "es", "en")
        await translator.translate("Thank you for waiting.", "es", "en")
    assert (use.looked, use.found, use.summary) == (2, 1, "partial")


async def test_the_kiosk_reads_the_memory_and_writes_nothing_a_visitor_typed(
        stub: StubModel, tmp_path: Path) -> None:
    settings = _settings(stub, tmp_path)
    translator = _translator(settings)
    await translator.translate("Thank you for waiting.", "es", "en")  # the chat page kept it
    with kiosk_memory(settings):
        hit = await translator.translate("Thank you for waiting.", "es", "en")
        await translator.translate("We are sorry for the delay.", "es", "en")  # a visitor's
    assert hit.remembered == (MACHINE,) and len(stub.prompts) == 2
    store = translator.memory.store()  # type: ignore[union-attr]
    assert [e.segment for e in store.entries([MACHINE])] == ["Thank you for waiting."]
    with kiosk_memory(settings.model_copy(update={"memory_kiosk": "write"})):  # the operator's
        await translator.translate("We are sorry for the delay.", "es", "en")
    assert store.stats().by_origin[MACHINE] == 2
    with kiosk_memory(settings.model_copy(update={"memory_kiosk": "off"})):
        await translator.translate("Thank you for waiting.", "es", "en")
    assert len(stub.prompts) == 4


async def test_a_best_quality_like_segment_translator_bypasses_the_memory(
        stub: StubModel, tmp_path: Path) -> None:
    translator = _translator(_settings(stub, tmp_path))
    calls: list[str] = []

    async def own(job: object) -> str:
        calls.append(job.text)  # type: ignore[attr-defined]
        return "Gracias por esperar."

    for _ in range(2):
        await translator.translate("Thank you for waiting.", "es", "en", segment_translator=own)
    assert translator.memory is not None
    assert len(calls) == 2 and translator.memory.store().stats().total == 0


# --- team entries ------------------------------------------------------------------------------

async def test_a_correction_outranks_the_model_and_keeps_after_a_model_change(
        stub: StubModel, tmp_path: Path, events: list[str]) -> None:
    translator = _translator(_settings(stub, tmp_path), heard=events)
    await translator.translate("Thank you for waiting.", "es", "en")
    store = translator.memory.store()  # type: ignore[union-attr]
    store.correct(TeamEntry("en", "es", "Thank you for waiting.", "Gracias por su paciencia.",
                            CORRECTED, "alice"))
    other_model = _translator(_settings(stub, tmp_path, model_family="hy-mt2"), heard=events)
    for t in (translator, other_model):
        result = await t.translate("Thank you for waiting.", "es", "en")
        assert result.text == "Gracias por su paciencia." and result.remembered == (CORRECTED,)
    assert len(stub.prompts) == 1 and events.count("corrected") == 2
    assert wording.format_meta(result).endswith("corrected by an agent")


async def test_a_correction_that_fails_a_check_is_used_with_its_finding_shown(
        stub: StubModel, tmp_path: Path) -> None:
    translator = _translator(_settings(stub, tmp_path))
    translator.memory.store().correct(TeamEntry(  # type: ignore[union-attr]
        "en", "es", "Your order ships in 3 days.", "Su pedido se envía en 5 días hábiles.",
        CORRECTED, "alice"))
    result = await translator.translate("Your order ships in 3 days.", "es", "en")
    assert result.text == "Su pedido se envía en 5 días hábiles."
    assert [f.kind for f in result.warnings] == ["duration"]  # never silent
    assert stub.prompts == []


def test_corrections_pair_line_by_line_or_not_at_all() -> None:
    assert line_pairs("One.\n\nTwo.\n", "Uno.\nDos.") == [("One.", "Uno."), ("Two.", "Dos.")]
    assert line_pairs("One.\nTwo.", "Uno. Dos.") is None
    assert line_pairs("  ", "x") is None


def test_two_agents_correcting_one_segment_at_once_keep_the_last_write(where: Path | str) -> None:
    stores = [MemoryStore(where), MemoryStore(where)]  # two replicas
    start = threading.Barrier(2)

    def correct(store: MemoryStore, author: str) -> None:
        start.wait()
        for n in range(20):
            store.correct(TeamEntry("en", "es", "Hello.", f"Hola ({author} {n}).", CORRECTED,
                                    author))

    threads = [threading.Thread(target=correct, args=(s, a)) for s, a in zip(
        stores, ("alice", "bob"), strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = list(stores[0].entries())
    assert len(rows) == 1 and rows[0].translation == f"Hola ({rows[0].author} 19)."
    for store in stores:
        store.close()


# --- size -----------------------------------------------------------------------------------------

def test_past_the_cap_the_least_recently_used_model_answers_go(where: Path | str) -> None:
    now = [1000.0]
    store = MemoryStore(where, max_entries=100, clock=lambda: now[0])
    store.correct(TeamEntry("en", "es", "Kept.", "Guardado.", CORRECTED, "alice"))
    for n in range(100):
        now[0] += 1
        store.put(f"k{n}", "en", "es", f"s{n}", f"t{n}", "m")
    now[0] += 1
    store.find(["k0", "k1"])  # used again: the newest now
    for n in range(100, 150):
        now[0] += 1
        store.put(f"k{n}", "en", "es", f"s{n}", f"t{n}", "m")
    assert store.evict() > 0
    counts = store.stats().by_origin
    assert counts[CORRECTED] == 1 and counts[MACHINE] == 89  # 90 % of the cap, the team's first
    kept = {e.key for e in store.entries([MACHINE])}
    assert {"k0", "k1", "k149"} <= kept and "k2" not in kept
    store.close()


def test_the_team_entries_past_the_cap_are_refused_whole(tmp_path: Path) -> None:
    from hymt_chat.store.memory import MemoryFullError

    store = MemoryStore(tmp_path / "m.db", max_entries=100)
    with pytest.raises(MemoryFullError, match="nothing was imported"):
        store.add_team(TeamEntry("en", "es", f"s{n}", f"t{n}") for n in range(150))
    assert store.stats().total == 0
    assert store.add_team(TeamEntry("en", "es", f"s{n}", f"t{n}") for n in range(60)) == 60


# --- where it lives; replicas; the database gone ------------------------------------------------

def test_postgresql_holds_the_memory_else_the_sqlite_file(tmp_path: Path) -> None:
    pg = "postgresql+asyncpg://hymt:pw@db.internal/hymt"
    assert memory_location(Settings(cache_dir=tmp_path, database_url=pg)) == pg
    assert memory_location(Settings(cache_dir=tmp_path)) == tmp_path / "memory.db"
    assert memory_location(Settings(cache_dir=tmp_path, memory_path=tmp_path / "m.db")) == (
        tmp_path / "m.db")


async def test_two_replicas_on_postgresql_share_the_memory(stub: StubModel, tmp_path: Path,
                                                           postgres_url: str) -> None:
    url = fresh_database(postgres_url)
    settings = _settings(stub, tmp_path, database_url=url)
    one, two = (Translator(settings, ModelClient(settings), Policy(retries=False),
                           memory=Memory.for_settings(settings)) for _ in range(2))
    await one.translate("We are sorry for the delay.", "es", "en")
    shared = await two.translate("We are sorry for the delay.", "es", "en")
    assert shared.remembered == (MACHINE,) and len(stub.prompts) == 1


async def test_the_database_gone_leaves_translation_running_said_once(
        stub: StubModel, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from tests.support.postgres import postgres_server

    clock = [0.0]
    with postgres_server() as url:
        translator = _translator(_settings(stub, tmp_path), url, clock=lambda: clock[0],
                                 retry_after=30)
        await translator.translate("Thank you for waiting.", "es", "en")
        assert translator.memory.available  # type: ignore[union-attr]
    # The server is stopped (pg_ctl stop): every statement now fails to connect.
    caplog.set_level(logging.WARNING, "hymt_chat.memory")
    for _ in range(3):
        result = await translator.translate("Thank you for waiting.", "es", "en")
        assert result.text == "Gracias por esperar." and result.remembered == ()
        clock[0] += 10  # within the 30 s: not tried again
    assert len(stub.prompts) == 4
    said = [r.getMessage() for r in caplog.records if r.name == "hymt_chat.memory"]
    assert len(said) == 1 and "translating without it" in said[0]
    assert not translator.memory.available  # type: ignore[union-attr]


async def test_a_memory_that_cannot_be_opened_is_no_memory(stub: StubModel, tmp_path: Path,
                                                           caplog: pytest.LogCaptureFixture
                                                           ) -> None:
    closed = f"postgresql+asyncpg://hymt:s3cret@127.0.0.1:{free_port()}/hymt"
    settings = _settings(stub, tmp_path, database_url=closed)
    translator = Translator(settings, ModelClient(settings), Policy(retries=False),
                            memory=Memory.for_settings(settings))
    caplog.set_level(logging.WARNING, "hymt_chat.memory")
    for _ in range(2):
        assert (await translator.translate("Thank you for waiting.", "es", "en")).text
    said = [r.getMessage() for r in caplog.records if r.name == "hymt_chat.memory"]
    assert len(said) == 1 and "s3cret" not in said[0] and "127.0.0.1" in said[0]
