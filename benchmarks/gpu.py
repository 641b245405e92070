"""GPU benchmark: one vLLM server started by the app's own sidecar, measured through the app.

    python benchmarks/gpu.py LABEL --profile a10 --model DIR [--vllm-args "..."] [--port 8021]
                             [--conc 2,8,16,32] [--tests first,raw,app,doc,oom]
                             [--doc-lines 40] [--n-short 10] [--out docs/results/gpu]
    python benchmarks/gpu.py --report docs/results/gpu   (the tables of every run there; the
                                                          like-for-like ones into --page)

``hymt-chat serve-model --profile P`` starts the server (the flags fitted to the installed vLLM,
the warm start before ready) and this waits for its state file to say ready. Then, in order:

1. **first after ready** — 10 one-liners one after another through the Translator, then 10
   bursts of one-liners as many as the server runs at once: the first against the tenth
   (a cold kernel would make the first slow).
2. **raw throughput** — at each concurrency C, 3 x C chat completions of exactly 64 tokens
   (``ignore_eos``, greedy; one run sampled at the largest C): the server's own rate.
3. **app throughput** — C users each sending 4 one-liners back to back through one Translator
   (the app's policy, window = the server's slots): messages per second, P50/P95.
4. **one-liner under a document** — 10 one-liners alone, then 10 while a 40-line document runs
   in the bulk class: P95 / median alone.
5. **OOM probe** — ``--max-num-seqs`` requests at once, each filling the whole
   context (prompt + 64 tokens = ``--max-model-len``): all must come back, the server healthy.

With dummy weights (``--load-format dummy``) every answer is noise of its full length, so the
times are those of real work; the words are not. Writes LABEL.json under --out; --report turns
every JSON there into docs/results/gpu.md's tables.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar, Self

import httpx
from _workload import MESSAGES, document, machine

from hymt_chat.engine.client import ModelClient
from hymt_chat.engine.pacing import DecodeRate
from hymt_chat.engine.policy import policy_for
from hymt_chat.engine.priority import BULK
from hymt_chat.engine.translator import Translator
from hymt_chat.errors import HymtError
from hymt_chat.settings import Settings
from hymt_chat.sidecar.capacity import engine_slots
from hymt_chat.sidecar.endpoint import read_state
from hymt_chat.sidecar.launch import choose
from hymt_chat.sidecar.vllm_flags import installed_vllm

ROOT = Path(__file__).resolve().parent.parent
KEY = "gpu-bench-key"
RAW_PROMPT = ("Translate the following segment into Chinese, without additional explanation."
              "\n\nOur delivery was delayed by the storm, and the customer would like a refund "
              "for the shipping costs of the order placed last week. Reference {i}.")
LOG_LINES = {  # what the vLLM log says about memory and start-up (the first match of each)
    "kv_tokens": r"GPU KV cache size: ([\d,]+) tokens",
    "kv_gib": r"Available KV cache memory: ([\d.]+) GiB",
    "weights_gib": r"Model loading took ([\d.]+) GiB",
    "concurrency_at_max_len": r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x",
    "init_engine_s": r"init engine \(profile, create kv cache, warmup model\) took ([\d.]+) s",
    "compile_s": r"torch\.compile takes ([\d.]+) s in total",
    "warm_start": r"(warm start[^=]*)",
}


def pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return round(xs[lo] + (xs[hi] - xs[lo]) * (k - lo), 3)


def gpu_used_mib() -> int | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,"
                              "nounits"], capture_output=True, text=True, timeout=20, check=True)
        return int(out.stdout.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


class CountingRate(DecodeRate):
    """The client's decode rate, which each answer's tokens pass through: counted here."""

    def observe(self, tokens: int, seconds: float) -> None:
        CountingClient.tokens += tokens
        super().observe(tokens, seconds)


class CountingClient(ModelClient):
    """The app's client, counting the model calls (a failed check's repair is one more), the
    tokens they decoded (vLLM's ``usage``, as the client reads it) and the prompts it sent."""

    calls = 0
    tokens = 0
    prompts: ClassVar[list[str]] = []

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.decode_rate = CountingRate(settings.decode_rate)

    async def complete(self, prompt: str, **kwargs):  # type: ignore[override]
        CountingClient.calls += 1
        CountingClient.prompts.append(prompt)
        return await super().complete(prompt, **kwargs)


# --- the server ------------------------------------------------------------------------------

class Sidecar:
    """``hymt-chat serve-model`` in its own process group, and what its files say."""

    def __init__(self, args: argparse.Namespace, cache: Path) -> None:
        self.settings = Settings(cache_dir=cache, port=args.port, api_key=KEY,
                                 vllm_args=args.vllm_args, profile=args.profile,
                                 model_path=args.model, base_url=None)
        self.log = cache / "logs" / f"vllm-{args.port}.log"
        self.out = cache / "serve-model.out"
        env = {**os.environ, "HYMT_VLLM_ARGS": args.vllm_args, "HYMT_CACHE_DIR": str(cache),
               "HYMT_API_KEY": KEY,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        cache.mkdir(parents=True, exist_ok=True)
        models = Settings().cache_dir / "models"  # the demo model, where setup put it
        if models.is_dir() and not (cache / "models").exists():
            (cache / "models").symlink_to(models)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hymt_chat.cli.main", "serve-model", "--profile",
             args.profile, "--model", args.model, "--port", str(args.port)],
            env=env, stdout=self.out.open("wb"), stderr=subprocess.STDOUT,
            start_new_session=True)
        (cache / "serve-model.pid").write_text(str(self.proc.pid))  # for a caller that kills us

    def wait_ready(self, timeout: float) -> float:
        while time.monotonic() - self.started < timeout:
            if read_state(self.settings).get("state") == "ready":
                return round(time.monotonic() - self.started, 1)
            if self.proc.poll() is not None:
                break
            time.sleep(0.5)
        self.stop()
        raise SystemExit(f"not ready: {self.out.read_text(errors='replace')[-3000:]}\n"
                         f"{self.log.read_text(errors='replace')[-3000:] if self.log.exists() else ''}")

    def facts(self) -> dict[str, object]:
        log = self.log.read_text(errors="replace") if self.log.exists() else ""
        found = {k: m.group(1).strip() for k, p in LOG_LINES.items() if (m := re.search(p, log))}
        found = {k: v.replace(",", "") if re.fullmatch(r"[\d,.]+", v) else v
                 for k, v in found.items()}
        said = self.out.read_text(errors="replace").splitlines()
        return {**found, "dropped": [line for line in said if " dropped: " in line],
                "oom_in_log": bool(re.search(r"out of memory|OutOfMemoryError", log, re.I)),
                "preempted_in_log": len(re.findall(r"preempt", log, re.I))}

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# --- the measurements ------------------------------------------------------------------------

def one_liner(i: int) -> tuple[str, str, str]:
    return MESSAGES[i % len(MESSAGES)]


async def timed(translator: Translator, i: int, **kw) -> tuple[float, str | None]:
    text, source, target = one_liner(i)
    t0 = time.monotonic()
    try:
        await translator.translate(text, target, source, **kw)
    except HymtError as err:
        return time.monotonic() - t0, type(err).__name__
    return time.monotonic() - t0, None


async def first_after_ready(translator: Translator, slots: int) -> dict[str, object]:
    singles = [(await timed(translator, i))[0] for i in range(10)]
    bursts = []
    for b in range(10):
        t0 = time.monotonic()
        await asyncio.gather(*(timed(translator, 100 + b * slots + j) for j in range(slots)))
        bursts.append(time.monotonic() - t0)
    return {"test": "first_after_ready", "single_s": [round(x, 3) for x in singles],
            "burst_size": slots, "burst_s": [round(x, 3) for x in bursts],
            "first_over_tenth_single": round(singles[0] / singles[9], 2),
            "first_over_tenth_burst": round(bursts[0] / bursts[9], 2)}


async def raw(http: httpx.AsyncClient, url: str, conc: int, sampled: bool) -> dict[str, object]:
    """3 x C requests of exactly 64 tokens, greedy or with Hunyuan-MT's sampling: the
    server's own rate (the like-for-like run's raw side, on prompts of its own)."""
    body: dict[str, object] = {"model": "hymt", "max_tokens": 64, "ignore_eos": True,
                               "temperature": 0.0}
    if sampled:
        body.update(temperature=0.7, top_p=0.6, top_k=20, repetition_penalty=1.05)
    prompts = [RAW_PROMPT.format(i=i) for i in range(3 * conc)]
    side = await raw_pair_side(http, url, body, prompts, conc)
    return {"test": "raw", "concurrency": conc, "sampled": sampled, "ok": side["ok"],
            "failed": side["failed"], "req_per_s": side["per_s"],
            "out_tok_per_s": side["out_tok_per_s"], "p50_s": side["p50_s"],
            "p95_s": side["p95_s"]}


async def app_throughput(translator: Translator, conc: int) -> dict[str, object]:
    lats, fails = [], []

    async def user(u: int) -> None:
        for k in range(4):
            lat, err = await timed(translator, 1000 + u * 4 + k, user=f"u{u}")
            (fails.append(err) if err else lats.append(lat))

    calls, t0 = CountingClient.calls, time.monotonic()
    await asyncio.gather(*(user(u) for u in range(conc)))
    wall = time.monotonic() - t0
    return {"test": "app", "users": conc, "ok": len(lats), "failed": fails,
            "msg_per_s": round(len(lats) / wall, 2), "p50_s": pct(lats, 0.5),
            "p95_s": pct(lats, 0.95), "model_calls": CountingClient.calls - calls}


async def under_document(translator: Translator, lines: int, n: int) -> dict[str, object]:
    alone = [(await timed(translator, 2000 + i, user="B"))[0] for i in range(n)]
    first = asyncio.Event()
    t0 = time.monotonic()
    doc = asyncio.create_task(translator.translate(
        document(lines), "en", "fr", user="A", klass=BULK, on_progress=lambda d, t: first.set()))
    await first.wait()
    loaded = [(await timed(translator, 3000 + i, user="B"))[0] for i in range(n)]
    try:
        done = len((await doc).text.split("\n")) == lines
    except HymtError:
        done = False
    base = statistics.median(alone)
    return {"test": "under_document", "doc_lines": lines, "alone_median_s": round(base, 3),
            "alone_p95_s": pct(alone, 0.95), "loaded_p50_s": pct(loaded, 0.5),
            "loaded_p95_s": pct(loaded, 0.95), "ratio_p95_over_alone": round(
                (pct(loaded, 0.95) or 0) / base, 2), "doc_s": round(time.monotonic() - t0, 1),
            "doc_whole": done}


async def oom_probe(http: httpx.AsyncClient, url: str, seqs: int, max_len: int) -> dict:
    async def prompt_tokens(text: str) -> int:
        r = await http.post(url, json={"model": "hymt", "max_tokens": 1, "messages": [
            {"role": "user", "content": text}]})
        r.raise_for_status()
        return int(r.json()["usage"]["prompt_tokens"])

    unit = "The storm delayed every delivery in the northern region this week. "
    base, per = await prompt_tokens(unit), await prompt_tokens(unit * 11) - await prompt_tokens(unit)
    repeat = max(1, int((max_len - 64 - base - 8) / (per / 10)))
    texts = [f"{i}: " + unit * repeat for i in range(seqs)]
    while await prompt_tokens(texts[0]) + 64 > max_len:
        repeat -= 1
        texts = [f"{i}: " + unit * repeat for i in range(seqs)]
    tokens = await prompt_tokens(texts[0])

    async def one(text: str) -> object:
        r = await http.post(url, json={"model": "hymt", "max_tokens": 64, "ignore_eos": True,
                                       "temperature": 0.0, "messages": [
                                           {"role": "user", "content": text}]})
        return r.status_code if r.status_code != 200 else r.json()["usage"]["completion_tokens"]

    t0 = time.monotonic()
    got = await asyncio.gather(*(one(t) for t in texts), return_exceptions=True)
    wall = time.monotonic() - t0
    health = (await http.get(url.replace("/v1/chat/completions", "/health"))).status_code
    return {"test": "oom_probe", "sequences": seqs, "prompt_tokens_each": tokens,
            "context_each": tokens + 64, "ok": sum(1 for g in got if g == 64),
            "results": [str(g) for g in got if g != 64][:5], "wall_s": round(wall, 1),
            "health_after": health}


class StallWatch:
    """The event loop's worst lateness: a task that asks to wake every 10 ms and notes by how
    much it woke late (a stall is the app's own CPU holding the loop)."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(0.01)
            self.worst = max(self.worst, loop.time() - asked - 0.01)

    def __enter__(self) -> Self:
        self._task = asyncio.get_running_loop().create_task(self._watch())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()


async def app_pair_side(translator: Translator, conc: int, per_user: int) -> dict[str, object]:
    """C users each sending *per_user* one-liners back to back through the app's Translator
    (every call decoding exactly the benchmark's tokens): msg/s, P50/P95, CPU per message, the
    loop's worst stall, and the model calls and tokens it took."""
    lats: list[float] = []
    fails: list[str] = []

    async def user(u: int) -> None:
        for k in range(per_user):
            lat, err = await timed(translator, 5000 + u * per_user + k, user=f"u{u}")
            (fails.append(err) if err else lats.append(lat))

    calls, tokens = CountingClient.calls, CountingClient.tokens
    CountingClient.prompts = []
    with StallWatch() as watch:
        cpu, t0 = time.process_time(), time.monotonic()
        await asyncio.gather(*(user(u) for u in range(conc)))
        wall, cpu = time.monotonic() - t0, time.process_time() - cpu
    calls, tokens = CountingClient.calls - calls, CountingClient.tokens - tokens
    return {"side": "app", "concurrency": conc, "ok": len(lats), "failed": fails,
            "per_s": round(len(lats) / wall, 2), "p50_s": pct(lats, 0.5),
            "p95_s": pct(lats, 0.95), "cpu_ms_per_msg": round(cpu / max(1, len(lats)) * 1e3, 2),
            "worst_stall_ms": round(watch.worst * 1e3, 1), "model_calls": calls,
            "tokens": tokens, "tokens_per_call": round(tokens / max(1, calls), 2),
            "prompts": list(CountingClient.prompts)}


async def raw_pair_side(http: httpx.AsyncClient, url: str, body: dict[str, object],
                        prompts: list[str], conc: int) -> dict[str, object]:
    """The same prompts, the same fields, C workers each sending their share back to back:
    vLLM's own rate for the app's work."""
    lats: list[float] = []
    fails: list[int] = []
    tokens = [0]
    queue = list(prompts)

    async def worker() -> None:
        while queue:
            prompt = queue.pop()
            t0 = time.monotonic()
            r = await http.post(url, json={**body, "messages": [
                {"role": "user", "content": prompt}]})
            if r.status_code != 200:
                fails.append(r.status_code)
                continue
            lats.append(time.monotonic() - t0)
            tokens[0] += r.json()["usage"]["completion_tokens"]

    t0 = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(conc)))
    wall = time.monotonic() - t0
    return {"side": "raw", "concurrency": conc, "ok": len(lats), "failed": fails,
            "per_s": round(len(lats) / wall, 2), "p50_s": pct(lats, 0.5),
            "p95_s": pct(lats, 0.95), "tokens": tokens[0],
            "out_tok_per_s": round(tokens[0] / wall, 1),
            "tokens_per_call": round(tokens[0] / max(1, len(lats)), 2)}


def pair_verdict(app: dict[str, object], raw: dict[str, object]) -> dict[str, object]:
    """app msg/s ÷ raw req/s, only for like work: the same tokens per call, one call per
    message, nothing failed. Otherwise no ratio, and why."""
    why = []
    if app["tokens_per_call"] != raw["tokens_per_call"]:
        why.append(f"tokens per call differ: app {app['tokens_per_call']}, "
                   f"raw {raw['tokens_per_call']}")
    if app["model_calls"] != app["ok"]:
        why.append(f"the app made {app['model_calls']} model calls for {app['ok']} messages")
    if app["failed"] or raw["failed"]:
        why.append(f"failures: app {len(app['failed'])}, raw {len(raw['failed'])}")
    ratio = None if why else round(float(app["per_s"]) / float(raw["per_s"]), 3)
    return {"ratio": ratio, "refused": "; ".join(why)}


async def like_for_like(args: argparse.Namespace, checks: bool, emit) -> None:
    """For each concurrency: the app's one-liners (every call decoding --tokens, checks on or
    off), then raw vLLM on the very prompts the app sent, then the verdict."""
    settings = Settings(base_url=f"http://127.0.0.1:{args.port}/v1", api_key=KEY, model="hymt",
                        profile=args.profile, vllm_args=args.vllm_args, model_path=args.model,
                        checks=checks, bench_tokens=args.tokens)
    client = CountingClient(settings)
    policy = policy_for(settings)
    translator = Translator(settings, client, policy)
    sampling = client.sampling()
    body = {"model": "hymt", "max_tokens": args.tokens, "ignore_eos": True,
            "temperature": sampling.temperature, "top_p": sampling.top_p,
            "top_k": sampling.top_k, "repetition_penalty": sampling.repetition_penalty}
    url = f"{settings.base_url}/chat/completions"
    try:
        # Unmeasured first: what the app loads on its first messages (the checks' tables, the
        # detector) is not a message's cost.
        await asyncio.gather(*(timed(translator, 9000 + i) for i in range(8)))
        async with httpx.AsyncClient(timeout=900,
                                     headers={"Authorization": f"Bearer {KEY}"}) as http:
            for conc in [int(c) for c in args.conc.split(",") if c]:
                app = await app_pair_side(translator, conc, args.per_user)
                prompts = app.pop("prompts")
                await raw_pair_side(http, url, body, prompts[:conc], conc)  # its connections
                raw = await raw_pair_side(http, url, body, prompts, conc)
                emit({"test": "pair", "checks": checks, "concurrency": conc, "app": app,
                      "raw": raw, "window": policy.window_max, "lead": policy.lead,
                      **pair_verdict(app, raw)})
    finally:
        await client.aclose()


async def measure(args: argparse.Namespace, emit) -> None:
    settings = Settings(base_url=f"http://127.0.0.1:{args.port}/v1", api_key=KEY, model="hymt",
                        profile=args.profile, vllm_args=args.vllm_args, model_path=args.model)
    translator = Translator(settings, CountingClient(settings), policy_for(settings))
    slots = engine_slots(settings)
    flags = dict(choose(settings).flags)
    url = f"{settings.base_url}/chat/completions"
    tests = set(args.tests.split(","))
    if "pair" in tests:  # like for like: checks off, then on
        for checks in (False, True):
            await like_for_like(args, checks, emit)
    if "first" in tests:
        emit(await first_after_ready(translator, slots))
    async with httpx.AsyncClient(timeout=900, headers={"Authorization": f"Bearer {KEY}"}) as http:
        concs = [int(c) for c in args.conc.split(",") if c]
        if "raw" in tests:
            for conc in concs:
                emit(await raw(http, url, conc, sampled=False))
            emit(await raw(http, url, max(concs), sampled=True))
        if "app" in tests:
            for conc in concs:
                emit(await app_throughput(translator, conc))
        if "doc" in tests:
            emit(await under_document(translator, args.doc_lines, args.n_short))
        if "oom" in tests:
            emit(await oom_probe(http, url, int(flags["--max-num-seqs"] or 1),
                                 int(flags["--max-model-len"] or 4096)))


def gpu_name() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20, check=True)
        return out.stdout.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def run(args: argparse.Namespace) -> None:
    """Start the server, measure, and write LABEL.json after every result: a run that dies
    mid-way leaves what it measured, marked partial, and the server it started stopped."""
    started = dt.datetime.now(dt.UTC)
    before = gpu_used_mib()
    lead = [f"HYMT_WINDOW_LEAD={v}"] if (v := os.environ.get("HYMT_WINDOW_LEAD")) else []
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, object] = {
        "label": args.label, "partial": True, "profile": args.profile,
        "vllm_args": args.vllm_args, "model": args.model, "card": gpu_name(),
        "vllm": installed_vllm(Settings().vllm_python),
        "date": f"{started:%Y-%m-%d %H:%M} UTC", "machine": machine(), "tests": [],
        "command": shlex.join(lead + ["python", "benchmarks/gpu.py", *sys.argv[1:]])}

    def save() -> None:
        report["load_average"] = [round(x, 2) for x in os.getloadavg()]
        (out / f"{args.label}.json").write_text(json.dumps(report, indent=1))

    def emit(result: dict[str, object]) -> None:
        report["tests"].append(result)  # type: ignore[attr-defined]
        print(json.dumps(result), flush=True)
        save()
        if result["test"] == "pair":
            write_pair_page(report, Path(args.page))

    sidecar = Sidecar(args, Path(args.cache) / args.label)
    try:
        report["ready_s"] = sidecar.wait_ready(args.ready_timeout)
        used = gpu_used_mib()
        report["gpu_used_mib"] = None if used is None or before is None else used - before
        print(f"{args.label}: ready in {report['ready_s']} s", flush=True)
        save()
        asyncio.run(measure(args, emit))
        report["partial"] = False
    finally:
        sidecar.stop()
        report.update(sidecar.facts())
        save()
        if any(t["test"] == "pair" for t in report["tests"]):  # type: ignore[attr-defined]
            write_pair_page(report, Path(args.page))  # "partial" until the whole run is in


# --- the report ------------------------------------------------------------------------------

def pair_markers(label: str) -> tuple[str, str]:
    """The comments that frame one run's like-for-like table on the page: one block per label,
    so that a second run (another card, a repeat) stands beside the first."""
    return (f"<!-- like-for-like {label}: written by benchmarks/gpu.py --tests pair -->",
            f"<!-- end of like-for-like {label} -->")


def pair_table(report: dict) -> str:
    """The like-for-like table of one run, in Markdown: per checks setting and concurrency,
    app msg/s ÷ raw req/s (or why there is none), the one-liner's P50/P95, the app's CPU per
    message and the loop's worst stall."""
    pairs = [t for t in report["tests"] if t["test"] == "pair"]
    window = (f" The app's window: {pairs[0]['window']} calls, and a lead of "
              f"{pairs[0]['lead']} live calls beyond it." if pairs and "lead" in pairs[0] else "")
    head = (f"**{report['label']}{' (partial: the run stopped here)' if report['partial'] else ''}"
            f"**: {report['date']}, {report.get('card') or 'no GPU named'}, vLLM "
            f"{report.get('vllm') or '?'}, load average {report.get('load_average')}.{window}\n"
            f"`{report['command']}`\n")
    rows = ["| checks | C | app msg/s | raw req/s | app ÷ raw | one-liner P50 / P95 | "
            "app CPU / message | worst loop stall | tokens per call (app / raw) |",
            "|---|---:|---:|---:|---:|---|---:|---:|---|"]
    for t in report["tests"]:
        if t["test"] != "pair":
            continue
        app, raw = t["app"], t["raw"]
        verdict = f"**{t['ratio']}**" if t["ratio"] is not None else f"none: {t['refused']}"
        rows.append(f"| {'on' if t['checks'] else 'off'} | {t['concurrency']} | "
                    f"{app['per_s']} | {raw['per_s']} | {verdict} | {app['p50_s']:.3f} s / "
                    f"{app['p95_s']:.3f} s | {app['cpu_ms_per_msg']} ms | "
                    f"{app['worst_stall_ms']} ms | {app['tokens_per_call']} / "
                    f"{raw['tokens_per_call']} |")
    return head + "\n" + "\n".join(rows) + "\n"


def write_pair_page(report: dict, page: Path) -> None:
    """Put the run's table into *page* between its label's markers: in place when they are
    there, else after the last like-for-like table, else under the title."""
    text = page.read_text() if page.exists() else "# GPU benchmark\n"
    start, end = pair_markers(report["label"])
    block = f"{start}\n{pair_table(report)}{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        text = before + block + rest.split(end, 1)[1]
    elif (last := text.rfind("<!-- end of like-for-like ")) >= 0:
        cut = text.index("-->", last) + 3
        text = f"{text[:cut]}\n\n{block}{text[cut:]}"
    else:
        title, _, body = text.partition("\n")
        text = f"{title}\n\n{block}\n{body}"
    page.write_text(text)


def _test(run: dict, name: str, **match: object) -> dict:
    return next((t for t in run["tests"] if t["test"] == name
                 and all(t.get(k) == v for k, v in match.items())), {})


def _first(series: list[float]) -> str:
    """The first against the tenth and against the median of the nine after it."""
    return (f"{series[0] / series[-1]:.2f} / {series[0] / statistics.median(series[1:]):.2f}"
            if len(series) > 2 else "—")


def tables(folder: Path, page: Path) -> str:
    """The profiles' tables of every run in *folder*, printed; each like-for-like run's table
    written into *page* again."""
    runs = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    for r in sorted(runs, key=lambda r: r["date"]):  # a new run's table after the older
        if any(t["test"] == "pair" for t in r["tests"]):
            write_pair_page(r, page)
    runs = [r for r in runs if any(t["test"] != "pair" for t in r["tests"])]
    rows = ["| run | vLLM flags beyond the profile | ready | GPU memory | KV tokens | raw req/s "
            "(64 tokens) at C | app msg/s at C users | one-liner alone / P95 under a document "
            "| full-context probe |",
            "|---|---|---:|---:|---:|---|---|---|---|"]
    firsts = ["| run | warm start before ready | one-liners: first ÷ tenth / ÷ median of the "
              "rest | bursts: first ÷ tenth / ÷ median of the rest |", "|---|---|---|---|"]
    for r in runs:
        raws = ", ".join(f"{t['req_per_s']} @ {t['concurrency']}" for t in r["tests"]
                         if t["test"] == "raw" and not t["sampled"])
        sampled = next((t for t in r["tests"] if t["test"] == "raw" and t["sampled"]), None)
        if sampled:
            raws += f" (sampled {sampled['req_per_s']} @ {sampled['concurrency']})"
        apps = ", ".join(f"{t['msg_per_s']} @ {t['users']}" for t in r["tests"]
                         if t["test"] == "app") or "—"
        doc, first, oom = (_test(r, "under_document"), _test(r, "first_after_ready"),
                           _test(r, "oom_probe"))
        probe = (f"{oom['ok']}/{oom['sequences']} × {oom['context_each']} tokens in "
                 f"{oom['wall_s']} s, /health {oom['health_after']}" if oom else "—")
        under = (f"{doc['alone_median_s']} s / {doc['loaded_p95_s']} s "
                 f"({doc['ratio_p95_over_alone']}×)" if doc else "—")
        rows.append(f"| {r['label']} | `{r['vllm_args']}` | {r['ready_s']} s | "
                    f"{r.get('gpu_used_mib') or '—'} MiB | {r.get('kv_tokens', '—')} | {raws} | "
                    f"{apps} | {under} | {probe} |")
        if first:
            warm = re.sub(r"^warm start: | at \d{4}-.*$", "", r.get("warm_start", "—"))
            firsts.append(f"| {r['label']} | {warm} | {_first(first['single_s'])} | "
                          f"{_first(first['burst_s'])} (bursts of {first['burst_size']}) |")
    return "\n".join(rows) + "\n\n" + "\n".join(firsts) + "\n"


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout`: stop the server too
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("label", nargs="?")
    ap.add_argument("--profile", default="a10")
    ap.add_argument("--model", default="")
    ap.add_argument("--vllm-args", default="")
    ap.add_argument("--port", type=int, default=8021)
    ap.add_argument("--conc", default="2,8,16,32")
    ap.add_argument("--doc-lines", type=int, default=40)
    ap.add_argument("--n-short", type=int, default=10, help="one-liners alone and under load")
    ap.add_argument("--tests", default="first,raw,app,doc,oom",
                    help="which of pair,first,raw,app,doc,oom to run (in that order); pair: "
                    "the app against raw vLLM like for like, checks off then on")
    ap.add_argument("--tokens", type=int, default=64,
                    help="pair: the tokens every call decodes, on both sides")
    ap.add_argument("--per-user", type=int, default=4,
                    help="pair: one-liners each user sends back to back")
    ap.add_argument("--ready-timeout", type=float, default=600)
    ap.add_argument("--cache", default="/tmp/hymt-gpu-bench")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" / "gpu"))
    ap.add_argument("--report", metavar="FOLDER")
    ap.add_argument("--page", default=str(ROOT / "docs" / "results" / "gpu.md"),
                    help="pair: the docs page its table is written into")
    args = ap.parse_args()
    if args.report:
        print(tables(Path(args.report), Path(args.page)))
    else:
        run(args)


if __name__ == "__main__":
    main()
