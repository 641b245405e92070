"""What the engine runs and queues right now: vLLM's own ``/metrics``, read and summed.

vLLM with its stats on (the profiles do not pass ``--disable-log-stats``, which empties
the page of every ``vllm:*`` series) keeps ``vllm:num_requests_running`` and
``vllm:num_requests_waiting`` per engine (one label set per data-parallel rank); its
``process_start_time_seconds`` changes when it restarts.

Where to read them (:func:`metrics_urls`): a fleet the app launched lists its replicas' pages
in the sidecar's state file, and each is read: vllm-router 0.1.17 (measured) forwards a
``/metrics`` on its own port to ONE replica, picked by its routing policy like any request,
and its own Prometheus port has only ``vllm_router_*`` series (worker health, requests
routed), nothing of what waits inside vLLM. A server reached by URL is read at its root; when
``HYMT_REPLICAS`` says it is a router over N replicas, each reading is one replica's (which
one, the page does not say) and stands for each of the N.

Only the lines of the series above go to prometheus_client's parser: vLLM's page is about
50 kB of histograms, read every second on the app's event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import httpx
from prometheus_client.parser import text_string_to_metric_families

from hymt_chat.errors import (
    METRICS_IMPOSSIBLE,
    METRICS_MISSING,
    METRICS_REFUSED,
    METRICS_SLOW,
    MetricsError,
)
from hymt_chat.settings import Settings
from hymt_chat.sidecar.endpoint import read_state, resolve_endpoint

__all__ = ["EngineLoad", "metrics_urls", "parse_load", "read_load"]

RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
STARTED = "process_start_time_seconds"
_WANTED = (RUNNING, WAITING, STARTED)
# More requests than any engine holds at once: numbers that are not an engine's (a proxy's
# garbage), refused rather than believed.
MAX_REQUESTS = 1_000_000
_LAST_START = 1e11  # seconds since 1970: the year 5138
_UNWELL = frozenset({502, 503, 504})  # the server is down or starting, its metrics aside


@dataclass(frozen=True, slots=True)
class EngineLoad:
    """One reading of the engine: requests running and waiting (all servers read, summed, and
    scaled to the replicas a router spreads over), and each server's start time (a new one:
    a server restarted)."""

    running: int
    waiting: int
    started: frozenset[float] = frozenset()


def _wanted_lines(text: str) -> str:
    keep = []
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in _WANTED:
            keep.append(line)
    return "\n".join(keep) + "\n"


def parse_load(text: str) -> EngineLoad:
    """The running and waiting requests on one server's page; :class:`MetricsError` when the
    page is not vLLM's (no such series: a 200 from something else, or stats turned off) or its
    numbers cannot be an engine's (negative, not finite, absurdly large)."""
    sums = {RUNNING: 0.0, WAITING: 0.0}
    seen: set[str] = set()
    started: set[float] = set()
    try:
        for family in text_string_to_metric_families(_wanted_lines(text)):
            for sample in family.samples:
                value = float(sample.value)
                limit = _LAST_START if sample.name == STARTED else MAX_REQUESTS
                if not 0 <= value <= limit:  # NaN and infinities fail it too
                    raise MetricsError(f"impossible value {sample.name} = {sample.value}",
                                       public=METRICS_IMPOSSIBLE)
                if sample.name == STARTED:
                    started.add(value)
                elif sample.name in sums:
                    sums[sample.name] += value
                    seen.add(sample.name)
    except ValueError as err:  # the parser's word for text that is not Prometheus
        raise MetricsError(f"not Prometheus text ({str(err)[:80]})") from None
    if not seen:
        _prometheus_or_raise(text)
    if seen != {RUNNING, WAITING}:
        raise MetricsError(f"no {RUNNING} / {WAITING} on the page (not vLLM, or vLLM started "
                           "with --disable-log-stats)", public=METRICS_MISSING)
    if max(sums.values()) > MAX_REQUESTS:  # each engine's in bounds, their sum not
        raise MetricsError(f"impossible counts: {sums[RUNNING]:g} running, "
                           f"{sums[WAITING]:g} waiting", public=METRICS_IMPOSSIBLE)
    return EngineLoad(round(sums[RUNNING]), round(sums[WAITING]), frozenset(started))


def _prometheus_or_raise(text: str) -> None:
    """A page without our series: say whether it is Prometheus text at all (its first lines)."""
    head = "\n".join(text.splitlines()[:20]) + "\n"
    try:
        for _ in text_string_to_metric_families(head):
            pass
    except ValueError as err:
        raise MetricsError(f"not Prometheus text ({str(err)[:80]})") from None


def metrics_urls(settings: Settings) -> tuple[str, ...]:
    """The pages to read: the launched fleet's replicas (its state file lists them), else the
    server's own ``/metrics``."""
    if not settings.base_url:
        listed = read_state(settings).get("metrics_urls")
        if isinstance(listed, list) and listed and all(isinstance(u, str) for u in listed):
            return tuple(listed)
    return (f"{resolve_endpoint(settings).root}/metrics",)


async def read_load(http: httpx.AsyncClient, urls: Sequence[str], *, api_key: str = "",
                    stands_for: int = 1) -> EngineLoad:
    """Read every page in *urls* (one after the other: a few per second at most) and add
    them up; a reading of one page that stands for *stands_for* servers (a router's) is
    multiplied. :class:`MetricsError` when any page fails (``down`` when the server did not
    answer at all): a partial sum would look like a smaller engine."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    running = waiting = 0
    started: set[float] = set()
    for url in urls:
        try:
            response = await http.get(url, headers=headers)
        except httpx.TimeoutException:
            raise MetricsError(f"{url} did not answer within {_timeout(http)}",
                               public=METRICS_SLOW) from None
        except httpx.HTTPError as err:
            raise MetricsError(f"{url}: {type(err).__name__}", down=True) from None
        if response.status_code in _UNWELL:  # a router with no replica up, a gateway's word
            raise MetricsError(f"{url} answered HTTP {response.status_code}", down=True)
        if response.status_code != 200:
            raise MetricsError(f"{url} answered HTTP {response.status_code}",
                               public=METRICS_REFUSED if response.status_code in (401, 403)
                               else METRICS_MISSING)
        load = parse_load(response.text)
        running += load.running
        waiting += load.waiting
        started |= load.started
    scale = stands_for if len(urls) == 1 else 1
    return EngineLoad(running * scale, waiting * scale, frozenset(started))


def _timeout(http: httpx.AsyncClient) -> str:
    seconds = http.timeout.read
    return f"{seconds:g} s" if seconds is not None else "its timeout"
