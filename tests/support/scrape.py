"""Read a running app's ``/metrics`` (Prometheus text) as {(name, labels): value}."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

__all__ = ["sample", "scrape"]

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str, **headers: str) -> Samples:
    body = httpx.get(f"{url}/metrics", headers=headers, timeout=30).text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(body) for s in family.samples}


def sample(samples: Samples, name: str, **labels: str) -> float:
    """One value (0 when the series is absent)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)
