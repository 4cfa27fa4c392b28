"""The JSON messages the worker writes (their schemas are in schemas/). Pure."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from typing import Any

import orjson

from worker.model import Accepted, Decision, Forgotten, Kind, Rejection
from worker.pipeline.decode import SCHEMA_VERSION
from worker.text.simhash import to_hex


class Destination(StrEnum):
    UNIQUE = "unique"
    DUPLICATES = "duplicates"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Source:
    """Where an input message came from."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "offset": self.offset,
            "timestamp_ms": self.timestamp_ms,
        }


@dataclass(frozen=True)
class Outgoing:
    destination: Destination
    key: bytes | None
    value: bytes | None  # None: a Kafka tombstone


def output_messages(
    decision: Decision,
    raw: bytes | None,
    key: bytes | None,
    source: Source,
    max_raw_bytes: int,
    *,
    threshold: int,
    related_threshold: int = 0,
) -> list[Outgoing]:
    """The messages one decision produces, and the topics they go to: one, except for a
    related article, which is unique and also gets a `related` alert, and for an article sent
    again with new text that is a duplicate, whose alert follows a tombstone of its old text.
    A deletion produces a tombstone (null value, keyed by the id) on the unique topic: the
    article is withdrawn."""
    if isinstance(decision, Forgotten):
        return [Outgoing(Destination.UNIQUE, decision.id.encode("utf-8"), None)]
    if isinstance(decision, Rejection):
        body = rejected(decision, raw, source, max_raw_bytes)
        return [Outgoing(Destination.REJECTED, key, encode(body))]
    article_key = decision.article.id.encode("utf-8")
    kind = decision.verdict.kind
    if decision.verdict.is_duplicate:
        encoded = encode(duplicate(decision, source, threshold))
        duplicate_alert = Outgoing(Destination.DUPLICATES, article_key, encoded)
        if decision.verdict.replaced:  # its old text, unique perhaps, has left the index
            return [Outgoing(Destination.UNIQUE, article_key, None), duplicate_alert]
        return [duplicate_alert]
    out = [Outgoing(Destination.UNIQUE, article_key, unique(decision, source))]
    if kind is Kind.RELATED:
        alert = duplicate(decision, source, related_threshold)
        out.append(Outgoing(Destination.DUPLICATES, article_key, encode(alert)))
    return out


def unique(decision: Accepted, source: Source) -> bytes:
    """The unique message, with the article inside exactly as it was published."""
    head = encode(_unique_fields(decision, source))
    return head[:-1] + b',"article":' + decision.article.raw + b"}"


def _unique_fields(decision: Accepted, source: Source) -> dict[str, Any]:
    verdict = decision.verdict
    return {
        "schema_version": SCHEMA_VERSION,
        "id": verdict.id,
        "fingerprint": _hex(verdict.fingerprint),
        "content_hash": decision.fingerprint.content_hash.hex(),
        "words": decision.fingerprint.words,
        "format": decision.fingerprint.format.value,
        "seen_at": iso_time(verdict.seen_at_ms),
        "source": source.as_json(),
    } | (
        {
            "related_to": verdict.duplicate_of,
            "distance": verdict.distance,
            "similarity": verdict.similarity,
        }
        if verdict.kind is Kind.RELATED
        else {}
    )


def duplicate(decision: Accepted, source: Source, threshold: int) -> dict[str, Any]:
    verdict = decision.verdict
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": verdict.kind.value,
        "id": verdict.id,
        "duplicate_of": verdict.duplicate_of,
        "original": verdict.original or verdict.duplicate_of,
        "distance": verdict.distance,
        "similarity": verdict.similarity,
        "threshold": threshold,
        "fingerprint": _hex(verdict.fingerprint),
        "duplicate_of_fingerprint": _hex(verdict.duplicate_of_fingerprint),
        "detected_at": iso_time(verdict.seen_at_ms),
        "source": source.as_json(),
    }


def rejected(
    rejection: Rejection, raw: bytes | None, source: Source, max_raw_bytes: int
) -> dict[str, Any]:
    """A dead letter. The raw value is kept (cut to max_raw_bytes; the source says where the
    whole message lies) as UTF-8 text when it is, else as base64."""
    raw = raw or b""
    kept = raw[:max_raw_bytes]
    text = _utf8_text(kept, may_cut=len(kept) < len(raw))
    if text is not None:
        shown, encoding, shown_bytes = text, "utf-8", len(text.encode("utf-8"))
    else:
        shown, encoding, shown_bytes = base64.b64encode(kept).decode("ascii"), "base64", len(kept)
    return {
        "schema_version": SCHEMA_VERSION,
        "reason": rejection.reason.value,
        "detail": rejection.detail,
        "raw": shown,
        "raw_encoding": encoding,
        "raw_bytes": len(raw),
        "raw_truncated": shown_bytes < len(raw),
        "source": source.as_json(),
    }


def scan_line(decision: Decision, line: int) -> dict[str, Any]:
    """One line of `dedup-worker scan` output."""
    if isinstance(decision, Rejection):
        return {
            "line": line,
            "verdict": "rejected",
            "reason": decision.reason.value,
            "detail": decision.detail,
        }
    if isinstance(decision, Forgotten):
        return {
            "line": line,
            "id": decision.id,
            "verdict": "deleted",
            "was_indexed": decision.was_indexed,
        }
    verdict = decision.verdict
    return {
        "line": line,
        "id": verdict.id,
        "verdict": "duplicate" if verdict.is_duplicate else "unique",
        "kind": verdict.kind.value,
        "duplicate_of": verdict.duplicate_of,
        "original": verdict.original,
        "distance": verdict.distance,
        "similarity": verdict.similarity,
        "fingerprint": _hex(verdict.fingerprint),
    }


def encode(body: dict[str, Any]) -> bytes:
    return orjson.dumps(body)


@lru_cache(maxsize=1024)  # one script call decides many articles at the same millisecond
def iso_time(ms: int) -> str:
    stamp = datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def _hex(fingerprint: int | None) -> str | None:
    return None if fingerprint is None else to_hex(fingerprint)


def _utf8_text(raw: bytes, may_cut: bool) -> str | None:
    """raw as text if it is UTF-8, else None. When raw was cut from a longer message, up to 3
    bytes of a character split by the cut may be dropped from its end."""
    for cut in range(4 if may_cut else 1):
        try:
            return raw[: len(raw) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None
