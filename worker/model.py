"""The values that flow through the worker: an input decoded (Article, Deletion, or a
Rejection with its Reason), what the index is asked about an article (Probe) or a deletion
(Forget), on whose behalf (Owner), and what it answers (Verdict, of a Kind), and the decision
on each input message (Accepted, Forgotten or a Rejection). Plain data, no behaviour beyond
a property; they import nothing but the standard library, so that every layer can use them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Format(StrEnum):
    """How an article's text is read (text/markup.py)."""

    TEXT = "text"
    HTML = "html"
    EMAIL = "email"


SIMHASH_BITS = 64  # the width of a search fingerprint (Fingerprint.search)


@dataclass(frozen=True)
class Fingerprint:
    """What the index needs of a text (text/fingerprint.py)."""

    content_hash: bytes  # xxh3_128 of the normalised text, 16 bytes
    search: int | None  # the SimHash; None when the text is too short for a stable one
    words: float  # length in words (a character unit counts as half a word)
    sketch: bytes | None = None  # the set sketch of its shingles; None with `search`
    format: Format = Format.TEXT  # what the text was read as
    line: bytes | None = None  # a short text's units, 16 bits each (text/lines.py); else None


class Reason(StrEnum):
    """Why a message went to the dead-letter topic (the `reason` field)."""

    EMPTY = "empty_message"
    TOO_LARGE = "too_large"
    INVALID_UTF8 = "invalid_utf8"
    INVALID_JSON = "invalid_json"
    NOT_AN_OBJECT = "not_an_object"
    MISSING_FIELD = "missing_field"
    WRONG_TYPE = "wrong_type"
    INVALID_VALUE = "invalid_value"
    UNSUPPORTED_VERSION = "unsupported_version"
    TOO_DEEP = "too_deep"  # HTML or MIME parts nested past a limit (worker.text.markup)
    TIMEOUT = "timeout"  # reading the HTML or e-mail took longer than DEDUP_READ_TIMEOUT_MS
    UNREADABLE = "unreadable"  # reading the HTML or e-mail failed (the error is in the detail)


@dataclass(frozen=True)
class Article:
    id: str
    text: str
    raw: bytes  # the message as published: passed on to the unique topic byte for byte
    format: Format | None = None  # as the message says; None: as it looks


@dataclass(frozen=True)
class Deletion:
    """A tombstone: {"id": ..., "op": "delete"} removes the article from the index."""

    id: str


@dataclass(frozen=True)
class Rejection:
    reason: Reason
    detail: str


class Kind(StrEnum):
    UNIQUE = "unique"
    EXACT = "exact"  # same normalised text as an earlier article
    NEAR = "near"  # within the threshold of an earlier article, and as similar as required
    RELATED = "related"  # not a duplicate, but within the related threshold: an original


@dataclass(frozen=True)
class Probe:
    """What the index is asked about one article."""

    id: str
    content_hash: bytes
    fingerprint: int | None  # the search fingerprint; None for a text too short for one
    sketch: bytes | None = None  # the set sketch of its shingles (with a fingerprint)
    # The message's (partition, offset) in the input topic; None outside a stream. The index
    # keeps it with the verdict, so that a redelivery of the message is known for one even
    # after a later message deleted or replaced the article.
    position: tuple[int, int] | None = None
    line: bytes | None = None  # a short text's units (Fingerprint.line)

    def __post_init__(self) -> None:
        if self.fingerprint is not None and not self.sketch:
            raise ValueError(f"probe {self.id!r}: a fingerprint needs its sketch")

    @property
    def table_key(self) -> int | None:
        """The fingerprint SimHash tables find it by: none for a short line, which its words
        find (worker.text.lines), whatever the layout."""
        return None if self.line else self.fingerprint


@dataclass(frozen=True)
class Forget:
    """What the index is asked to do for a deletion: take the article out."""

    id: str
    # The deleting message's (partition, offset) in the input topic; None outside a stream.
    # A redelivered deletion gets its first answer again, and removes nothing that a later
    # message of the partition decided.
    position: tuple[int, int] | None = None


@dataclass(frozen=True)
class Owner:
    """The worker asking, as the owner of the input partitions of its messages: `scope` names
    the consumer group and topic, `generation` is the group generation it owns them in. The
    index refuses the messages of a worker whose partition a later generation claimed."""

    scope: str
    generation: int


@dataclass(frozen=True, slots=True)
class Verdict:
    id: str
    kind: Kind
    fingerprint: int | None
    duplicate_of: str | None = None  # the closest earlier article it repeats (or is related to)
    distance: int | None = None  # bits between the two search fingerprints
    duplicate_of_fingerprint: int | None = None
    similarity: float | None = None  # their estimated Jaccard similarity (1.0: exact)
    original: str | None = None  # the first article of its cluster (for a duplicate)
    seen_at_ms: int = 0  # when the index first decided; the same on every replay
    replayed: bool = False  # True when the id had been decided before (a redelivery)
    candidates: int = 0  # bucket entries compared to decide (0 on a replay)
    hot_buckets: int = 0  # buckets that held more entries than the index reads
    replaced: bool = False  # the id was indexed with other text, which this one replaced

    @property
    def is_duplicate(self) -> bool:
        return self.kind in (Kind.EXACT, Kind.NEAR)


@dataclass(frozen=True)
class Accepted:
    """An article, decided."""

    article: Article
    fingerprint: Fingerprint
    verdict: Verdict


@dataclass(frozen=True)
class Forgotten:
    """A deletion was applied; `was_indexed` says whether the index held the id."""

    id: str
    was_indexed: bool


Decision = Accepted | Forgotten | Rejection
