"""The shared Redis index decides development sets item for item as the embedded index does
(evaluation/parity.py; `python -m evaluation.parity` runs every set), so that the quality
measured through the embedded one holds for the worker's."""

from __future__ import annotations

import asyncio
import json

import pytest

from evaluation.datasets import mixed_edits
from evaluation.devsets import html_site
from evaluation.parity import apart
from evaluation.rescraped import rescraped_set
from worker.settings import Settings


@pytest.mark.parametrize("layout", ["bands:16x4", "auto"])
def test_the_shared_index_decides_as_the_embedded_one(layout: str, redis_url: str) -> None:
    for n, dev in enumerate((mixed_edits("en"), html_site("git"), rescraped_set("ja"))):
        settings = Settings(redis_url=redis_url, namespace=f"parity-{n}", layout=layout)
        messages = [json.dumps({"id": i.id, "text": i.text}).encode() for i in dev.items]
        items, differ = asyncio.run(apart(settings, messages))
        assert items == len(dev.items) > 0
        assert differ == [], dev.name
