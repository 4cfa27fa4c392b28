"""The composition root: what the worker and the commands run, built from Settings here and
nowhere else. The classes it builds take plain arguments (and default to worker.defaults),
so they can be used without Settings too.

Each builder imports what it builds when it runs: a command loads only what it uses (`scan`
never loads Redis's client, `--help` not even numpy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from worker.settings import Settings

if TYPE_CHECKING:
    from worker.index.base import Index, IndexOptions
    from worker.index.memory import MemoryIndex
    from worker.index.redis import NamespaceIndex
    from worker.index.redis.client import Client
    from worker.layout.bands import Bands
    from worker.layout.tables import Layout
    from worker.pipeline.isolated import IsolatedReader
    from worker.pipeline.pipeline import Pipeline
    from worker.pipeline.reading import Reader
    from worker.text.fingerprint import Fingerprinter


def layout(settings: Settings) -> Layout | Bands:
    """The index's layout: SimHash tables laid out for the search radius, or bands over the
    sketch (Settings.layout_spec); with auto and tables, the planner's choice."""
    from worker.layout.planner import choose

    return choose(
        settings.search_radius,
        settings.layout_spec,
        settings.expected_docs,
        settings.recall,
        settings.max_bucket_read,
    )


def fingerprinter(settings: Settings) -> Fingerprinter:
    from pathlib import Path

    from worker.text.fingerprint import Fingerprinter
    from worker.text.idf import IdfTable

    idf = IdfTable.load(Path(settings.idf_file)) if settings.idf_file else None
    return Fingerprinter(
        settings.shingle_size,
        settings.chinese_units,
        settings.min_words,
        idf,
        detect_format=settings.detect_format,
        main_content=settings.html_main_content,
    )


_settings_fingerprinter = fingerprinter  # (pipeline's argument of that name hides it)


def index_options(settings: Settings) -> IndexOptions:
    from worker.index.base import IndexOptions

    return IndexOptions(
        threshold=settings.threshold,
        similarity=settings.similarity,
        max_bucket_read=settings.max_bucket_read,
        retention_s=settings.retention_s,
        renew_on_match=settings.renew_on_match,
        redelivery_window_s=settings.redelivery_window_s,
    )


def memory_index(settings: Settings, clock_ms: Callable[[], int] | None = None) -> MemoryIndex:
    from worker.index.memory import MemoryIndex

    return MemoryIndex(layout(settings), index_options(settings), clock_ms=clock_ms)


def redis_client(settings: Settings) -> Client:
    from worker.index.redis.client import connect

    return connect(settings.redis_url, settings.redis_cluster)


def replica_client(settings: Settings) -> Client | None:
    """The client for a band index's reads before its calls (DEDUP_REDIS_READ_URL), if any."""
    from worker.index.redis.client import connect_replicas

    if not settings.redis_read_url:
        return None
    return connect_replicas(settings.redis_read_url, settings.redis_cluster)


def redis_index(
    settings: Settings,
    fingerprinter: Fingerprinter | None = None,
    on_reset: Callable[[str], None] | None = None,
) -> NamespaceIndex:
    """The shared index, on a client of its own; with the `fingerprinter` of a pipeline on it,
    its settings are recorded and checked with the layout. A band layout makes the band index
    (RedisBandIndex), SimHash tables the table index."""
    from worker.index.redis import RedisBandIndex, RedisIndex
    from worker.layout.bands import Bands

    chosen = layout(settings)
    spec = fingerprinter.fingerprint_spec if fingerprinter is not None else None
    if isinstance(chosen, Bands):
        return RedisBandIndex(
            redis_client(settings),
            settings.namespace,
            chosen,
            index_options(settings),
            expected_docs=settings.expected_docs,
            fingerprint_spec=spec,
            on_reset=on_reset,
            replicas_acked=settings.redis_replicas_acked,
            replicas=replica_client(settings),
            known_articles=settings.known_articles,
        )
    return RedisIndex(
        redis_client(settings),
        settings.namespace,
        chosen,
        bucket_cache=settings.bucket_cache,
        fingerprint_spec=spec,
        on_reset=on_reset,
        options=index_options(settings),
        expected_docs=settings.expected_docs,
        replicas_acked=settings.redis_replicas_acked,
    )


def reader(settings: Settings, fingerprinter: Fingerprinter) -> IsolatedReader:
    """Reads HTML and e-mail as `fingerprinter` does, in a child process, each text within
    settings.read_timeout_ms. The caller starts and closes it (`async with`)."""
    from worker.pipeline.isolated import IsolatedReader, memory_cap

    return IsolatedReader(
        fingerprinter, settings.read_timeout_ms / 1000, memory_cap(settings.max_message_bytes)
    )


def pipeline(
    settings: Settings,
    index: Index,
    fingerprinter: Fingerprinter | None = None,
    reader: Reader | None = None,
) -> Pipeline:
    """Decisions against `index`, with `fingerprinter` (default: the settings')
    and `reader` (default: texts read in this process, without a deadline)."""
    from worker.pipeline.pipeline import Pipeline

    made = fingerprinter or _settings_fingerprinter(settings)
    return Pipeline(made, index, settings.max_message_bytes, reader)
