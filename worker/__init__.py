"""dedup-worker: near-duplicate detection for live text streams.

The public API: fingerprint texts, decide verdicts against an index, and the settings.
"""

from worker.errors import (
    ConfigError,
    DedupError,
    IndexStoreError,
    IndexUnavailable,
    KafkaUnavailable,
    LayoutMismatch,
)
from worker.fingerprint import Fingerprint, Fingerprinter
from worker.index import Index, MemoryIndex, RedisIndex
from worker.settings import Settings
from worker.simhash import hamming, simhash
from worker.verdict import Kind, Probe, Verdict

__all__ = [
    "ConfigError",
    "DedupError",
    "Fingerprint",
    "Fingerprinter",
    "Index",
    "IndexStoreError",
    "IndexUnavailable",
    "KafkaUnavailable",
    "Kind",
    "LayoutMismatch",
    "MemoryIndex",
    "Probe",
    "RedisIndex",
    "Settings",
    "Verdict",
    "hamming",
    "simhash",
]
