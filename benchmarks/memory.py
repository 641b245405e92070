"""Translation memory benchmark: what a memory saves, and what a hit costs.

In one run, on a real vLLM server (a demo sidecar unless HYMT_BASE_URL is set):

1. **Kiosk stream** — ``--kiosk`` one-line questions, of which ``--repeat-share`` (40 %) repeat
   an earlier one exactly, through the real Translator in the kiosk's scope with
   ``HYMT_MEMORY_KIOSK=write`` (the operator's choice; the default ``read`` keeps nothing a
   visitor typed, so a kiosk then only reuses what other pages and agents put in). One at a
   time, each message's model calls read from vLLM's own ``vllm:request_success_total``.
2. **API stream of UI strings** — ``--ui`` UI strings sent ``--uploads`` times, one
   LibreTranslate request per string (what a Weblate instance asks again after each upload),
   over real HTTP to the real API (uvicorn, the API mounted as the app mounts it).
3. **Eviction** — the store alone (no model): the LRU rule against first-in-first-out on a
   Zipf-skewed stream of look-ups with the cap at a tenth of the distinct segments, and the cost
   of one eviction pass at the default cap (200,000 entries).
4. **TMX** — a ``--tmx``-unit file (a million by default) written, imported in one transaction,
   exported again: time and peak memory.

Reported: model calls made and saved, P50/P95 of hits and misses. The memory is SQLite in a
temporary folder unless ``--database-url`` names a PostgreSQL (then parts 1-3 use it).

    PYTHONPATH=. .venv/bin/python benchmarks/memory.py [--kiosk 50] [--ui 25] [--uploads 3]
        [--tmx 1000000] [--parts kiosk,api,eviction,tmx] [--database-url postgresql+asyncpg://…]

Writes docs/results/memory.md (every part), else memory-PARTS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import sqlalchemy as sa
from _server import _free_port, model_server
from load import machine

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.policy import Policy
from hymt_chat.engine.recall import Memory
from hymt_chat.engine.translator import Translator
from hymt_chat.modes.kiosk import kiosk_memory
from hymt_chat.settings import Settings
from hymt_chat.store.memory import ENTRIES, MACHINE, MemoryStore
from hymt_chat.store.tmx import read_tmx, write_tmx
from tests.support.api_server import api_app
from tests.support.up_stack import served

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"

QUESTIONS = [  # what visitors ask a museum's or a station's kiosk, in their own language
    ("Where is the nearest toilet?", "en", "zh"),
    ("How much is a ticket for children?", "en", "zh"),
    ("When does the museum close today?", "en", "zh"), ("Is there a cloakroom?", "en", "zh"),
    ("Can I take photos inside?", "en", "zh"), ("Where can I buy a city map?", "en", "zh"),
    ("Which platform does the train to the airport leave from?", "en", "zh"),
    ("Do you have an audio guide in my language?", "en", "zh"),
    ("¿Dónde está la salida?", "es", "en"), ("¿Hay wifi gratis aquí?", "es", "en"),
    ("¿A qué hora abre la cafetería?", "es", "en"), ("¿Puedo pagar con tarjeta?", "es", "en"),
    ("Où se trouve l'ascenseur ?", "fr", "en"), ("Est-ce que le musée est accessible en "
                                                    "fauteuil roulant ?", "fr", "en"),
    ("Combien coûte l'entrée pour un étudiant ?", "fr", "en"),
    ("Wo kann ich mein Gepäck abgeben?", "de", "en"), ("Gibt es eine Führung auf Deutsch?",
                                                       "de", "en"),
    ("Wann fährt der nächste Bus ins Zentrum?", "de", "en"),
    ("最近的地铁站在哪里？", "zh", "en"), ("这里可以用支付宝付款吗？", "zh", "en"),
    ("博物馆几点关门？", "zh", "en"), ("儿童票多少钱？", "zh", "en"),
    ("トイレはどこですか？", "ja", "en"), ("切符はどこで買えますか？", "ja", "en"),
    ("Dov'è il guardaroba?", "it", "en"), ("Posso lasciare qui la mia borsa?", "it", "en"),
    ("Onde fica a bilheteria?", "pt", "en"), ("Там есть кафе?", "ru", "en"),
    ("Где находится выход?", "ru", "en"), ("Is the garden open in winter?", "en", "zh"),
]
UI_STRINGS = [
    "Save", "Cancel", "Delete", "Settings", "Log out", "Sign in", "Search", "Next page",
    "Previous page", "Your changes have been saved.", "Are you sure you want to delete this "
    "file?", "The file could not be uploaded.", "Password", "Forgot your password?",
    "Create an account", "Notifications", "Mark all as read", "Download", "Upload a file",
    "No results found.", "Loading…", "Profile", "Language", "Help", "Contact us",
]


def _pct(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def _stream(count: int, share: float, rng: random.Random) -> list[tuple[str, str, str]]:
    """*count* questions: ``(1 - share)`` of them new, the rest exact repeats of one already
    asked, mixed through the stream (each slot is new with the odds of the new ones left)."""
    fresh = list(QUESTIONS[: max(1, min(len(QUESTIONS), round(count * (1 - share))))])
    stream: list[tuple[str, str, str]] = []
    while len(stream) < count:
        left = count - len(stream)
        if fresh and (not stream or rng.random() < len(fresh) / left):
            stream.append(fresh.pop(0))
        else:
            stream.append(rng.choice(sorted(set(stream))))
    return stream


async def kiosk_stream(settings: Settings, count: int, share: float, port: int) -> dict:
    translator = Translator(settings, ModelClient(settings), Policy(window_max=2),
                            memory=Memory.for_settings(settings))
    stream = _stream(count, share, random.Random(26))
    seen: set[str] = set()
    first_calls: dict[str, int] = {}
    rows = []
    with kiosk_memory(settings.model_copy(update={"memory_kiosk": "write"})):
        for text, source, target in stream:
            repeat = text in seen
            seen.add(text)
            before = served(port)
            started = time.perf_counter()
            result = await translator.translate(text, target, source, user="kiosk")
            seconds = time.perf_counter() - started
            calls = int(served(port) - before)
            hit = bool(result.remembered) and result.segments == 0
            first_calls.setdefault(text, calls)
            rows.append({"repeat": repeat, "hit": hit, "seconds": seconds, "calls": calls,
                         "saved": first_calls[text] if hit else 0, "text": text})
    return _summary(rows)


def _summary(rows: list[dict]) -> dict:
    hits = [r["seconds"] for r in rows if r["hit"]]
    misses = [r["seconds"] for r in rows if not r["hit"]]
    return {"messages": len(rows), "repeats": sum(r["repeat"] for r in rows),
            "hits": len(hits), "calls": sum(r["calls"] for r in rows),
            "saved": sum(r["saved"] for r in rows),
            # repeats the memory did not answer: their first answer had findings (not kept)
            "missed": sorted({r["text"] for r in rows if r["repeat"] and not r["hit"]}),
            "hit_p50": _pct(hits, 50), "hit_p95": _pct(hits, 95),
            "miss_p50": _pct(misses, 50), "miss_p95": _pct(misses, 95)}


def api_stream(settings: Settings, strings: int, uploads: int, port: int, folder: Path) -> dict:
    rows = []
    first_calls: dict[str, int] = {}
    with api_app(settings, folder / "keys.db", _free_port(), memory=True) as app:
        key = app.store.create("weblate", per_minute=10_000)
        with httpx.Client(timeout=600) as http:
            for upload in range(uploads):
                for text in UI_STRINGS[:strings]:
                    before = served(port)
                    started = time.perf_counter()
                    answer = http.post(f"{app.url}/libretranslate/translate", json={
                        "q": text, "source": "en", "target": "de", "api_key": key})
                    seconds = time.perf_counter() - started
                    answer.raise_for_status()
                    calls = int(served(port) - before)
                    hit = answer.headers.get("X-Hymt-Memory") == "hit"
                    first_calls.setdefault(text, calls)
                    rows.append({"repeat": upload > 0, "hit": hit, "seconds": seconds,
                                 "calls": calls, "saved": first_calls[text] if hit else 0,
                                 "text": text})
    return _summary(rows)


def _fill(store: MemoryStore, count: int, now: float) -> None:
    """*count* machine entries at once (a benchmark's setup, not the app's way of writing)."""
    rows = [{"key": f"k{n}", "rank": 0, "origin": MACHINE, "source": "en", "target": "de", "segment": f"s{n}",
                 "translation": f"t{n}", "model": "m", "author": None, "created": now + n, "used": now + n,
                 "hits": 0} for n in range(count)]
    with store._engine.begin() as db:
        for start in range(0, count, 10_000):
            db.execute(sa.insert(ENTRIES), rows[start:start + 10_000])


class FifoStore(MemoryStore):
    """The same store evicting the oldest *written* entries instead (the rule not chosen)."""

    def evict(self) -> int:
        with self._engine.begin() as db:
            count = db.execute(sa.select(sa.func.count()).select_from(ENTRIES)).scalar_one()
            if count <= self.max_entries:
                return 0
            excess = count - int(self.max_entries * 0.9)
            oldest = (sa.select(ENTRIES.c.key).where(ENTRIES.c.rank == 0)
                      .order_by(ENTRIES.c.created).limit(excess).scalar_subquery())
            return db.execute(sa.delete(ENTRIES).where(ENTRIES.c.key.in_(oldest))).rowcount


def eviction(where_of, lookups: int = 20_000, distinct: int = 5_000, cap: int = 500) -> dict:
    rng = np.random.default_rng(26)
    stream = rng.zipf(1.2, lookups * 2)
    stream = [int(s) for s in stream if s <= distinct][:lookups]
    out: dict[str, object] = {"lookups": len(stream), "distinct": distinct, "cap": cap}
    for name, cls in (("LRU (chosen)", MemoryStore), ("FIFO", FifoStore)):
        clock = [0.0]
        store = cls(where_of(name), max_entries=cap, clock=lambda c=clock: c[0])
        hits = 0
        for n in stream:
            clock[0] += 1
            key = f"k{n}"
            if store.find([key]):
                hits += 1
            else:
                store.put(key, "en", "de", f"s{n}", f"t{n}", "m")
        out[name] = hits / len(stream)
        store.close()
    big = MemoryStore(where_of("cap"), max_entries=200_000)
    _fill(big, 220_000, time.time())
    started = time.perf_counter()
    gone = big.evict()
    out["evict_seconds"], out["evicted"] = time.perf_counter() - started, gone
    times = []
    for n in range(200):
        t0 = time.perf_counter()
        big.put(f"p{n}", "en", "de", f"new {n}", f"neu {n}", "m")
        times.append(time.perf_counter() - t0)
    lookups_t = []
    for n in range(200):
        t0 = time.perf_counter()
        big.find([f"k{100_000 + n}", f"team-{n}"])
        lookups_t.append(time.perf_counter() - t0)
    out["put_p50"], out["find_p50"] = _pct(times, 50), _pct(lookups_t, 50)
    big.close()
    return out


def tmx_round_trip(units: int, folder: Path) -> dict:
    path = folder / "big.tmx"
    from hymt_chat.store.memory import Entry

    started = time.perf_counter()
    with open(path, "wb") as out:
        write_tmx((Entry(f"k{n}", "imported", "en", "de", f"Sentence number {n} of the file.",
                         f"Satz Nummer {n} der Datei.", created=1.7e9)
                   for n in range(units)), out)
    written = time.perf_counter() - started
    store = MemoryStore(folder / "tmx.db", max_entries=units + 1)
    before = _peak_reset()
    started = time.perf_counter()
    added = store.add_team(read_tmx(str(path)))
    imported = time.perf_counter() - started
    rss = _status_kib("VmHWM") - before  # the import's own peak over what the process held
    started = time.perf_counter()
    with open(folder / "again.tmx", "wb") as out:
        again = write_tmx(store.entries(), out)
    exported = time.perf_counter() - started
    store.close()
    return {"units": units, "file_mb": path.stat().st_size / 2**20, "write_s": written,
            "import_s": imported, "added": added, "rss_growth_mb": rss / 1024,
            "export_s": exported, "exported": again}


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def _peak_reset() -> int:
    """Reset this process's peak RSS (Linux: clear_refs 5) and return the RSS now, in KiB."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_kib("VmRSS")


def _where(url: str | None, folder: Path):
    def where_of(name: str) -> str | Path:
        if url:
            from tests.support.postgres import fresh_database

            return fresh_database(url)
        return folder / f"{name.split()[0].lower()}.db"
    return where_of


def report(args: argparse.Namespace, parts: dict[str, dict], load_end: float,
           header: str) -> str:
    def row(name: str, r: dict) -> str:
        ratio = (r["hit_p50"] / r["miss_p50"]) if r["hit_p50"] and r["miss_p50"] else None
        return (f"| {name} | {r['messages']} | {r['repeats']} | {r['hits']} | {r['calls']} | "
                f"{r['saved']} | {_ms(r['hit_p50'])} / {_ms(r['hit_p95'])} | "
                f"{_ms(r['miss_p50'])} / {_ms(r['miss_p95'])} | "
                f"{'—' if ratio is None else f'{ratio:.1%}'} |")

    db = "PostgreSQL" if args.database_url else "SQLite"
    lines = [
        f"# Translation memory ({dt.date.today()})", "",
        f"`{' '.join(['PYTHONPATH=. .venv/bin/python benchmarks/memory.py', *sys.argv[1:]])}` — "
        f"{header}; load average at the end {load_end:.2f} (a shared machine: other sessions' "
        "vLLM servers and test runs were busy on the same 2 cores). Memory: " + db + ".", ""]
    kiosk, api = parts.get("kiosk"), parts.get("api")
    if kiosk or api:
        lines += [
            "Model: the demo vLLM server (Qwen2.5-Coder-0.5B, CPU); model calls from vLLM's "
            "`vllm:request_success_total`.", "",
            "| stream | messages | repeats | answered from memory | model calls | calls saved | "
            "hit P50 / P95 | miss P50 / P95 | hit P50 / miss P50 |",
            "|---|---|---|---|---|---|---|---|---|"]
        if kiosk:
            lines.append(row(f"kiosk, {args.repeat_share:.0%} repeats (Translator)", kiosk))
        if api:
            lines.append(row(f"API, {args.ui} UI strings × {args.uploads} uploads (HTTP)", api))
        missed = {name: r["missed"] for name, r in (("kiosk", kiosk), ("API", api)) if r}
        lines += ["", "Repeats not answered from the memory (their first answer had findings, "
                  "so it was not kept): " + "; ".join(f"{name} {texts or 'none'}"
                                                       for name, texts in missed.items()) + "."]
    if evict := parts.get("eviction"):
        lines += ["", f"Eviction (the store alone, {db}): {evict['lookups']:,} Zipf(1.2) "
                  f"look-ups over {evict['distinct']:,} segments, cap {evict['cap']:,}: hit rate "
                  f"LRU (chosen) **{evict['LRU (chosen)']:.1%}**, FIFO {evict['FIFO']:.1%}. One "
                  "eviction pass at the default cap (220,000 → 180,000 entries): "
                  f"{evict['evict_seconds']:.2f} s for {evict['evicted']:,} rows, once per 256 "
                  f"writes at most; a write P50 {_ms(evict['put_p50'])}, a look-up P50 "
                  f"{_ms(evict['find_p50'])} at 180,000 entries."]
    if tmx := parts.get("tmx"):
        lines += ["", f"TMX: {tmx['units']:,} units ({tmx['file_mb']:.0f} MiB) written in "
                  f"{tmx['write_s']:.1f} s, imported in one transaction in {tmx['import_s']:.1f} s "
                  f"({tmx['added']:,} entries; the import's peak memory over what the process "
                  f"held before: {tmx['rss_growth_mb']:.0f} MiB), exported again in "
                  f"{tmx['export_s']:.1f} s ({tmx['exported']:,} units)."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kiosk", type=int, default=50)
    parser.add_argument("--repeat-share", type=float, default=0.4)
    parser.add_argument("--ui", type=int, default=25)
    parser.add_argument("--uploads", type=int, default=3)
    parser.add_argument("--tmx", type=int, default=1_000_000)
    parser.add_argument("--parts", default="kiosk,api,eviction,tmx",
                        help="which parts (all: results/memory.md; some: memory-PARTS.md)")
    parser.add_argument("--database-url", help="a PostgreSQL for the memory (else SQLite)")
    args = parser.parse_args()
    wanted = [p.strip() for p in args.parts.split(",") if p.strip()]
    header = machine()
    parts: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        where_of = _where(args.database_url, folder)
        if "tmx" in wanted:  # first: its peak memory is measured in a process that holds little
            parts["tmx"] = tmx_round_trip(args.tmx, folder)
            print("tmx", parts["tmx"], flush=True)
        if "eviction" in wanted:
            parts["eviction"] = eviction(where_of)
            print("eviction", parts["eviction"], flush=True)
        if "kiosk" in wanted or "api" in wanted:
            with model_server("--max-num-seqs 2") as endpoint:
                port = int(endpoint.root.rsplit(":", 1)[1])

                def settings_for(name: str) -> Settings:
                    where = where_of(name)
                    extra = ({"database_url": where} if isinstance(where, str)
                             else {"memory_path": where})
                    return Settings(base_url=endpoint.base_url, api_key=endpoint.api_key,
                                    model=endpoint.model, cache_dir=folder / name, **extra)

                if "kiosk" in wanted:
                    parts["kiosk"] = asyncio.run(kiosk_stream(
                        settings_for("kiosk"), args.kiosk, args.repeat_share, port))
                    print("kiosk", parts["kiosk"], flush=True)
                if "api" in wanted:
                    parts["api"] = api_stream(settings_for("api"), args.ui, args.uploads, port,
                                              folder)
                    print("api", parts["api"], flush=True)
    text = report(args, parts, os.getloadavg()[0], header)
    RESULTS.mkdir(exist_ok=True)
    every = set(wanted) >= {"kiosk", "api", "eviction", "tmx"}
    name = "memory.md" if every else f"memory-{'-'.join(wanted)}.md"
    (RESULTS / name).write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
