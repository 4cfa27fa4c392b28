"""The whole path on real services: Kafka in, worker process, Redis index, verdicts out."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis

from tests.support.corpus import lee_articles
from tests.support.factories import article, search_fingerprint
from tests.support.schemas import validate
from tests.support.services import free_port
from tests.support.tenant import (
    Tenant,
    WorkerProcess,
    collect,
    http_get,
    produce,
    start_group,
)
from worker import defaults, wiring
from worker.text.fingerprint import Fingerprinter
from worker.text.simhash import hamming

fingerprint = Fingerprinter()
THRESHOLD = defaults.THRESHOLD
MAX_BYTES = 200_000


def _fp(text: str) -> int:
    return search_fingerprint(fingerprint, text)


def originals(count: int) -> list[str]:
    """`count` real news articles, long enough to fingerprint, no two of them alike (the corpus
    holds a few repeated articles of its own; they are left out)."""
    texts: list[str] = []
    fps: list[int] = []
    for text in lee_articles():
        if len(text.split()) >= 60:
            fp = _fp(text)
            if all(hamming(fp, other) > 10 for other in fps):
                texts.append(text)
                fps.append(fp)
    assert len(texts) >= count
    return texts[:count]


def one_word_edit(text: str, rng: random.Random, tag: str) -> tuple[str, int]:
    """`text` with one word replaced, chosen so that the copy lands within THRESHOLD bits:
    most one-word edits do (docs/quality.md has how often)."""
    words = text.split()
    for _ in range(50):
        i = rng.randrange(len(words))
        edited = " ".join([*words[:i], f"{tag}word", *words[i + 1 :]])
        distance = hamming(_fp(text), _fp(edited))
        if distance <= THRESHOLD:
            return edited, distance
    raise AssertionError("no one-word edit within the threshold")


def malformed() -> list[tuple[bytes | None, str]]:
    """20 bad messages and the dead-letter reason each must get."""
    cases: list[tuple[bytes | None, str]] = [
        (b"{not json", "invalid_json"),
        (b"", "empty_message"),
        (None, "empty_message"),
        (b"\xff\xfe\xfd", "invalid_utf8"),
        (b"[1, 2, 3]", "not_an_object"),
        (b'"just a string"', "not_an_object"),
        (b'{"text": "no id here"}', "missing_field"),
        (b'{"id": "m-no-text"}', "missing_field"),
        (b'{"id": 17, "text": "numeric id"}', "wrong_type"),
        (b'{"id": "m-num", "text": 3.14}', "wrong_type"),
        (b'{"id": "m-list", "text": ["a", "b"]}', "wrong_type"),
        (b'{"id": "", "text": "blank id"}', "invalid_value"),
        (b'{"id": "m-blank", "text": "   "}', "invalid_value"),
        (b'{"id": "m-sur", "text": "lone \\udc00 surrogate"}', "invalid_value"),
        (b'{"id": "m-ver", "text": "t", "schema_version": 9}', "unsupported_version"),
        (b"[" * 5000 + b"]" * 5000, "invalid_json"),
        (b'{"id": "m-nan", "text": NaN}', "invalid_json"),
        (json.dumps({"id": "m-big", "text": "word " * 50_000}).encode(), "too_large"),
        (b"null", "not_an_object"),
        (b"\x00\x01\x02 binary", "invalid_json"),
    ]
    assert len(cases) == 20
    return cases


@dataclass
class Planted:
    messages: list[tuple[bytes | None, bytes | None, int | None]]
    original_ids: list[str]
    copies: dict[str, tuple[str, str, int]]  # id -> (kind, original id, distance)
    bad_reasons: list[str]


def plant_300() -> tuple[Planted, Planted]:
    """220 originals; then 40 one-word edits, 20 exact copies and 20 malformed messages."""
    rng = random.Random(2026)
    texts = originals(220)
    first = Planted(
        [(f"orig-{i}".encode(), article(f"orig-{i}", t), None) for i, t in enumerate(texts)],
        [f"orig-{i}" for i in range(220)],
        {},
        [],
    )
    later = Planted([], [], {}, [])
    for n, i in enumerate(rng.sample(range(220), 60)):
        if n < 40:
            text, distance = one_word_edit(texts[i], rng, f"e{n}")
            cid, kind = f"edit-{n}", "near"
        else:
            # half verbatim, half with case, whitespace and punctuation changed
            text = texts[i] if n % 2 else "  " + texts[i].upper().replace(",", " ;") + "!"
            cid, kind, distance = f"copy-{n}", "exact", 0
        later.messages.append((cid.encode(), article(cid, text), None))
        later.copies[cid] = (kind, f"orig-{i}", distance)
    for value, reason in malformed():
        later.messages.append((b"bad", value, None))
        later.bad_reasons.append(reason)
    rng.shuffle(later.messages)
    assert len(first.messages) + len(later.messages) == 300
    return first, later


def _without_source(messages: list[dict[str, Any]]) -> list[str]:
    return sorted(
        json.dumps({k: v for k, v in m.items() if k != "source"}, sort_keys=True) for m in messages
    )


def test_300_articles_end_to_end_then_resent(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    port = free_port()
    tenant.extra_env.update(
        {"DEDUP_MAX_MESSAGE_BYTES": str(MAX_BYTES), "DEDUP_HTTP_PORT": str(port)}
    )
    first, later = plant_300()
    worker = start_worker(tenant)
    worker.wait_ready()
    topic = tenant.settings.input_topic

    # Originals first and wait for them: first seen wins, and across partitions "first" is
    # only defined by what the worker has already decided.
    produce(tenant.kafka, topic, first.messages)
    collect(tenant.kafka, tenant.outputs, expected=220, quiet=0.5)
    produce(tenant.kafka, topic, later.messages)
    out = collect(tenant.kafka, tenant.outputs, expected=300)

    unique, dups, dead = out.get("unique", []), out.get("duplicates", []), out.get("rejected", [])
    for name, messages in (("unique", unique), ("duplicate", dups), ("rejected", dead)):
        for m in messages:
            validate(name, m)

    assert sorted(m["id"] for m in unique) == sorted(first.original_ids)
    found = {m["id"]: (m["kind"], m["duplicate_of"], m["distance"]) for m in dups}
    assert found == later.copies
    assert len(dups) == 60
    for m in dups:
        assert m["id"] != m["duplicate_of"]
        assert (
            hamming(int(m["fingerprint"], 16), int(m["duplicate_of_fingerprint"], 16))
            == m["distance"]
        )
    assert sorted(m["reason"] for m in dead) == sorted(later.bad_reasons)
    assert all(m["detail"] for m in dead)

    # Redelivery: the same 300 messages again give the same verdicts, and no self-duplicates.
    produce(tenant.kafka, topic, first.messages + later.messages)
    again = collect(tenant.kafka, tenant.outputs, expected=600)
    for name, before in (("unique", unique), ("duplicates", dups), ("rejected", dead)):
        after = again[name]
        assert len(after) == 2 * len(before)
        assert _without_source(after) == sorted(_without_source(before) * 2)
    assert all(m["id"] != m["duplicate_of"] for m in again["duplicates"])
    assert worker.proc.poll() is None, "the worker must survive all of it"

    # What the worker counted, on its metrics endpoint; and it reports itself ready.
    metrics = http_get(port, "/metrics")
    for kind, fresh in (("unique", 220), ("near", 40), ("exact", 20)):
        assert f'dedup_verdicts_total{{kind="{kind}",replayed="false"}} {fresh}.0' in metrics
        assert f'dedup_verdicts_total{{kind="{kind}",replayed="true"}} {fresh}.0' in metrics
    assert 'dedup_dead_letters_total{reason="too_large"} 2.0' in metrics
    assert json.loads(http_get(port, "/readyz"))["status"] == "ok"


def test_two_workers_four_partitions_never_both_unique(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    """200 near-duplicate pairs, the halves of each pair on different partitions, sent back to
    back while two worker processes share the partitions: exactly one of each pair is unique,
    and the other points at it."""
    rng = random.Random(7)
    workers = start_group(start_worker, tenant, 2)

    texts = originals(200)
    messages: list[tuple[bytes | None, bytes | None, int | None]] = []
    pairs = []
    for i, text in enumerate(texts):
        copy, _ = one_word_edit(text, rng, f"p{i}")
        a_id, b_id = f"pair-{i}-a", f"pair-{i}-b"
        pa = i % 4
        pb = (pa + 1 + i % 3) % 4  # a different partition; which one varies
        messages += [
            (a_id.encode(), article(a_id, text), pa),
            (b_id.encode(), article(b_id, copy), pb),
        ]
        pairs.append((a_id, b_id))
    produce(tenant.kafka, tenant.settings.input_topic, messages)
    out = collect(tenant.kafka, tenant.outputs, expected=400)

    verdict = {m["id"]: "unique" for m in out.get("unique", [])}
    verdict.update({m["id"]: m["duplicate_of"] for m in out.get("duplicates", [])})
    assert len(verdict) == 400
    assert not out.get("rejected")
    for a_id, b_id in pairs:
        outcome = (verdict[a_id], verdict[b_id])
        assert outcome in (("unique", a_id), (b_id, "unique")), (a_id, b_id, outcome)
    assert all(w.proc.poll() is None for w in workers)
    shares = [w.assigned(tenant.settings.input_topic) for w in workers]
    assert all(shares), f"both workers must hold partitions: {shares}"
    assert shares[0] != shares[1], f"both workers must hold partitions: {shares}"


def test_redis_index_holds_what_the_worker_decided(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    """The worker writes its verdicts into the namespace's keys, and the layout record."""
    worker = start_worker(tenant)
    worker.wait_ready()
    text = originals(1)[0]
    produce(tenant.kafka, tenant.settings.input_topic, [(b"only", article("only", text), None)])
    collect(tenant.kafka, tenant.outputs, expected=1, quiet=0.5)
    client = redis.Redis.from_url(tenant.redis_url)
    meta = client.hgetall(f"dedup:{{{tenant.name}}}:meta")
    layout = wiring.layout(tenant.settings)
    assert meta[b"threshold"] == str(tenant.settings.threshold).encode()
    assert meta[b"tables"] == layout.spec().encode()
    assert client.hexists(f"dedup:{{{tenant.name}}}:docs", "only")
    client.close()


def test_a_worker_with_another_threshold_refuses_the_index(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    first = start_worker(tenant)
    first.wait_ready()
    tenant.extra_env["DEDUP_THRESHOLD"] = "5"
    other = start_worker(tenant)
    assert other.proc.wait(60) != 0
    assert "was built with another layout" in other.log()
    assert "threshold '11' there, '5' here" in other.log()
    assert "Traceback" not in other.log()


def test_updates_and_tombstones_change_what_matches(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    """An id re-sent with new text replaces the article; a tombstone withdraws one (a Kafka
    tombstone on the unique topic) so that a later copy of it is unique again. All on one
    partition: Kafka keeps the order only within a partition."""
    worker = start_worker(tenant)
    worker.wait_ready()
    first, second, third = originals(3)
    topic = tenant.settings.input_topic
    produce(tenant.kafka, topic, [(b"a", article("a", first), 0), (b"b", article("b", second), 0)])
    collect(tenant.kafka, tenant.outputs, expected=2, quiet=0.5)
    produce(
        tenant.kafka,
        topic,
        [
            (b"a", article("a", third), 0),  # a now holds the third text
            (b"b", json.dumps({"id": "b", "op": "delete"}).encode(), 0),
            (b"c", article("c", first), 0),  # a's old text: no longer indexed
            (b"d", article("d", second), 0),  # b's text: b was deleted
            (b"e", article("e", third), 0),  # a's new text
            (b"x", json.dumps({"id": "nobody", "op": "delete"}).encode(), 0),
        ],
    )
    out = collect(tenant.kafka, tenant.outputs, expected=8, quiet=1)
    # (the output topics have partitions too: compare without order)
    assert sorted(m["id"] for m in out["unique"]) == ["a", "a", "b", "c", "d"]
    assert {m["article"]["text"] for m in out["unique"] if m["id"] == "a"} == {first, third}
    assert [(m["id"], m["kind"], m["duplicate_of"]) for m in out["duplicates"]] == [
        ("e", "exact", "a")
    ]
    assert sorted(out["unique_tombstones"]) == ["b", "nobody"]
    for m in out["unique"]:
        validate("unique", m)


def test_a_retention_window_expires_articles(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    """With DEDUP_RETENTION_DAYS the worker's sweep removes old records, and a copy of an
    expired article is unique again."""
    tenant.extra_env["DEDUP_RETENTION_DAYS"] = str(2 / 86_400)  # two seconds
    worker = start_worker(tenant)
    worker.wait_ready()
    text = originals(1)[0]
    produce(tenant.kafka, tenant.settings.input_topic, [(b"old", article("old", text), 0)])
    collect(tenant.kafka, tenant.outputs, expected=1, quiet=0)
    client = redis.Redis.from_url(tenant.redis_url)
    docs = f"dedup:{{{tenant.name}}}:docs"
    deadline = time.monotonic() + 30
    while client.hexists(docs, "old"):  # the sweep runs every second
        assert time.monotonic() < deadline, "the sweep did not remove the expired record"
        time.sleep(0.5)
    produce(tenant.kafka, tenant.settings.input_topic, [(b"new", article("new", text), 0)])
    out = collect(tenant.kafka, tenant.outputs, expected=2, quiet=0.5)
    assert sorted(m["id"] for m in out["unique"]) == ["new", "old"]
    assert "duplicates" not in out
    client.close()


def test_related_articles_are_unique_and_alerted(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    """Threshold 0 and related threshold 15: an edited copy is an original, on the unique
    topic, and a `related` alert names the article it is close to."""
    tenant.extra_env.update({"DEDUP_THRESHOLD": "0", "DEDUP_RELATED_THRESHOLD": "15"})
    worker = start_worker(tenant)
    worker.wait_ready()
    text = originals(1)[0]
    edited, distance = one_word_edit(text, random.Random(4), "rel")
    words = text.split()
    if distance == 0:  # make sure the copy is not a duplicate at threshold 0
        edited = " ".join(words[: len(words) // 2]) + " " + " ".join(words)
        distance = hamming(_fp(text), _fp(edited))
    assert 1 <= distance <= 15
    produce(
        tenant.kafka,
        tenant.settings.input_topic,
        [(b"a", article("a", text), 0), (b"b", article("b", edited), 0)],
    )
    out = collect(tenant.kafka, tenant.outputs, expected=3, quiet=0.5)
    assert sorted(m["id"] for m in out["unique"]) == ["a", "b"]
    [alert] = out["duplicates"]
    validate("duplicate", alert)
    assert (
        alert["kind"],
        alert["id"],
        alert["duplicate_of"],
        alert["distance"],
        alert["threshold"],
    ) == ("related", "b", "a", distance, 15)
    [b] = [m for m in out["unique"] if m["id"] == "b"]
    assert (b["related_to"], b["distance"]) == ("a", distance)
