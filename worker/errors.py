"""Every error this package raises derives from DedupError; errors of Kafka's and Redis's
clients are translated into these where those clients are called.

    DedupError
    ├── ConfigError          a setting cannot work; the message says the fix
    ├── IndexStoreError      the index could not answer
    │   ├── IndexUnavailable     Redis cannot be reached now (retry)
    │   └── LayoutMismatch       the index was built with another layout
    ├── KafkaUnavailable     Kafka cannot be reached now (retry)
    └── KafkaRefused         Kafka refused the credentials or rights (do not retry)
"""


class DedupError(Exception):
    """Base class of all dedup-worker errors."""


class ConfigError(DedupError):
    """A setting is missing or has a value that cannot work; the message says the fix."""


class IndexStoreError(DedupError):
    """The index could not answer (base of the index errors)."""


class IndexUnavailable(IndexStoreError):
    """The index's server cannot be reached right now; retrying later may succeed."""


class LayoutMismatch(IndexStoreError):
    """The index was built with another layout (threshold, bands) than this worker's."""


class KafkaUnavailable(DedupError):
    """The Kafka cluster cannot be reached right now; retrying later may succeed."""


class KafkaRefused(DedupError):
    """Kafka refused the worker's credentials or rights; retrying will not help."""
