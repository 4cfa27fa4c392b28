"""All settings in one frozen object, read from environment variables named in ENV.

Nothing else in the package reads the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from importlib.util import find_spec
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

from worker import defaults
from worker.errors import ConfigError
from worker.model import SIMHASH_BITS
from worker.settings.environment import parse_value, read_variable
from worker.text.features import ChineseUnits

_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
KAFKA_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")

# The settings that name something (a Kafka topic, a Redis key's part, a consumer group).
_NAMES = (
    "namespace",
    "app_id",
    "input_topic",
    "unique_topic",
    "duplicates_topic",
    "rejected_topic",
)
# The plain-string settings with a fixed set of values.
_ONE_OF = {
    "kafka_security_protocol": KAFKA_PROTOCOLS,
    "kafka_sasl_mechanism": SASL_MECHANISMS,
    "log_format": ("text", "json"),
}


# The settings whose one rule is a least value.
_AT_LEAST = {
    "expected_docs": 1,
    "min_words": 0,
    "max_message_bytes": 1024,
    "read_timeout_ms": 1,
    "input_partitions": 1,
    "replication_factor": 1,
    "batch_size": 1,
    "batch_wait_ms": 0,
    "max_bucket_read": 1,
    "known_articles": 2,
    "redis_replicas_acked": 0,
}


class Guarantee(StrEnum):
    """How often each input's verdict reaches the output topics."""

    AT_LEAST_ONCE = "at_least_once"  # once, or again after a crash (the same verdict)
    # once for a consumer that reads with isolation.level=read_committed (Kafka transactions)
    EXACTLY_ONCE = "exactly_once"


class Isolation(StrEnum):
    """Which messages of the input topic the worker reads (Kafka's isolation.level)."""

    READ_COMMITTED = "read_committed"  # not those of a publisher's aborted transactions
    READ_UNCOMMITTED = "read_uncommitted"  # every message, aborted transactions' too


@dataclass(frozen=True)
class Settings:
    """Every setting. Secrets (the Kafka password, a Redis URL that may carry one) are left out
    of repr(), so they cannot reach a log through it."""

    kafka_bootstrap: str = "127.0.0.1:9092"
    kafka_security_protocol: str = "PLAINTEXT"
    kafka_sasl_mechanism: str = "PLAIN"
    kafka_username: str = ""
    kafka_password: str = field(default="", repr=False)
    kafka_ssl_cafile: str = ""
    redis_url: str = field(default="redis://127.0.0.1:6379/0", repr=False)
    redis_cluster: bool = False  # the URL names one node of a Redis Cluster
    # a batch's verdicts are given out once this many replicas hold its writes (0: at once)
    redis_replicas_acked: int = 0
    # where a band index reads before its calls: a replica of redis_url, or with redis_cluster
    # any node (the reads go to the namespace's replicas); "": the primary
    redis_read_url: str = field(default="", repr=False)
    bucket_cache: bool = True  # the worker keeps the buckets in memory (BucketCache)
    # with a band layout, the indexed articles a worker keeps of those it read (band_known.py)
    known_articles: int = 1 << 20
    namespace: str = "default"
    app_id: str = "dedup-worker"
    input_topic: str = "articles"
    unique_topic: str = "articles.unique"
    duplicates_topic: str = "articles.duplicates"
    rejected_topic: str = "articles.rejected"
    input_partitions: int = 4
    replication_factor: int = 1
    threshold: int = defaults.THRESHOLD
    related_threshold: int = defaults.RELATED_THRESHOLD
    # auto (layout_spec), or pigeonhole, multi-index:M, blocks:B, sampled:LxR, bands:BxR
    layout: str = defaults.LAYOUT
    expected_docs: int = defaults.EXPECTED_DOCS
    recall: float = defaults.RECALL
    retention_days: float = 0.0  # older articles stop matching and are removed; 0: kept
    similarity: float = defaults.SIMILARITY  # estimated Jaccard a duplicate must reach
    renew_on_match: bool = defaults.RENEW_ON_MATCH  # a matched article's retention restarts
    # how long a deleted or replaced article's record stays, for redeliveries (0: not kept)
    redelivery_window_s: int = defaults.REDELIVERY_WINDOW_S
    idf_file: str = ""  # an IDF table (dedup-worker idf build); "": the packaged one
    shingle_size: int = defaults.SHINGLE_SIZE
    chinese_units: ChineseUnits = ChineseUnits.CHARACTERS  # defaults.CHINESE_UNITS
    min_words: float = defaults.MIN_WORDS
    detect_format: bool = defaults.DETECT_FORMAT  # HTML and e-mail recognised and read
    html_main_content: bool = defaults.MAIN_CONTENT  # HTML without navigation and the like
    max_message_bytes: int = 1_000_000
    # the longest an article's HTML or e-mail is read for (in a child process), else a dead letter
    read_timeout_ms: int = 5000
    processing_guarantee: Guarantee = Guarantee.AT_LEAST_ONCE
    input_isolation_level: Isolation = Isolation.READ_COMMITTED
    batch_size: int = 100
    batch_wait_ms: int = 10
    max_bucket_read: int = defaults.MAX_BUCKET_READ
    http_port: int = 8080
    log_level: str = "info"
    log_format: str = "text"

    def __post_init__(self) -> None:
        enumerated = (
            ("chinese_units", ChineseUnits),
            ("processing_guarantee", Guarantee),
            ("input_isolation_level", Isolation),
        )
        for name, kind in enumerated:
            if getattr(self, name) in {m.value for m in kind}:
                object.__setattr__(self, name, kind(getattr(self, name)))
        top = defaults.MAX_THRESHOLD
        _check(
            0 <= self.threshold <= top,
            f"threshold must be 0..{top} bits, got {self.threshold}; "
            "8 suits edited news (docs/quality.md)",
        )
        _check(
            self.related_threshold == 0 or self.threshold < self.related_threshold <= top,
            f"related_threshold must be 0 (off) or {self.threshold + 1}..{top} "
            f"(above threshold), got {self.related_threshold}",
        )
        _check(0.0 < self.recall <= 1.0, f"recall must be in (0, 1], got {self.recall}")
        _check(
            self.retention_days >= 0,
            f"retention_days must be >= 0 (0 keeps articles for ever), got {self.retention_days}",
        )
        if self.layout != "auto":
            from worker.layout.planner import named  # (numpy: only for a named layout)

            try:
                named(self.layout, self.search_radius)
            except ValueError as exc:
                raise ConfigError(f"{exc}; or use auto (the planner's choice)") from None
            _check(
                not self.bands or self.related_threshold == 0,
                "related_threshold needs SimHash tables: band layouts judge by the sketch alone",
            )
        _check(
            0.0 < self.similarity <= 1.0,
            f"similarity must be in (0, 1] (an estimated Jaccard similarity), got "
            f"{self.similarity}; {defaults.SIMILARITY} suits most streams (docs/quality.md)",
        )
        _check(
            1 <= self.shingle_size <= defaults.MAX_SHINGLE_SIZE,
            f"shingle_size must be 1..{defaults.MAX_SHINGLE_SIZE} units, got {self.shingle_size}",
        )
        for name, kind in enumerated:
            _check(
                isinstance(getattr(self, name), kind),
                f"{name} must be one of {[m.value for m in kind]}, got {getattr(self, name)!r}",
            )
        _check(
            not self.exactly_once or self.input_isolation_level is Isolation.READ_COMMITTED,
            "exactly_once needs input_isolation_level read_committed: a message of an aborted "
            "transaction would get a verdict",
        )
        _check(
            self.chinese_units is not ChineseUnits.JIEBA or find_spec("jieba") is not None,
            "chinese_units 'jieba' needs jieba: pip install 'dedup-worker[jieba]' "
            "(or use the default, characters)",
        )
        _check(
            self.redelivery_window_s >= 0,
            "redelivery_window_s must be >= 0 seconds (0 keeps no record of a deleted or "
            f"replaced article), got {self.redelivery_window_s}",
        )
        for name, least in _AT_LEAST.items():
            value = getattr(self, name)
            _check(value >= least, f"{name} must be >= {least}, got {value}")
        _check(
            0 <= self.http_port <= 65535,
            f"http_port must be 0 (off) or a TCP port, got {self.http_port}",
        )
        for name, choices in _ONE_OF.items():
            value = getattr(self, name)
            _check(value in choices, f"{name} must be one of {choices}, got {value!r}")
        if self.kafka_uses_sasl:
            _check(
                bool(self.kafka_username and self.kafka_password),
                "SASL needs DEDUP_KAFKA_USERNAME and DEDUP_KAFKA_PASSWORD",
            )
        for name in ("redis_url", "redis_read_url") if self.redis_read_url else ("redis_url",):
            _check(
                getattr(self, name).startswith(("redis://", "rediss://", "unix://")),
                f"{name} must start with redis://, rediss:// (TLS) or unix://",
            )
        _check(
            not self.redis_read_url
            or self.redis_cluster
            or redis_db(self.redis_read_url) == redis_db(self.redis_url),
            "redis_read_url must name the same database as redis_url (a replica holds the "
            "primary's databases under their numbers)",
        )
        for name in _NAMES:
            value = getattr(self, name)
            _check(
                bool(_NAME.match(value)),
                f"{name} must be 1-100 characters of A-Z a-z 0-9 . _ -, got {value!r}",
            )
        topics = {self.input_topic, self.unique_topic, self.duplicates_topic, self.rejected_topic}
        _check(len(topics) == 4, "the four topics must have four different names")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Defaults, then environment variables (see ENV), then explicit overrides. Any
        variable may instead name a file that holds its value, as VARIABLE_FILE (container
        secrets: DEDUP_REDIS_URL_FILE=/run/secrets/redis-url)."""
        environ = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for each in fields(cls):
            var = ENV[each.name]
            raw = read_variable(var, environ)
            if raw is not None:
                values[each.name] = parse_value(var, raw, each.default)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def search_radius(self) -> int:
        """How far the index looks: the related threshold when set, else the threshold."""
        return max(self.threshold, self.related_threshold)

    @property
    def layout_spec(self) -> str:
        """The layout the index uses: the one named, or with auto the planner's SimHash tables
        up to defaults.AUTO_BANDS_PAST expected articles and defaults.AUTO_BANDS past them (a
        decision's work and the worker's memory then stay bounded as the index grows). Related
        alerts need the tables."""
        if (
            self.layout == "auto"
            and self.expected_docs > defaults.AUTO_BANDS_PAST
            and self.related_threshold == 0
        ):
            return defaults.AUTO_BANDS
        return self.layout

    @property
    def bands(self) -> bool:
        """Whether the index has a band layout (judged by the sketch; short lines by words)."""
        return self.layout_spec.startswith("bands")

    @property
    def alert_threshold(self) -> int:
        """The threshold a duplicate alert names: with a band layout, every distance (the
        sketch, or a short line's words, alone decides)."""
        return SIMHASH_BITS if self.bands else self.threshold

    @property
    def retention_s(self) -> int:
        return round(self.retention_days * 86_400)

    @property
    def exactly_once(self) -> bool:
        return self.processing_guarantee is Guarantee.EXACTLY_ONCE

    @property
    def kafka_uses_ssl(self) -> bool:
        return self.kafka_security_protocol in ("SSL", "SASL_SSL")

    @property
    def kafka_uses_sasl(self) -> bool:
        return self.kafka_security_protocol.startswith("SASL")

    @property
    def secrets(self) -> list[str]:
        """Values that must never be logged: the Kafka password, and the Redis password as the
        URL writes it and as the client reads it (redis_passwords). The log filter adds the
        forms each may be printed in (escaped, percent-encoded: stream/logs.py)."""
        found = [
            self.kafka_password,
            *redis_passwords(self.redis_url),
            *redis_passwords(self.redis_read_url),
        ]
        return list(dict.fromkeys(s for s in found if s))

    @property
    def output_max_bytes(self) -> int:
        """Largest output message: an article's JSON may grow when re-encoded (an escaped control
        character takes 6 bytes), and dead letters may carry the raw bytes in base64."""
        return 7 * self.max_message_bytes + 64 * 1024


def redis_db(url: str) -> int:
    """The database a Redis URL names, as redis-py reads it: a `db` argument, else its path."""
    parts = urlsplit(url)
    for argument in parts.query.split("&"):
        name, _, value = argument.partition("=")
        if unquote_plus(name) == "db" and value.isdigit():
            return int(value)
    path = parts.path.strip("/")
    return int(path) if parts.scheme != "unix" and path.isdigit() else 0


def redis_passwords(url: str) -> list[str]:
    """A Redis URL's password in each form: as written in its user part or in a `password`
    query argument (redis-py takes either), and decoded as redis-py decodes it (the user
    part once; a query argument once, or twice before redis-py 8.1)."""
    parts = urlsplit(url)
    forms = [parts.password, unquote(parts.password)] if parts.password else []
    for argument in parts.query.split("&"):
        name, _, value = argument.partition("=")
        if unquote_plus(name) == "password":
            once = unquote_plus(value)
            forms += [value, once, unquote(once)]
    return list(dict.fromkeys(f for f in forms if f))


# Every environment variable the worker reads: setting name -> variable name (each setting's
# name, upper-cased, after DEDUP_).
ENV: dict[str, str] = {each.name: f"DEDUP_{each.name.upper()}" for each in fields(Settings)}


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(message)
