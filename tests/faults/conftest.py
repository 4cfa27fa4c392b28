"""Services the fault tests may stop and restart: a private Redis and a private Kafka broker,
started by the project's own stack/local-stack.sh in a temporary state dir on free ports."""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.integration.harness import Stack, free_port

pytestmark = pytest.mark.integration
SCRIPT = Path(__file__).resolve().parents[2] / "stack" / "local-stack.sh"


class PrivateServices:
    def __init__(self, state: Path) -> None:
        self.env = {**os.environ, "DEDUP_STACK_DIR": str(state),
                    "DEDUP_STACK_KAFKA_PORT": str(free_port()),
                    "DEDUP_STACK_CONTROLLER_PORT": str(free_port()),
                    "DEDUP_STACK_REDIS_PORT": str(free_port())}
        self.kafka = f"127.0.0.1:{self.env['DEDUP_STACK_KAFKA_PORT']}"
        self.redis_url = f"redis://127.0.0.1:{self.env['DEDUP_STACK_REDIS_PORT']}/0"

    def run(self, *args: str) -> None:
        subprocess.run(["bash", str(SCRIPT), *args], env=self.env, check=True,
                       capture_output=True, timeout=180)

    def redis_cli(self, *args: str) -> str:
        return subprocess.run(["redis-cli", "-p", self.env["DEDUP_STACK_REDIS_PORT"], *args],
                              capture_output=True, text=True, timeout=30).stdout.strip()


@contextmanager
def _private(service: str, state: Path) -> Iterator[PrivateServices]:
    services = PrivateServices(state)
    services.run("up", service)
    try:
        yield services
    finally:
        services.run("down", service)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateServices]:
    with _private("redis", tmp_path / "stack") as services:
        yield services


@pytest.fixture
def private_kafka(tmp_path: Path) -> Iterator[PrivateServices]:
    with _private("kafka", tmp_path / "stack") as services:
        yield services


@pytest.fixture
def make_stack() -> Callable[[str, str], Stack]:
    def make(kafka: str, redis_url: str) -> Stack:
        stack = Stack(kafka, redis_url, f"f{uuid.uuid4().hex[:8]}")
        stack.create_topics()
        return stack

    return make
