"""A TCP proxy whose target can be switched, as a failover moves a service's address: clients
keep one address, and switching drops their open connections."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tests.support.services import free_port


class Proxy:
    def __init__(self, target_port: int) -> None:
        self.port = free_port()
        self.target_port = target_port
        self._loop = asyncio.new_event_loop()
        self._open: set[asyncio.StreamWriter] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self) -> None:
        self._thread.start()
        serve = asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self._server = asyncio.run_coroutine_threadsafe(serve, self._loop).result(10)

    def switch(self, target_port: int, close_open: bool = True) -> None:
        """From now on to `target_port`; the connections open now are closed (unless
        `close_open` is false: they stay with the old target, as a DNS name moved to another
        address leaves them)."""

        async def switch() -> None:
            self.target_port = target_port
            if close_open:
                for writer in list(self._open):
                    writer.close()

        asyncio.run_coroutine_threadsafe(switch(), self._loop).result(10)

    def stop(self) -> None:
        async def stop() -> None:
            self._server.close()
            for writer in list(self._open):
                writer.close()
            piping = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in piping:
                task.cancel()
            await asyncio.gather(*piping, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            if not self._loop.is_running():
                self._loop.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except (OSError, asyncio.CancelledError):
            writer.close()
            return
        self._open |= {writer, up_writer}
        await asyncio.gather(
            self._pipe(reader, up_writer), self._pipe(up_reader, writer), return_exceptions=True
        )

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            self._open.discard(writer)
            writer.close()


@contextmanager
def proxy(target_port: int) -> Iterator[Proxy]:
    running = Proxy(target_port)
    running.start()
    try:
        yield running
    finally:
        running.stop()
