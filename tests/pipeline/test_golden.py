"""The detector's fingerprints and verdicts on a fixed sample stay what they were: any change
to them is deliberate. The sample is the end-to-end benchmark's English articles (planted
exact copies and one-word edits) and People's Daily pieces with planted edits; the verdicts
come from the worker's own path (decode, fingerprint, index) at the default settings.

After a deliberate change to fingerprints or verdicts, rewrite the expected file with
`DEDUP_UPDATE_GOLDEN=1 .venv/bin/pytest tests/pipeline/test_golden.py` and say why in the
commit."""

from __future__ import annotations

import gzip
import json
import os
import random
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from evaluation import mail
from evaluation.corpora import peoples_daily
from tests.support.corpus import make_articles
from worker import wiring
from worker.index import Index, MemoryIndex
from worker.model import Accepted
from worker.settings import Settings

EXPECTED = Path(__file__).parent / "data" / "golden-verdicts.jsonl.gz"


def sample() -> list[dict[str, Any]]:
    english = make_articles(2000, seed=11)
    rng = random.Random(5)
    pieces = list(peoples_daily())[:400]
    chinese: list[dict[str, Any]] = []
    for i, text in enumerate(pieces):
        chinese.append({"id": f"zh{i}", "text": text})
        if rng.random() < 0.3:  # a copy with one character changed, or mixed with Latin words
            chars = list(text)
            chars[rng.randrange(len(chars))] = "的"
            chinese.append({"id": f"zh{i}-edit", "text": "".join(chars) + " Xinhua 报道"})
    return english + chinese + marked_up(english[:300])


def marked_up(articles: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Some of the articles again as HTML pages and as e-mails (copies by what a reader sees),
    and some edited in HTML."""
    crowd = mail.people(random.Random(3), 2)
    out: list[dict[str, Any]] = []
    for n, a in enumerate(articles[::3]):
        template = list(mail.TEMPLATES)[n % 3]
        html = mail.html_body(template, mail.paragraphs(a["text"]))
        out.append({"id": f"{a['id']}-html", "text": html})
        if n % 2:
            message = mail.message(crowd[0], crowd[1], "news", mail.START, a["text"], html=html)
            out.append({"id": f"{a['id']}-mail", "text": message, "format": "email"})
    return out


async def verdict_lines(settings: Settings, index: Index) -> list[dict[str, Any]]:
    pipeline = wiring.pipeline(settings, index)
    raws = [json.dumps(a, ensure_ascii=False).encode() for a in sample()]
    lines = []
    for start in range(0, len(raws), settings.batch_size):
        for decision in await pipeline.run(raws[start : start + settings.batch_size]):
            assert isinstance(decision, Accepted)
            v, fp = decision.verdict, decision.fingerprint
            lines.append(
                {
                    "id": v.id,
                    "kind": v.kind.value,
                    "duplicate_of": v.duplicate_of,
                    "original": v.original,
                    "distance": v.distance,
                    "similarity": v.similarity,
                    "content_hash": fp.content_hash.hex(),
                    "search": fp.search,
                    "sketch": fp.sketch.hex() if fp.sketch is not None else None,
                    "words": fp.words,
                }
            )
    return lines


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.services)])
async def index_and_settings(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[Index, Settings]]:
    """The index of the default settings: in memory (as `scan` runs), or in Redis (as the
    worker runs)."""
    if request.param == "memory":
        settings = Settings()
        yield wiring.memory_index(settings, clock_ms=lambda: 0), settings
        return
    settings = Settings(
        redis_url=request.getfixturevalue("redis_url"), namespace=f"golden-{uuid.uuid4().hex[:8]}"
    )
    index = wiring.redis_index(settings)
    yield index, settings
    await index.close()


async def test_fingerprints_and_verdicts_are_unchanged(
    index_and_settings: tuple[Index, Settings],
) -> None:
    lines = await verdict_lines(index_and_settings[1], index_and_settings[0])
    if os.environ.get("DEDUP_UPDATE_GOLDEN") and isinstance(index_and_settings[0], MemoryIndex):
        with gzip.open(EXPECTED, "wt", encoding="utf-8") as out:
            out.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    with gzip.open(EXPECTED, "rt", encoding="utf-8") as expected_file:
        expected = [json.loads(line) for line in expected_file]
    changed = [(e, g) for e, g in zip(expected, lines, strict=True) if e != g]
    assert not changed, f"{len(changed)} of {len(lines)} changed; first: {changed[:3]}"
    kinds = {line["kind"] for line in lines}
    assert {"unique", "exact", "near"} <= kinds  # the sample exercises every verdict
