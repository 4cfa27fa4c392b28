"""Decoding an input message into an Article, or a Rejection that says what is wrong. Pure."""

from __future__ import annotations

import json
from typing import Any

import orjson

from worker.model import Article, Deletion, Format, Reason, Rejection

SCHEMA_VERSION = 1
MAX_ID_CHARS = 512
FORMATS = frozenset(f.value for f in Format)


def decode_article(raw: bytes | None, max_bytes: int) -> Article | Deletion | Rejection:
    """An Article from one message's bytes: a JSON object with string `id` and `text`; or a
    Deletion: `id` and "op": "delete"."""
    if not raw:
        return Rejection(Reason.EMPTY, "the message has no value; send a JSON article")
    if len(raw) > max_bytes:
        return Rejection(
            Reason.TOO_LARGE,
            f"{len(raw)} bytes is over the limit of {max_bytes} (DEDUP_MAX_MESSAGE_BYTES)",
        )
    body = _parse(raw)
    if isinstance(body, Rejection):
        return body
    return article_from_object(body, raw)


def _parse(raw: bytes) -> Any:
    """The JSON value in raw, or a Rejection. orjson is fast but refuses some valid JSON
    (numbers beyond a double's range); the standard parser has the last word on those."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as fast_error:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Rejection(Reason.INVALID_UTF8, f"not UTF-8: {exc}")
        try:
            return json.loads(text, parse_constant=_reject_constant)
        except (ValueError, RecursionError):
            return Rejection(Reason.INVALID_JSON, f"not valid JSON: {fast_error}")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def article_from_object(body: Any, raw: bytes) -> Article | Deletion | Rejection:
    if not isinstance(body, dict):
        return Rejection(Reason.NOT_AN_OBJECT, f"expected a JSON object, got {_json_type(body)}")
    version = body.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION or isinstance(version, bool):
        return Rejection(
            Reason.UNSUPPORTED_VERSION,
            f"schema_version {version!r} is not supported; use {SCHEMA_VERSION}",
        )
    op = body.get("op", "upsert")
    if op not in ("upsert", "delete"):
        return Rejection(
            Reason.INVALID_VALUE, f'\'op\' must be "upsert" (the default) or "delete", got {op!r}'
        )
    fields = ("id",) if op == "delete" else ("id", "text")
    for field in fields:
        problem = _string_problem(body, field)
        if problem is not None:
            return problem
    article_id = body["id"]
    if not article_id.strip() or len(article_id) > MAX_ID_CHARS:
        return Rejection(
            Reason.INVALID_VALUE, f"'id' must be 1..{MAX_ID_CHARS} characters and not blank"
        )
    if op == "delete":
        return Deletion(article_id)
    if not body["text"].strip():
        return Rejection(Reason.INVALID_VALUE, "'text' is empty")
    format = body.get("format")
    if format is not None and format not in FORMATS:
        return Rejection(
            Reason.INVALID_VALUE,
            f"'format' must be one of {sorted(FORMATS)} (or left out), got {format!r}",
        )
    return Article(article_id, body["text"], raw, None if format is None else Format(format))


def _string_problem(body: dict[str, Any], field: str) -> Rejection | None:
    if field not in body:
        return Rejection(Reason.MISSING_FIELD, f"the article has no {field!r} field")
    if not isinstance(body[field], str):
        return Rejection(
            Reason.WRONG_TYPE, f"{field!r} must be a string, got {_json_type(body[field])}"
        )
    if not _is_utf8(body[field]):
        return Rejection(
            Reason.INVALID_VALUE, f"{field!r} holds a lone UTF-16 surrogate escape; it is not text"
        )
    return None


def _is_utf8(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
