"""The API's limits, replayed the way a security probe runs them: the real app
(``chainlit run app.py``), a stand-in model that counts its calls, real HTTP.

A list over the cap is refused before any work; a request at the cap never holds up another
user's page (the app's own measure of its event-loop stalls, in /metrics); a client that hangs
up stops its model calls, counted ``cancelled``; glossaries are rate-limited and capped.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from hymt_chat.api.deepl_glossaries import MAX_GLOSSARIES
from hymt_chat.api.keys import KeyStore
from tests.support.other_user import OtherUser, texts
from tests.support.scrape import sample, scrape
from tests.support.tabs import app, marked

OPEN = {"HYMT_API_OPEN_LOCAL": "1", "HYMT_RATE_LIMIT": "", "HYMT_RATE_LIMIT_CHARS": ""}
STALL = "hymt_event_loop_stall_seconds"


def _stalls_over(samples: dict, seconds: float) -> float:
    """How many stalls the app measured that were longer than *seconds* (a bucket bound)."""
    return (sample(samples, f"{STALL}_count")
            - sample(samples, f"{STALL}_bucket", le=str(seconds)))


def test_a_list_over_the_cap_is_refused_and_one_at_the_cap_never_stalls_the_page(tmp_path):
    with app(tmp_path, **OPEN) as (url, stub):
        huge = [f"Salut {i}" for i in range(10_000)]  # the probe's: ~119 KB, under the cap
        libre = httpx.post(f"{url}/libretranslate/translate", timeout=60,
                           json={"q": huge, "source": "auto", "target": "en"})
        deepl = httpx.post(f"{url}/deepl/v2/translate", timeout=60,
                           json={"text": huge, "target_lang": "EN-US"})
        assert stub.prompts == []  # refused before any model call
        warm = httpx.post(f"{url}/libretranslate/translate", timeout=60,
                          json={"q": texts(2), "source": "auto", "target": "en"})
        assert warm.status_code == 200
        httpx.get(f"{url}/hymt/status", timeout=30)  # the other user's page, once (its probe)
        log_before = (tmp_path / "app.log").read_text().count("\n")
        before = scrape(url)
        with OtherUser(url) as other:
            at_cap = httpx.post(f"{url}/libretranslate/translate", timeout=120, json={
                "q": texts(50, 1500), "source": "auto", "target": "en"})  # ~77 KB to detect
        after = scrape(url)
        log_lines = (tmp_path / "app.log").read_text().count("\n") - log_before
    print(f"another user's slowest /hymt/status during the 50-text request: "
          f"{other.worst * 1000:.0f} ms; the app's worst loop stall: "
          f"{sample(after, 'hymt_event_loop_stall_max_seconds') * 1000:.0f} ms")
    assert libre.status_code == 400
    assert "request (10000) exceeds text limit (50)" in libre.json()["error"]
    assert deepl.status_code == 400 and "at most 50 per request" in deepl.json()["message"]
    assert at_cap.status_code == 200, at_cap.text
    assert all(t.startswith("EN:") for t in at_cap.json()["translatedText"])
    assert len(stub.prompts) == 2 + 50 * 2  # each text of 1,500 characters is two segments
    assert _stalls_over(after, 0.1) - _stalls_over(before, 0.1) == 0  # none over 100 ms
    assert log_lines <= 2  # no line per text


def _slowly(prompt: str) -> str:
    time.sleep(1.0)
    return marked(prompt)


def _settled(url: str) -> dict:
    """The metrics once no model call runs or waits (the cancelled ones closed)."""
    deadline = time.monotonic() + 60
    while True:
        samples = scrape(url)
        idle = (sample(samples, "hymt_policy_in_flight") == 0
                and sample(samples, "hymt_policy_queue_length") == 0)
        if idle or time.monotonic() > deadline:
            return samples
        time.sleep(0.2)


def test_a_client_that_hangs_up_stops_its_model_calls_counted_cancelled(tmp_path):
    requests = {"libretranslate": ("/libretranslate/translate",
                                   {"q": texts(20), "source": "fr", "target": "en"}),
                "deepl": ("/deepl/v2/translate", {"text": texts(20), "target_lang": "EN-US"})}
    calls = {}
    with app(tmp_path, answer=_slowly, HYMT_WINDOW_MAX="2", **OPEN) as (url, stub):
        for dialect, (path, body) in requests.items():
            before = len(stub.prompts)
            try:
                httpx.post(url + path, json=body, timeout=1.5)  # 20 calls of 1 s, 2 at a time
            except httpx.TimeoutException:
                pass
            _settled(url)
            calls[dialect] = len(stub.prompts) - before
        time.sleep(2)  # nothing queued starts later
        assert len(stub.prompts) == sum(calls.values())
        samples = scrape(url)
    for dialect in requests:
        assert calls[dialect] < 20, calls  # not all 20 ran
        assert sample(samples, "hymt_api_requests_total", dialect=dialect, key="local",
                      outcome="cancelled") == 1
        assert sample(samples, "hymt_api_requests_total", dialect=dialect, key="local",
                      outcome="ok") == 0
    assert sample(samples, "hymt_translations_total", source="fr", target="en",
                  outcome="cancelled") >= 40 - sum(calls.values())


def _glossary(url: str, key: str, name: str) -> httpx.Response:
    return httpx.post(f"{url}/deepl/v2/glossaries", timeout=60,
                      headers={"Authorization": f"DeepL-Auth-Key {key}"},
                      json={"name": name, "source_lang": "fr", "target_lang": "en",
                            "entries": "commande\torder\n", "entries_format": "tsv"})


async def _glossaries_at_once(url: str, key: str, count: int) -> list[int]:
    async with httpx.AsyncClient(timeout=120) as http:
        answers = await asyncio.gather(*[http.post(
            f"{url}/deepl/v2/glossaries", headers={"Authorization": f"DeepL-Auth-Key {key}"},
            json={"name": f"g{i}", "source_lang": "fr", "target_lang": "en",
                  "entries": "commande\torder\n"}) for i in range(count)])
    return [a.status_code for a in answers]


def test_glossaries_are_rate_limited_and_capped_per_key(tmp_path):
    keys = tmp_path / "keys.db"
    store = KeyStore(keys)
    slow, many = store.create("slow", per_minute=2), store.create("many", per_minute=1000)
    store.close()
    with app(tmp_path, HYMT_API_KEYS_PATH=str(keys)) as (url, _):
        limited = [_glossary(url, slow, f"s{i}").status_code for i in range(3)]
        at_once = asyncio.run(_glossaries_at_once(url, many, MAX_GLOSSARIES + 10))
        listed = httpx.get(f"{url}/deepl/v2/glossaries", timeout=60,
                           headers={"Authorization": f"DeepL-Auth-Key {many}"}).json()
        over = _glossary(url, many, "one more")
    assert limited == [201, 201, 429]  # the key's per-minute limit
    assert at_once.count(201) == MAX_GLOSSARIES and at_once.count(400) == 10, at_once
    assert len(listed["glossaries"]) == MAX_GLOSSARIES
    assert over.status_code == 400 and f"at most {MAX_GLOSSARIES}" in over.json()["message"]
