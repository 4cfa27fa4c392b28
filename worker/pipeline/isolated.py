"""IsolatedReader: HTML and e-mail are read in a child process (read_child.py), one text at a
time, each within a deadline; plain text is read here, as it costs nothing.

Why a process: resiliparse holds the GIL while it parses and extracts (a thread would stall
the event loop as much), and a thread cannot be stopped. A text past its deadline becomes a
`timeout` dead letter; its process is killed and the next HTML or e-mail text starts another.
The owner starts and closes it (`async with`), as it does the index.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Sequence
from types import TracebackType

from worker.errors import ReaderUnavailable
from worker.model import Format, Reason, Rejection
from worker.pipeline import read_child
from worker.pipeline.reading import Read, rejection, unreadable
from worker.text.fingerprint import Fingerprinter
from worker.text.markup import TooDeep

START_TIMEOUT_S = 30.0  # a child that is not ready by then will not be
END_WAIT_S = 1.0  # for a child that closed its output to end, before it is killed
_CODES = {Format.HTML: read_child.HTML, Format.EMAIL: read_child.EMAIL}
_Item = tuple[int, str, Format]  # a text's place in the batch, the text, its format
_BOOT = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from worker.pipeline.read_child import serve; "
    "serve(sys.argv[2] == '1', int(sys.argv[3]), float(sys.argv[4]))"
)


def memory_cap(max_message_bytes: int) -> int:
    """The child's address space: a 1 MB page takes about 50 MB to read (the interpreter
    included); what takes far more is a text built to exhaust memory."""
    return max(1 << 30, 512 * max_message_bytes)


class IsolatedReader:
    def __init__(self, fingerprinter: Fingerprinter, timeout_s: float, memory_bytes: int) -> None:
        self.fingerprinter = fingerprinter
        self.timeout_s = timeout_s
        self.memory_bytes = memory_bytes
        self._child: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()  # one batch at a time in the child
        self._reaping: set[asyncio.Future[int]] = set()

    async def __aenter__(self) -> IsolatedReader:
        await self.start()
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def pid(self) -> int | None:
        """The reading process's id; None while none runs."""
        return self._child.pid if self._child is not None else None

    async def start(self) -> None:
        """Start the child now, rather than at the first HTML or e-mail text."""
        async with self._lock:
            await self._started()

    async def close(self) -> None:
        async with self._lock:
            await self._stop()

    async def read(self, texts: Sequence[str], formats: Sequence[Format | None]) -> list[Read]:
        out: list[Read | None] = [None] * len(texts)
        apart: list[_Item] = []
        for i, (text, given) in enumerate(zip(texts, formats, strict=True)):
            try:
                format = self.fingerprinter.format_of(text, given)
            except Exception as exc:  # (not known to happen: any failure is this text's)
                out[i] = rejection(exc)
                continue
            if format is Format.TEXT:
                out[i] = (text, format)
            else:
                apart.append((i, text, format))
        if apart:
            async with self._lock:
                await self._apart(apart, out)
        assert all(read is not None for read in out)
        return out  # type: ignore[return-value]  # every slot was filled above

    async def _apart(self, items: list[_Item], out: list[Read | None]) -> None:
        """Read `items` in the child, into `out`. They are sent all at once (the child reads
        the next while this process takes in the last); each has the deadline from the reply
        before it, and a child killed for one is replaced for the rest."""
        while items:
            child = await self._started()
            sending = asyncio.ensure_future(_send(child, items))
            # (a failure to send shows as a reply that does not come)
            sending.add_done_callback(lambda sent: sent.cancelled() or sent.exception())
            try:
                done = await self._replies(child, items, out)
            except asyncio.CancelledError:  # its replies would answer the next requests
                self._abandon()
                raise
            finally:
                sending.cancel()
            items = items[done:]

    async def _replies(
        self, child: asyncio.subprocess.Process, items: list[_Item], out: list[Read | None]
    ) -> int:
        """Take in the child's replies to `items` into `out`, until one does not come: how
        many came (and the one that did not, which ended its child)."""
        for done, (i, _, format) in enumerate(items, start=1):
            try:
                async with asyncio.timeout(self.timeout_s):
                    code, answer = await _reply(child)
            except TimeoutError:
                await self._stop()
                out[i] = Rejection(
                    Reason.TIMEOUT,
                    f"reading the {format.value} took longer than {self.timeout_s * 1000:.0f} ms "
                    "(DEDUP_READ_TIMEOUT_MS)",
                )
                return done
            except (asyncio.IncompleteReadError, ConnectionError):
                ended = _ending(await self._stop(ended=True))
                out[i] = unreadable(f"the reading process ended ({ended})")
                return done
            if code == read_child.READ:
                out[i] = (answer, format)
            elif code == read_child.TOO_DEEP:
                out[i] = rejection(TooDeep(answer))
            else:
                out[i] = unreadable(answer)
        return len(items)

    async def _started(self) -> asyncio.subprocess.Process:
        if self._child is not None:
            return self._child
        main_content = "1" if self.fingerprinter.main_content else "0"
        self._child = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            _BOOT,
            json.dumps(sys.path),
            main_content,
            str(self.memory_bytes),
            str(2 * self.timeout_s),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            start_new_session=True,  # a terminal's signals are for the worker
        )
        try:
            async with asyncio.timeout(START_TIMEOUT_S):
                code, _ = await _reply(self._child)
        except (TimeoutError, asyncio.IncompleteReadError) as exc:
            ended = _ending(await self._stop(ended=isinstance(exc, asyncio.IncompleteReadError)))
            raise ReaderUnavailable(
                f"the process that reads HTML and e-mail did not start ({ended}; its errors "
                "are on stderr)"
            ) from exc
        assert code == read_child.READY
        return self._child

    def _abandon(self) -> None:
        """Kill the child without waiting here (it is reaped in the background)."""
        child, self._child = self._child, None
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
            reaping = asyncio.ensure_future(child.wait())
            self._reaping.add(reaping)
            reaping.add_done_callback(self._reaping.discard)

    async def _stop(self, ended: bool = False) -> int | None:
        """Kill the child, if any; its exit status. `ended`: it closed its output, so it has
        ended or is ending (to kill it then would reap it before asyncio reads its status)."""
        child, self._child = self._child, None
        if child is None:
            return None
        if ended:
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(child.wait(), END_WAIT_S)
        with contextlib.suppress(ProcessLookupError):
            child.kill()
        return await child.wait()


async def _send(child: asyncio.subprocess.Process, items: list[_Item]) -> None:
    assert child.stdin is not None
    for _, text, format in items:
        child.stdin.write(read_child.frame(_CODES[format], text))
        await child.stdin.drain()


async def _reply(child: asyncio.subprocess.Process) -> tuple[bytes, str]:
    assert child.stdout is not None
    code, size = read_child.HEADER.unpack(await child.stdout.readexactly(read_child.HEADER.size))
    return code, read_child.decode(await child.stdout.readexactly(size))


def _ending(status: int | None) -> str:
    if status is not None and status < 0:
        return f"killed by signal {-status}"
    return f"exit status {status}"
