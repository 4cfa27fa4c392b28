"""Every message the worker writes fits its schema in schemas/."""

import base64
import json

import pytest

from tests.support.schemas import validate
from tests.support.texts import PRODUCT_PAGE, PROMOTION
from worker.index import MemoryIndex
from worker.index.base import IndexOptions
from worker.layout.bands import Bands
from worker.layout.tables import multi_index
from worker.model import Decision, Reason, Rejection
from worker.pipeline.outputs import (
    Destination,
    Outgoing,
    Source,
    output_messages,
    rejected,
    scan_line,
)
from worker.pipeline.pipeline import Pipeline
from worker.settings import Settings
from worker.text.fingerprint import Fingerprinter

SOURCE = Source("articles", 2, 41, 1_764_000_000_000)


async def _decisions(*raws: bytes, index: MemoryIndex | None = None) -> list[Decision]:
    return await Pipeline(Fingerprinter(), index or MemoryIndex(), 10_000).run(list(raws))


async def test_unique_and_duplicate_messages_fit_their_schemas() -> None:
    raws = [
        json.dumps({"id": "a", "text": PRODUCT_PAGE, "title": "Bag"}).encode(),
        json.dumps({"id": "b", "text": PRODUCT_PAGE.upper()}).encode(),
        json.dumps(
            {"id": "c", "text": PRODUCT_PAGE.replace("complete your kit,", PROMOTION)}
        ).encode(),
        json.dumps({"id": "d", "text": "too short"}).encode(),
    ]
    outs = [
        out
        for d, r in zip(await _decisions(*raws), raws, strict=True)
        for out in output_messages(d, r, None, SOURCE, 10_000, threshold=3)
    ]
    assert [o.destination for o in outs] == [
        Destination.UNIQUE,
        Destination.DUPLICATES,
        Destination.DUPLICATES,
        Destination.UNIQUE,
    ]
    bodies = [json.loads(o.value) for o in outs]
    validate("unique", bodies[0])
    validate("duplicate", bodies[1])
    validate("duplicate", bodies[2])
    validate("unique", bodies[3])
    assert bodies[0]["article"]["title"] == "Bag"
    assert outs[0].value.endswith(b',"article":' + raws[0] + b"}")  # passed on byte for byte
    assert bodies[1]["kind"] == "exact"
    assert bodies[1]["duplicate_of"] == "a"
    assert bodies[2]["kind"] == "near"
    assert bodies[2]["fingerprint"] != bodies[0]["fingerprint"]
    assert bodies[3]["fingerprint"] is None
    assert outs[0].key == b"a"


async def test_alerts_of_a_band_layout_fit_the_schema() -> None:
    """With bands a short line is matched by its words: a near-duplicate without distance,
    its threshold every bit (Settings.alert_threshold)."""
    line = "Fix the race between the bucket cache and its reload"
    raws = [
        json.dumps({"id": "a", "text": PRODUCT_PAGE}).encode(),
        json.dumps(
            {"id": "b", "text": PRODUCT_PAGE.replace("complete your kit,", PROMOTION)}
        ).encode(),
        json.dumps({"id": "l", "text": line}).encode(),
        json.dumps({"id": "m", "text": line.replace("reload", "reloading")}).encode(),
        json.dumps({"id": "v2", "text": "Bump the version to two"}).encode(),  # (no SimHash)
        json.dumps({"id": "v3", "text": "Bump the version to three"}).encode(),
    ]
    index = MemoryIndex(Bands(), IndexOptions())
    decisions = await Pipeline(Fingerprinter(), index, 10_000).run(raws)
    threshold = Settings(layout="bands:16x4").alert_threshold
    outs = [
        out
        for d, r in zip(decisions, raws, strict=True)
        for out in output_messages(d, r, None, SOURCE, 10_000, threshold=threshold)
    ]
    alerts = [json.loads(o.value) for o in outs if o.destination is Destination.DUPLICATES]
    for alert in alerts:
        validate("duplicate", alert)
    assert [(a["id"], a["duplicate_of"], a["threshold"]) for a in alerts] == [
        ("b", "a", 64),
        ("m", "l", 64),
        ("v3", "v2", 64),
    ]
    assert alerts[1]["similarity"] == 0.8  # (8 of 10 distinct words in common)
    assert (alerts[2]["distance"], alerts[2]["fingerprint"]) == (None, None)


@pytest.mark.parametrize("raw", [b"{bad", b"\xff\xfe\x00", b'{"id": 1, "text": "x"}', b""])
async def test_dead_letters_fit_their_schema_and_keep_the_raw_bytes(raw: bytes) -> None:
    [decision] = await _decisions(raw)
    [out] = output_messages(decision, raw, b"key", SOURCE, 10_000, threshold=3)
    assert out.destination is Destination.REJECTED
    assert out.key == b"key"
    body = json.loads(out.value)
    validate("rejected", body)
    kept = (
        base64.b64decode(body["raw"]) if body["raw_encoding"] == "base64" else body["raw"].encode()
    )
    assert kept == raw
    assert not body["raw_truncated"]
    assert body["source"]["offset"] == 41


def test_oversized_raw_is_cut_and_says_so() -> None:
    raw = ("é" * 3000).encode()  # 6000 bytes; a cut at 4001 splits a character
    body = rejected(Rejection(Reason.TOO_LARGE, "too big"), raw, SOURCE, 4001)
    validate("rejected", body)
    assert body["raw_encoding"] == "utf-8"
    assert body["raw"] == "é" * 2000
    assert body["raw_truncated"]
    assert body["raw_bytes"] == 6000


async def test_scan_lines_fit_their_schema() -> None:
    decisions = await _decisions(json.dumps({"id": "a", "text": PRODUCT_PAGE}).encode(), b"x")
    for i, d in enumerate(decisions, start=1):
        validate("scan-line", scan_line(d, i))


async def test_a_deletion_is_a_tombstone_and_a_scan_line() -> None:
    decisions = await _decisions(
        json.dumps({"id": "a", "text": PRODUCT_PAGE}).encode(),
        json.dumps({"id": "a", "op": "delete"}).encode(),
    )
    [out] = output_messages(decisions[1], None, b"a", SOURCE, 1000, threshold=3)
    assert out == Outgoing(Destination.UNIQUE, b"a", None)
    line = scan_line(decisions[1], 2)
    validate("scan-line", line)
    assert line == {"line": 2, "id": "a", "verdict": "deleted", "was_indexed": True}


async def test_a_related_article_is_unique_and_gets_a_related_alert() -> None:
    index = MemoryIndex(
        multi_index(12, 4), options=IndexOptions(threshold=0)
    )  # related: 1..12 bits
    edited = PRODUCT_PAGE.replace("complete your kit,", PROMOTION)  # 3 bits away
    decisions = await _decisions(
        json.dumps({"id": "a", "text": PRODUCT_PAGE}).encode(),
        json.dumps({"id": "b", "text": edited}).encode(),
        index=index,
    )
    outs = output_messages(
        decisions[1], None, b"b", SOURCE, 10_000, threshold=0, related_threshold=12
    )
    assert [o.destination for o in outs] == [Destination.UNIQUE, Destination.DUPLICATES]
    assert outs[0].value is not None
    assert outs[1].value is not None
    unique, alert = json.loads(outs[0].value), json.loads(outs[1].value)
    validate("unique", unique)
    validate("duplicate", alert)
    assert (unique["related_to"], alert["kind"], alert["duplicate_of"]) == ("a", "related", "a")
    assert alert["threshold"] == 12
    assert 0 < alert["distance"] == unique["distance"] <= 12
    line = scan_line(decisions[1], 2)
    validate("scan-line", line)
    assert (line["verdict"], line["kind"], line["duplicate_of"]) == ("unique", "related", "a")


async def test_an_update_to_a_duplicate_withdraws_the_old_text_from_the_unique_topic() -> None:
    # Compacted by key, the unique topic must not keep x's old text once x repeats y: a later
    # copy of the old text would be unique too, and the topic would hold it twice.
    first, second = PRODUCT_PAGE, PROMOTION * 8
    raws = [
        json.dumps({"id": "x", "text": first}).encode(),
        json.dumps({"id": "y", "text": second}).encode(),
        json.dumps({"id": "x", "text": second}).encode(),
        json.dumps({"id": "z", "text": first}).encode(),
    ]
    compacted: dict[bytes, bytes | None] = {}
    for decision, raw in zip(await _decisions(*raws), raws, strict=True):
        for out in output_messages(decision, raw, None, SOURCE, 10_000, threshold=3):
            if out.destination is Destination.UNIQUE:
                compacted[out.key or b""] = out.value
    assert compacted[b"x"] is None
    kept = {k: json.loads(v)["article"]["text"] for k, v in compacted.items() if v is not None}
    assert kept == {b"y": second, b"z": first}
