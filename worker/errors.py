"""Every error this package raises derives from DedupError; errors of Kafka's and Redis's
clients are translated into these where those clients are called.

    DedupError
    ├── ConfigError          a setting cannot work; the message says the fix
    ├── IndexStoreError      the index could not answer
    │   ├── IndexUnavailable     Redis cannot be reached now (retry)
    │   │   └── OutOfTurn            a batch sent before this one failed (retry after it)
    │   ├── IndexReset           the index was emptied or rolled back under the worker
    │   ├── IndexFenced          another worker owns the input partition now (do not retry)
    │   └── LayoutMismatch       the index was built with another layout or fingerprints
    ├── KafkaUnavailable     Kafka cannot be reached now (retry)
    ├── KafkaRefused         Kafka refused the credentials or rights (do not retry)
    └── ReaderUnavailable    the process that reads HTML and e-mail did not start
"""


class DedupError(Exception):
    """Base class of all dedup-worker errors."""


class ConfigError(DedupError):
    """A setting is missing or has a value that cannot work; the message says the fix."""


class IndexStoreError(DedupError):
    """The index could not answer (base of the index errors)."""


class IndexUnavailable(IndexStoreError):
    """The index's server cannot be reached right now; retrying later may succeed."""


class OutOfTurn(IndexUnavailable):
    """A batch sent to the index before this one failed after this one was started: this one
    was not decided (or not kept in its place), and is to be tried again once the earlier one
    succeeded, so that batches take effect in the order they came."""


class IndexFenced(IndexStoreError):
    """The index refused a batch: a later consumer group generation claimed one of its input
    partitions, so another worker owns it now and decides its messages."""


class IndexReset(IndexStoreError):
    """The index was emptied or built again since the worker read it (a flush, a restart
    without its data, a failover): what the worker held about it is void. RedisIndex recovers
    from it itself; it reaches a caller only from the two halves of a check (read_buckets,
    run_checks), which then start the check again."""


class LayoutMismatch(IndexStoreError):
    """The index was built with another layout (threshold, bands) or other fingerprint
    settings than this worker's."""


class KafkaUnavailable(DedupError):
    """The Kafka cluster cannot be reached right now; retrying later may succeed."""


class KafkaRefused(DedupError):
    """Kafka refused the worker's credentials or rights; retrying will not help."""


class ReaderUnavailable(DedupError):
    """The child process that reads HTML and e-mail (worker.pipeline.isolated) did not start."""
