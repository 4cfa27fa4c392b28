from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.harness import Stack, WorkerProcess

pytestmark = pytest.mark.integration


@pytest.fixture
def stack(kafka_bootstrap: str, redis_url: str) -> Stack:
    stack = Stack(kafka_bootstrap, redis_url, f"t{uuid.uuid4().hex[:8]}")
    stack.create_topics()
    return stack


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[[Stack], WorkerProcess]]:
    started: list[WorkerProcess] = []

    def start(stack: Stack) -> WorkerProcess:
        worker = WorkerProcess(stack, tmp_path / f"worker-{len(started)}.log")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
