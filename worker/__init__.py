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
from worker.index import Index, MemoryIndex
from worker.index.redis import RedisIndex
from worker.model import Kind, Probe, Verdict
from worker.settings import Settings
from worker.text.fingerprint import Fingerprint, Fingerprinter
from worker.text.simhash import hamming, simhash

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
