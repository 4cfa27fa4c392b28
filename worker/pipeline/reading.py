"""Reading what a reader sees of each article's text (worker.text.markup), one text at a time:
a text that cannot be read becomes a Rejection for its message alone, and the rest of the
batch is decided as usual. Two readers: in this process (a library user, tests) and in a
child process with a deadline per text (the worker and the commands: isolated.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from worker.model import Format, Reason, Rejection
from worker.text.fingerprint import Fingerprinter
from worker.text.markup import TooDeep

Read = tuple[str, Format] | Rejection  # the text a reader sees and its format, or why not
MAX_DETAIL_CHARS = 500  # of an error's message in a dead letter's detail


class Reader(Protocol):
    async def read(self, texts: Sequence[str], formats: Sequence[Format | None]) -> list[Read]:
        """Each text read as `formats` says (None: as the fingerprinter reads it)."""
        ...


class InProcessReader:
    """Reads in this process, with no deadline: the nesting limits bound the known costly
    inputs, not every input (the worker reads HTML and e-mail apart: IsolatedReader)."""

    def __init__(self, fingerprinter: Fingerprinter) -> None:
        self.fingerprinter = fingerprinter

    async def read(self, texts: Sequence[str], formats: Sequence[Format | None]) -> list[Read]:
        return [self.read_one(text, f) for text, f in zip(texts, formats, strict=True)]

    def read_one(self, text: str, format: Format | None) -> Read:
        try:
            return self.fingerprinter.read(text, format)
        except Exception as exc:  # any failure is this text's alone
            return rejection(exc)


def rejection(exc: BaseException) -> Rejection:
    """The dead letter of a text whose reading raised `exc`."""
    if isinstance(exc, TooDeep):
        return Rejection(Reason.TOO_DEEP, str(exc))
    return unreadable(f"{type(exc).__name__}: {exc}")


def unreadable(what: str) -> Rejection:
    return Rejection(Reason.UNREADABLE, f"the text could not be read: {what[:MAX_DETAIL_CHARS]}")
