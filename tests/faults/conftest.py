"""Services the fault tests may stop and restart (see tests.services.PrivateServices)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.harness import Stack
from tests.services import PrivateServices, private_service

pytestmark = pytest.mark.integration


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateServices]:
    with private_service("redis", tmp_path / "stack") as services:
        yield services


@pytest.fixture
def private_kafka(tmp_path: Path) -> Iterator[PrivateServices]:
    with private_service("kafka", tmp_path / "stack") as services:
        yield services


@pytest.fixture
def make_stack() -> Callable[[str, str], Stack]:
    def make(kafka: str, redis_url: str) -> Stack:
        stack = Stack(kafka, redis_url, f"f{uuid.uuid4().hex[:8]}")
        stack.create_topics()
        return stack

    return make
