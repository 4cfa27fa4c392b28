"""The child process that reads HTML and e-mail for IsolatedReader (isolated.py), and the
frames they exchange on its stdin and stdout: a header (a code, a length) then UTF-8.

It imports only worker.text.markup (no numpy): it starts in a fraction of a second, and is
started again whenever a text ran past its deadline. Its address space is capped, so that a
text that makes the parsers take memory without end fails with MemoryError instead of
taking the machine's; and it ends itself at twice the deadline, should its parent be gone.
"""

from __future__ import annotations

import os
import resource
import signal
import struct
import sys
from typing import BinaryIO

HEADER = struct.Struct("!cI")  # a code, the payload's length in bytes
# Requests: the text's format. Replies: the text read, too deep, or an error.
HTML, EMAIL = b"h", b"e"
READY, READ, TOO_DEEP, FAILED = b"r", b"o", b"d", b"x"


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # (any str goes through unchanged)


def decode(payload: bytes) -> str:
    return payload.decode("utf-8", "surrogatepass")


def frame(code: bytes, text: str) -> bytes:
    payload = encode(text)
    return HEADER.pack(code, len(payload)) + payload


def serve(main_content: bool, memory_bytes: int, alarm_s: float) -> None:
    """Read requests from stdin until it closes, answering each on stdout."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent ends it (a terminal's Ctrl-C)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything a library prints goes to stderr, not into the replies

    from worker.model import Format
    from worker.text.markup import TooDeep, reader_text

    formats = {HTML: Format.HTML, EMAIL: Format.EMAIL}
    requests = sys.stdin.buffer
    _send(replies, READY, "")
    while (request := _receive(requests)) is not None:
        code, text = request
        # SIGALRM's default action ends the process: it works even inside C code
        signal.setitimer(signal.ITIMER_REAL, alarm_s)
        try:
            read, _ = reader_text(text, formats[code], main_content=main_content)
            reply = (READ, read)
        except TooDeep as exc:
            reply = (TOO_DEEP, str(exc))
        except Exception as exc:  # MemoryError included: reported, and the next text goes on
            reply = (FAILED, f"{type(exc).__name__}: {exc}")
        signal.setitimer(signal.ITIMER_REAL, 0)
        _send(replies, *reply)


def _receive(stream: BinaryIO) -> tuple[bytes, str] | None:
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    code, size = HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return code, decode(payload)


def _send(stream: BinaryIO, code: bytes, text: str) -> None:
    stream.write(frame(code, text))
    stream.flush()
