from __future__ import annotations

from collections.abc import Callable

from tests.corpus import make_articles
from tests.faults.checks import assert_guarantees, covers
from tests.integration.harness import (
    Stack,
    WorkerProcess,
    collect_until,
    produce,
    start_group,
)
from tests.integration.test_end_to_end import article


def keyed(articles: list[dict[str, str]]) -> list[tuple[bytes | None, bytes | None, int | None]]:
    return [(a["id"].encode(), article(a["id"], a["text"]), None) for a in articles]


def test_kill_9_one_of_two_workers_mid_stream(
        stack: Stack, start_worker: Callable[[Stack], WorkerProcess]) -> None:
    articles = make_articles(10_000, seed=5)  # 10% exact copies, 5% one-word edits
    workers = start_group(start_worker, stack, 2)

    produce(stack.kafka, stack.settings.input_topic, keyed(articles))
    collect_until(stack.kafka, stack.outputs, lambda out: len(out.get("unique", [])) >= 2500,
                  quiet=0)
    workers[0].kill()
    replacement = start_worker(stack)
    replacement.wait_ready()

    ids = {a["id"] for a in articles}
    out = collect_until(stack.kafka, stack.outputs, covers(ids), timeout=180, quiet=5)
    repeats = assert_guarantees(out, articles)
    print(f"{repeats} verdicts were repeated after the kill (at-least-once)")
    assert workers[1].proc.poll() is None and replacement.proc.poll() is None
