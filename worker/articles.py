"""Decoding an input message into an Article, or a Rejection that says what is wrong. Pure."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

SCHEMA_VERSION = 1
MAX_ID_CHARS = 512
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")


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
    ID_CONFLICT = "id_conflict"


@dataclass(frozen=True)
class Article:
    id: str
    text: str
    body: dict[str, Any]  # the whole decoded object, passed on to the unique topic


@dataclass(frozen=True)
class Rejection:
    reason: Reason
    detail: str


def decode_article(raw: bytes | None, max_bytes: int) -> Article | Rejection:
    """An Article from one message's bytes: a JSON object with string `id` and `text`."""
    if not raw:
        return Rejection(Reason.EMPTY, "the message has no value; send a JSON article")
    if len(raw) > max_bytes:
        return Rejection(Reason.TOO_LARGE,
                         f"{len(raw)} bytes is over the limit of {max_bytes} "
                         "(DEDUP_MAX_MESSAGE_BYTES)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejection(Reason.INVALID_UTF8, f"not UTF-8: {exc}")
    try:
        body = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        detail = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        return Rejection(Reason.INVALID_JSON, f"not valid JSON: {detail}")
    if _ESCAPED_SURROGATE.search(raw) and _has_lone_surrogate(body):
        return Rejection(Reason.INVALID_VALUE, "a string holds a lone UTF-16 surrogate escape")
    return article_from_object(body)


def article_from_object(body: Any) -> Article | Rejection:
    if not isinstance(body, dict):
        return Rejection(Reason.NOT_AN_OBJECT,
                         f"expected a JSON object, got {_json_type(body)}")
    version = body.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION or isinstance(version, bool):
        return Rejection(Reason.UNSUPPORTED_VERSION,
                         f"schema_version {version!r} is not supported; use {SCHEMA_VERSION}")
    for field in ("id", "text"):
        if field not in body:
            return Rejection(Reason.MISSING_FIELD, f"the article has no {field!r} field")
        if not isinstance(body[field], str):
            return Rejection(Reason.WRONG_TYPE,
                             f"{field!r} must be a string, got {_json_type(body[field])}")
    article_id, text = body["id"], body["text"]
    if not article_id.strip() or len(article_id) > MAX_ID_CHARS:
        return Rejection(Reason.INVALID_VALUE,
                         f"'id' must be 1..{MAX_ID_CHARS} characters and not blank")
    if not text.strip():
        return Rejection(Reason.INVALID_VALUE, "'text' is empty")
    return Article(article_id, text, body)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_lone_surrogate(k) or _has_lone_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_lone_surrogate(v) for v in value)
    return False


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a string"
