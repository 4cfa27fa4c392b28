"""Hostile input up to the size limit, each with what the worker makes of it: the attacks on
the readers of HTML and e-mail (tests/pipeline/test_hostile.py, tests/faults/test_poison.py,
benchmarks/bench_reading.py)."""

from __future__ import annotations

import json
from collections.abc import Callable

LIMIT = 1_000_000  # bytes: the default DEDUP_MAX_MESSAGE_BYTES
STORY = "the story " * 20


def article_json(text: str, id: str = "x") -> bytes:
    return json.dumps({"id": id, "text": text}, ensure_ascii=False).encode()


def largest(build: Callable[[int], str]) -> str:
    """build(n) for the largest n whose article fits the size limit."""

    def fits(n: int) -> bool:
        return len(article_json(build(n), "attack")) <= LIMIT

    low, high = 1, 2
    while fits(high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    return build(low)


def repeated(head: str, unit: str, tail: str = "") -> str:
    return largest(lambda n: head + unit * n + tail)


def nested_parts(levels: int) -> str:
    head = "From: a@example.com\nTo: b@example.org\nSubject: deep\nMIME-Version: 1.0\n"
    opens = "".join(
        f'Content-Type: multipart/mixed; boundary="b{i}"\n\n--b{i}\n' for i in range(levels)
    )
    return head + opens + "Content-Type: text/plain\n\nhello\n"


MAIL = "From: a@example.com\nTo: b@example.org\n"
HTML = "<html><body>"
ATTACKS: dict[str, tuple[Callable[[], str], str]] = {  # how to make it, what it ends as
    "MIME parts nested": (lambda: largest(nested_parts), "too_deep"),
    "message/rfc822 nested": (
        lambda: repeated(MAIL + "Subject: deep\n", MAIL + "Content-Type: message/rfc822\n\n"),
        "too_deep",
    ),
    "divs nested": (lambda: repeated(HTML, "<div>", STORY), "too_deep"),
    "divs nested 250 deep, over and over": (
        lambda: repeated(HTML, "<div>" * 250 + "word " + "</div>" * 250, STORY),
        "unique",
    ),
    "tables nested": (lambda: repeated(HTML, "<table><tr><td>", STORY), "too_deep"),
    "lists nested": (lambda: repeated(HTML, "<ul><li>", STORY), "too_deep"),
    "entities": (lambda: repeated(HTML + "<p>", "&amp;&#x41;&nbsp;&zz", STORY), "unique"),
    # (a page's one article is found among the others, and read as its tags enclose it)
    "articles in one article": (
        lambda: repeated(HTML + "<article>", "<article>word</article>", STORY),
        "unique",
    ),
    "stray end tags in an article": (
        lambda: repeated(HTML + "<div><article>", "</div><p>word</p>", STORY),
        "unique",
    ),
    # (the HTML parser's work grows as the square of an element's attributes)
    "attributes of one element": (
        lambda: largest(lambda n: HTML + "<div " + " ".join(f"a{i}" for i in range(n)) + ">"),
        "timeout",
    ),
    # (the e-mail parser's memory grows without end on these: past the child's cap it is
    # unreadable, or past the deadline first on a slower machine)
    "encoded words in a subject": (
        lambda: repeated(MAIL + "Subject: ", "=?utf-8?q?a?= ", "\n\nbody\n"),
        "unreadable|timeout",
    ),
    "MIME parts, side by side": (
        lambda: repeated(
            MAIL + "Content-Type: multipart/mixed; boundary=b\n\n",
            "--b\nContent-Type: text/plain\n\nhello\n",
            "--b--\n",
        ),
        "timeout",
    ),
}
