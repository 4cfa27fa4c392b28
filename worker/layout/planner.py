"""Choose a table layout from the search radius k and the expected index size N. Pure.

The cost model predicts, per article, the time of one check-and-insert, in Redis and in the
worker: a fixed part, a part per table written, per key probed (Redis looks it up, the worker
names it and parses its value) and per candidate (Redis copies it out, the worker compares
it). The coefficients are least-squares fits to four layouts measured on the development
machines with benchmarks/bench_index.py (docs/scaling.md), which prints predicted next to
measured figures. The planner picks the layout with the least time in both together: on
these machines the worker and Redis share the CPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from math import ceil, comb, expm1, log
from typing import Any

from worker import defaults
from worker.layout.bands import Bands, parse_bands
from worker.layout.tables import (
    MAX_KEY_BITS,
    Family,
    Layout,
    blocks,
    contiguous_runs,
    multi_index,
    parse_layout,
    pigeonhole,
    sampled,
)

MAX_PROBES_PER_TABLE = 4096  # beyond this, probing alone costs more than any sane layout
MAX_TABLES = 64


@dataclass(frozen=True)
class Costs:
    """Time in microseconds and memory in bytes (measured: docs/scaling.md)."""

    base_us: float = 72.0  # Redis: the script, and the reads' fixed part
    per_table_us: float = 3.7  # Redis: append to one bucket
    per_probe_us: float = 0.94  # Redis: look a bucket up (a cache miss or several)
    per_candidate_us: float = 0.029  # Redis: copy one entry into the reply
    worker_base_us: float = 141.0
    worker_per_probe_us: float = 0.59  # name the key, send it, parse its value
    worker_per_candidate_us: float = 0.012  # compare one entry (numpy)
    article_bytes: float = 257.0  # id record, content hash, id-by-sequence entry
    entry_bytes: float = 22.0  # one bucket entry (format.ENTRY_BYTES), with APPEND's spare room
    key_bytes: float = 99.0  # one bucket key in Redis, with its overhead


@dataclass(frozen=True)
class Estimate:
    layout: Layout
    docs: int
    candidates_per_probe: float  # mean entries under one probed key, at `docs` articles
    candidates: float  # per article
    bytes_per_article: float
    server_us: float  # Redis's time per article
    worker_us: float  # the worker's time per article, in the index client
    hot: bool  # buckets would hold more than the index reads: recall below the model's

    @property
    def probes(self) -> int:
        return self.layout.probes

    @property
    def tables(self) -> int:
        return len(self.layout.tables)

    @property
    def articles_per_s(self) -> float:
        """For one worker, pipelined, sharing the machine with Redis."""
        return 1e6 / (self.server_us + self.worker_us)


def estimate(
    layout: Layout, docs: int, max_bucket_read: int, costs: Costs | None = None
) -> Estimate:
    c = costs or Costs()
    candidates = 0.0
    key_count = 0.0
    hot = False
    for table in layout.tables:
        space = 2.0**table.width
        per_key = docs / space
        hot = hot or per_key > max_bucket_read
        candidates += table.probes * min(per_key, max_bucket_read)
        key_count += -space * expm1(-per_key)  # expected keys in use (balls into bins)
    tables = len(layout.tables)
    per_probe = candidates / layout.probes
    memory = (
        c.article_bytes + tables * c.entry_bytes + (key_count * c.key_bytes / docs if docs else 0.0)
    )
    server = (
        c.base_us
        + tables * c.per_table_us
        + layout.probes * c.per_probe_us
        + candidates * c.per_candidate_us
    )
    worker = (
        c.worker_base_us
        + layout.probes * c.worker_per_probe_us
        + candidates * c.worker_per_candidate_us
    )
    return Estimate(layout, docs, per_probe, candidates, memory, server, worker, hot)


def layouts(search_radius: int, recall: float = 1.0) -> list[Layout]:
    """Every layout worth considering at this search radius: the exact ones, and sampled ones
    reaching `recall` at distance k when `recall` < 1."""
    found = [pigeonhole(search_radius)]
    for m in range(2, search_radius + 1):
        candidate = multi_index(search_radius, m)
        if max(t.probes for t in candidate.tables) <= MAX_PROBES_PER_TABLE:
            found.append(candidate)
    for count in range(search_radius + 2, search_radius + 10):
        width = max(len(run) for run in contiguous_runs(count)) * (count - search_radius)
        if width <= MAX_KEY_BITS and comb(count, search_radius) <= MAX_TABLES:
            found.append(blocks(search_radius, count))
    if recall < 1.0:
        for bits in range(8, MAX_KEY_BITS + 1, 2):
            layout = _sampled_for(search_radius, bits, recall)
            if layout is not None:
                found.append(layout)
    return found


def _sampled_for(search_radius: int, bits: int, recall: float) -> Layout | None:
    """The fewest sampled tables of `bits` bits that reach `recall` at distance k."""
    one = sampled(search_radius, 1, bits).recall(search_radius)
    if one >= recall:
        return sampled(search_radius, 1, bits)
    if one <= 0.0:
        return None
    tables = ceil(log(1 - recall) / log(1 - one))
    return sampled(search_radius, tables, bits) if tables <= MAX_TABLES else None


@dataclass(frozen=True)
class Plan:
    estimates: list[Estimate]  # every layout considered, fastest first
    choice: Estimate


def plan(
    search_radius: int,
    docs: int,
    max_bucket_read: int,
    recall: float = 1.0,
    costs: Costs | None = None,
) -> Plan:
    """The fastest layout that reaches `recall` at every distance up to k, has no hot
    buckets at `docs` articles, and takes no more memory per article than the pigeonhole
    layout (when none qualifies: the pigeonhole layout)."""
    if not 0.0 < recall <= 1.0:
        raise ValueError(f"recall must be in (0, 1], got {recall}")
    if docs < 1:
        raise ValueError(f"docs must be >= 1 (the expected index size), got {docs}")
    estimates = sorted(
        (
            estimate(layout, docs, max_bucket_read, costs)
            for layout in layouts(search_radius, recall)
        ),
        key=lambda e: (-e.articles_per_s, e.bytes_per_article),
    )
    baseline = next(e for e in estimates if e.layout.family is Family.PIGEONHOLE)
    fit = [
        e
        for e in estimates
        if not e.hot
        and e.bytes_per_article <= baseline.bytes_per_article
        and min(e.layout.recall(d) for d in range(search_radius + 1)) >= recall
    ]
    return Plan(estimates, fit[0] if fit else baseline)


def choose(
    search_radius: int, name: str, docs: int, recall: float, max_bucket_read: int
) -> Layout | Bands:
    """The layout named in settings, or with "auto" the planner's choice."""
    if name == "auto":
        return plan(search_radius, docs, max_bucket_read, recall).choice.layout
    return named(name, search_radius)


def named(name: str, search_radius: int) -> Layout | Bands:
    """A layout named in settings: SimHash tables (tables.parse_layout) or "bands:BxR"."""
    family, _, arg = name.strip().partition(":")
    if family == "bands":
        try:
            return parse_bands(arg)
        except ValueError as exc:
            raise ValueError(f"layout {name!r}: {exc}") from None
    return parse_layout(name, search_radius)


@cache
def default_layout() -> Layout:
    """The layout of the default settings: what an index built without one uses."""
    layout = choose(
        max(defaults.THRESHOLD, defaults.RELATED_THRESHOLD),
        defaults.LAYOUT,
        defaults.EXPECTED_DOCS,
        defaults.RECALL,
        defaults.MAX_BUCKET_READ,
    )
    assert isinstance(layout, Layout), "the default layout is SimHash tables"
    return layout


def plan_table(p: Plan, mark: str = "*") -> list[str]:
    """The plan as a text table, one line per layout, the chosen one marked with `mark`."""
    first = p.estimates[0]
    search_radius = first.layout.search_radius
    lines = [
        f"{'':2}{'layout':<44}{'tables':>7}{'key bits':>13}{'probes':>8}"
        f"{'cand/probe':>11}{'cand/art':>10}{'B/article':>10}{'redis us':>9}"
        f"{'worker us':>10}{'art/s':>8}  recall at 0..{search_radius}"
    ]
    for e in p.estimates:
        widths = sorted({t.width for t in e.layout.tables}, reverse=True)
        recall = " ".join(_short(e.layout.recall(d)) for d in range(search_radius + 1))
        marked = mark if e is p.choice else " "
        hot = " HOT" if e.hot else ""
        lines.append(
            f"{marked:2}{e.layout.name():<44}{e.tables:>7}"
            f"{','.join(map(str, widths)):>13}{e.probes:>8}"
            f"{e.candidates_per_probe:>11.2f}{e.candidates:>10,.0f}"
            f"{e.bytes_per_article:>10,.0f}{e.server_us:>9,.0f}"
            f"{e.worker_us:>10,.0f}{e.articles_per_s:>8,.0f}  {recall}{hot}"
        )
    return lines


def plan_record(p: Plan) -> dict[str, Any]:
    """The plan as plain data (`dedup-worker plan --json`), the chosen layout first."""

    def record(e: Estimate) -> dict[str, Any]:
        search_radius = e.layout.search_radius
        return {
            "layout": e.layout.name(),
            "tables": e.tables,
            "key_bits": sorted({t.width for t in e.layout.tables}, reverse=True),
            "probes": e.probes,
            "candidates_per_probe": e.candidates_per_probe,
            "candidates_per_article": e.candidates,
            "bytes_per_article": e.bytes_per_article,
            "redis_us": e.server_us,
            "worker_us": e.worker_us,
            "articles_per_s": e.articles_per_s,
            "recall": [e.layout.recall(d) for d in range(search_radius + 1)],
            "hot": e.hot,
        }

    return {
        "threshold": p.choice.layout.search_radius,  # (the JSON field keeps its name)
        "docs": p.choice.docs,
        "chosen": record(p.choice),
        "layouts": [record(e) for e in p.estimates],
    }


def _short(value: float) -> str:
    return "1" if value == 1.0 else f"{value:.3f}"
