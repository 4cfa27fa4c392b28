"""The tests' own fixtures (tests/support/plugin.py), run in a pytest session of their own."""

from __future__ import annotations

import time

import pytest

from tests.support import ROOT
from tests.support.tenant import topics

pytest_plugins = ["pytester"]

INNER = """
from pathlib import Path

from tests.support.tenant import topics


def test_a_worker_on_a_tenant(tenant, start_worker, kafka_bootstrap):
    start_worker(tenant).wait_ready(timeout=120)
    made = {t for t in topics(kafka_bootstrap) if t.startswith(tenant.topic_prefixes)}
    Path("made.txt").write_text("\\n".join(sorted(made)))
"""


def test_a_session_deletes_the_topics_of_its_tenants(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    kafka_bootstrap: str,
    redis_url: str,
) -> None:
    """Once its workers have stopped."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("DEDUP_TEST_KAFKA_BOOTSTRAP", kafka_bootstrap)  # (the same services)
    monkeypatch.setenv("DEDUP_TEST_REDIS_URL", redis_url)
    pytester.makeconftest('pytest_plugins = ["tests.support.plugin"]')
    pytester.makepyfile(test_inner=INNER)
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
    made = set((pytester.path / "made.txt").read_text().split("\n"))
    assert len(made) == 4, made  # input, unique, duplicates, rejected
    deadline = time.monotonic() + 10  # (a deletion reaches the metadata a moment later)
    while (left := made & topics(kafka_bootstrap)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not left
