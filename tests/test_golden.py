"""The detector's fingerprints and verdicts on a fixed sample stay what they were: any change
to them is deliberate. The sample is the end-to-end benchmark's English articles (planted
exact copies and one-word edits) and People's Daily pieces with planted edits; the verdicts
come from the worker's own path (decode, fingerprint, index) at the default settings.

After a deliberate change to fingerprints or verdicts, rewrite the expected file with
`DEDUP_UPDATE_GOLDEN=1 .venv/bin/pytest tests/test_golden.py` and say why in the commit."""

from __future__ import annotations

import gzip
import json
import os
import random
from pathlib import Path
from typing import Any

from evaluation.corpora import peoples_daily
from tests.corpus import make_articles
from worker.index import MemoryIndex
from worker.pipeline.decide import Accepted, Decider
from worker.settings import Settings
from worker.text.fingerprint import Fingerprinter

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
    return english + chinese


async def verdict_lines() -> list[dict[str, Any]]:
    settings = Settings()
    index = MemoryIndex(settings.index_layout(), **settings.index_options(), clock_ms=lambda: 0)
    fingerprinter = Fingerprinter(settings.shingle_size, settings.chinese_tokens,
                                  settings.min_words, settings.features)
    decider = Decider(fingerprinter, index, settings.max_message_bytes)
    raws = [json.dumps(a, ensure_ascii=False).encode() for a in sample()]
    lines = []
    for start in range(0, len(raws), settings.batch_size):
        for decision in await decider.decide(raws[start:start + settings.batch_size]):
            assert isinstance(decision, Accepted)
            v, fp = decision.verdict, decision.fingerprint
            lines.append({"id": v.id, "kind": v.kind.value, "duplicate_of": v.duplicate_of,
                          "distance": v.distance, "content_hash": fp.content_hash.hex(),
                          "search": fp.simhash, "verify": fp.verify, "words": fp.words})
    return lines


async def test_fingerprints_and_verdicts_are_unchanged() -> None:
    lines = await verdict_lines()
    if os.environ.get("DEDUP_UPDATE_GOLDEN"):
        with gzip.open(EXPECTED, "wt", encoding="utf-8") as out:
            out.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
    with gzip.open(EXPECTED, "rt", encoding="utf-8") as expected_file:
        expected = [json.loads(line) for line in expected_file]
    changed = [(e, g) for e, g in zip(expected, lines, strict=True) if e != g]
    assert not changed, f"{len(changed)} of {len(lines)} changed; first: {changed[:3]}"
    kinds = {line["kind"] for line in lines}
    assert {"unique", "exact", "near"} <= kinds  # the sample exercises every verdict
