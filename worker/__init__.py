"""dedup-worker: near-duplicate detection for live text streams.

The public API: fingerprint texts, decide verdicts against an index (in memory, or shared in
Redis), and the settings. Names are imported on first use, so that `import worker` (and the
command line) loads neither numpy nor Redis's client until they are needed.
"""

from __future__ import annotations

from importlib import import_module, metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from worker.errors import (
        ConfigError,
        DedupError,
        IndexFenced,
        IndexReset,
        IndexStoreError,
        IndexUnavailable,
        KafkaRefused,
        KafkaUnavailable,
        LayoutMismatch,
        OutOfTurn,
        ReaderUnavailable,
    )
    from worker.index import Index, MemoryIndex
    from worker.index.base import IndexOptions
    from worker.index.redis import RedisIndex
    from worker.model import Fingerprint, Forget, Kind, Owner, Probe, Verdict
    from worker.settings import Settings
    from worker.text.fingerprint import Fingerprinter
    from worker.text.simhash import hamming, simhash

_WHERE = {
    "ConfigError": "worker.errors",
    "DedupError": "worker.errors",
    "IndexStoreError": "worker.errors",
    "IndexFenced": "worker.errors",
    "IndexReset": "worker.errors",
    "IndexUnavailable": "worker.errors",
    "KafkaRefused": "worker.errors",
    "KafkaUnavailable": "worker.errors",
    "LayoutMismatch": "worker.errors",
    "OutOfTurn": "worker.errors",
    "ReaderUnavailable": "worker.errors",
    "Fingerprint": "worker.model",
    "Fingerprinter": "worker.text.fingerprint",
    "Index": "worker.index",
    "IndexOptions": "worker.index.base",
    "MemoryIndex": "worker.index",
    "RedisIndex": "worker.index.redis",
    "Forget": "worker.model",
    "Kind": "worker.model",
    "Owner": "worker.model",
    "Probe": "worker.model",
    "Verdict": "worker.model",
    "Settings": "worker.settings",
    "hamming": "worker.text.simhash",
    "simhash": "worker.text.simhash",
}

__all__ = [
    "ConfigError",
    "DedupError",
    "Fingerprint",
    "Fingerprinter",
    "Forget",
    "Index",
    "IndexFenced",
    "IndexOptions",
    "IndexReset",
    "IndexStoreError",
    "IndexUnavailable",
    "KafkaRefused",
    "KafkaUnavailable",
    "Kind",
    "LayoutMismatch",
    "MemoryIndex",
    "OutOfTurn",
    "Owner",
    "Probe",
    "ReaderUnavailable",
    "RedisIndex",
    "Settings",
    "Verdict",
    "hamming",
    "simhash",
]
__version__ = metadata.version("dedup-worker")


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'worker' has no attribute {name!r}")
    return getattr(import_module(_WHERE[name]), name)


def __dir__() -> list[str]:
    return [*__all__, "__version__"]
