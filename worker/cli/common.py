"""What the commands share: settings from the environment, our errors as clean messages,
waiting for services at start-up."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from worker.errors import DedupError, IndexUnavailable, KafkaUnavailable
from worker.settings import Settings

T = TypeVar("T")
STARTUP_WAIT_S = 60.0


def settings_from_env(**overrides: Any) -> Settings:
    with clean_errors():
        return Settings.from_env(**overrides)


@contextmanager
def clean_errors() -> Iterator[None]:
    """Our errors end the command with their message, not a traceback."""
    try:
        yield
    except DedupError as exc:
        raise click.ClickException(str(exc)) from exc


async def retry_startup(call: Callable[[], Awaitable[T]], what: str) -> T:
    """`call`, retried for a while when its service cannot be reached yet."""
    deadline = time.monotonic() + STARTUP_WAIT_S
    while True:
        try:
            return await call()
        except (IndexUnavailable, KafkaUnavailable) as exc:
            if time.monotonic() > deadline:
                raise
            logging.getLogger(__name__).warning("%s not ready (%s); retrying", what, exc)
            await asyncio.sleep(1.0)
