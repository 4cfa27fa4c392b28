"""The test suite's own fixtures (the shared ones are the plugin's, tests/support/plugin.py)."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from worker.index.redis import RedisIndex

pytest_plugins = ["tests.support.plugin"]


@pytest_asyncio.fixture(autouse=True)
async def _redis_indexes_closed(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[None]:
    """Every RedisIndex a test makes in the test's event loop is closed when it ends (its own
    connection and its client), so that warnings stay errors: an unclosed connection is a
    ResourceWarning. (One made in a loop of the test's own, by asyncio.run, is the test's to
    close: that loop is gone by now.)"""
    made: list[RedisIndex] = []
    init = RedisIndex.__init__
    loop = asyncio.get_running_loop()

    @functools.wraps(init)
    def recording(self: RedisIndex, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if _running_loop() is loop:
            made.append(self)

    monkeypatch.setattr(RedisIndex, "__init__", recording)
    yield
    for index in made:
        await index.close()


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
