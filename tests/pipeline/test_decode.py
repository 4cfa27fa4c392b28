import json

import pytest

from tests.support.schemas import is_valid
from worker.model import Article, Deletion, Format, Reason, Rejection
from worker.pipeline.decode import decode_article

LIMIT = 10_000


def _decode(raw: bytes | None) -> Article | Deletion | Rejection:
    return decode_article(raw, LIMIT)


def test_a_valid_article_keeps_its_bytes() -> None:
    raw = json.dumps({"id": "a1", "text": "Some text", "title": "T", "tags": ["x"]}).encode()
    assert _decode(raw) == Article("a1", "Some text", raw)


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (None, Reason.EMPTY),
        (b"", Reason.EMPTY),
        (b"x" * (LIMIT + 1), Reason.TOO_LARGE),
        (b"\xff\xfe{}", Reason.INVALID_UTF8),
        (b"{not json", Reason.INVALID_JSON),
        (b'{"id": "a", "text": NaN}', Reason.INVALID_JSON),
        (b"[" * 4000 + b"]" * 4000, Reason.INVALID_JSON),  # nested too deeply
        (b'"a string"', Reason.NOT_AN_OBJECT),
        (b"[1, 2]", Reason.NOT_AN_OBJECT),
        (b'{"text": "no id"}', Reason.MISSING_FIELD),
        (b'{"id": "no text"}', Reason.MISSING_FIELD),
        (b'{"id": 42, "text": "t"}', Reason.WRONG_TYPE),
        (b'{"id": "a", "text": ["t"]}', Reason.WRONG_TYPE),
        (b'{"id": "a", "text": null}', Reason.WRONG_TYPE),
        (b'{"id": "  ", "text": "t"}', Reason.INVALID_VALUE),
        (b'{"id": "a", "text": "   "}', Reason.INVALID_VALUE),
        (b'{"id": "a", "text": "\\ud800 lone"}', Reason.INVALID_VALUE),  # a lone surrogate
        (b'{"id": "\\udfff", "text": "t"}', Reason.INVALID_VALUE),
        (b'{"id": "a", "text": "t", "schema_version": 2}', Reason.UNSUPPORTED_VERSION),
        (b'{"id": "a", "text": "t", "schema_version": true}', Reason.UNSUPPORTED_VERSION),
        (b'{"id": "a", "op": "remove"}', Reason.INVALID_VALUE),
        (b'{"op": "delete"}', Reason.MISSING_FIELD),
        (b'{"id": 7, "op": "delete"}', Reason.WRONG_TYPE),
        (b'{"id": "a", "op": "upsert"}', Reason.MISSING_FIELD),
        (b'{"id": "a", "text": "t", "format": "pdf"}', Reason.INVALID_VALUE),
        (b'{"id": "a", "text": "t", "format": 1}', Reason.INVALID_VALUE),
    ],
)
def test_bad_input_is_rejected_with_a_reason(raw: bytes | None, reason: Reason) -> None:
    result = _decode(raw)
    assert isinstance(result, Rejection)
    assert result.reason is reason
    assert result.detail


def test_an_article_may_say_its_format() -> None:
    raw = json.dumps({"id": "a", "text": "<p>x</p>", "format": "html"}).encode()
    assert _decode(raw) == Article("a", "<p>x</p>", raw, Format.HTML)


def test_a_tombstone_is_a_deletion() -> None:
    assert _decode(b'{"id": "a1", "op": "delete"}') == Deletion("a1")
    assert _decode(b'{"id": "a1", "op": "delete", "text": "ignored"}') == Deletion("a1")
    raw = b'{"id": "a1", "op": "upsert", "text": "t"}'
    assert _decode(raw) == Article("a1", "t", raw)


def test_id_too_long_is_rejected() -> None:
    result = _decode(json.dumps({"id": "x" * 513, "text": "t"}).encode())
    assert isinstance(result, Rejection)
    assert result.reason is Reason.INVALID_VALUE


@pytest.mark.parametrize("number", [b"1e400", b"9" * 400, b"-1e-400"])
def test_numbers_beyond_a_double_are_still_json(number: bytes) -> None:
    raw = b'{"id": "a", "text": "t", "n": ' + number + b"}"
    assert _decode(raw) == Article("a", "t", raw)


def test_escaped_surrogate_pairs_are_fine() -> None:
    result = _decode(b'{"id": "a", "text": "smile \\ud83d\\ude00"}')
    assert isinstance(result, Article)
    assert result.text == "smile 😀"


@pytest.mark.parametrize(
    "raw",
    [
        b'{"id": "a", "text": "t"}',
        b'{"id": "a", "text": "t", "schema_version": 1, "extra": {"n": 1}}',
        b'{"text": "no id"}',
        b'{"id": 42, "text": "t"}',
        b'{"id": "", "text": "t"}',
        b'{"id": "a", "text": " "}',
        b'{"id": "a", "text": "t", "schema_version": 2}',
        b"[1]",
        b'{"id": "a", "op": "delete"}',
        b'{"id": "a", "op": "upsert"}',
        b'{"id": "a", "op": "remove", "text": "t"}',
        b'{"op": "delete"}',
        b'{"id": "a", "text": "<p>t</p>", "format": "html"}',
        b'{"id": "a", "text": "t", "format": "pdf"}',
    ],
)
def test_decoder_and_input_schema_agree(raw: bytes) -> None:
    accepted = isinstance(_decode(raw), Article | Deletion)
    assert accepted == is_valid("article", json.loads(raw))
