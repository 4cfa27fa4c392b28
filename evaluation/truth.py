"""The ground truth: exact Jaccard similarity of two items' sets of normalised unit 3-grams,
over the text a reader sees (an HTML page's visible text; an e-mail's subject and text parts).
Defined here on its own terms, independently of the detector's own text handling, so that a
change to the detector cannot move its own yardstick.

Units: words of space-separated scripts; single characters of scripts written without spaces
(Han, kana, Thai, Lao, Khmer, Myanmar). An item at Jaccard >= DUPLICATE with an earlier one is
its near-duplicate; one under DIFFERENT with every earlier one has none; in between, it is not
scored.
"""

from __future__ import annotations

import email
import email.policy
import re
from collections.abc import Sequence
from html.parser import HTMLParser

import numpy as np
from scipy import sparse

from worker.text.normalize import normalize

DUPLICATE = 0.8
DIFFERENT = 0.3
SHINGLE = 3

# Scripts written without spaces between words: every character is a unit.
_NO_SPACE = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u0e00-\u0e7f\u0e80-\u0eff"
    "\u1780-\u17ff\u1000-\u109f\U00020000-\U0003134f]"
)
_HTML = re.compile(r"<(html|body|div|p|table|br|span|font)\b", re.IGNORECASE)
_HEADER = re.compile(
    r"^(From|Received|Return-Path|Subject|Message-ID|Date|To|MIME-Version):",
    re.IGNORECASE | re.MULTILINE,
)


def reader_text(raw: str) -> str:
    """What a reader sees of an item: an e-mail's subject and its text (HTML parts as their
    visible text), an HTML page's visible text, or the text itself."""
    head = raw[:2000]
    if len(_HEADER.findall(head.split("\n\n", 1)[0])) >= 2:
        return _mail_text(raw)
    if len(_HTML.findall(head)) >= 2 or head.lstrip().lower().startswith(("<!doctype", "<?xml")):
        return visible_text(raw)
    return raw


def _mail_text(raw: str) -> str:
    message = email.message_from_string(raw, policy=email.policy.default)
    parts = [str(message.get("subject", ""))]
    for part in message.walk():
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        if kind not in ("text/plain", "text/html"):
            continue
        try:
            body = part.get_content()
        except (LookupError, ValueError):  # an unknown or wrong charset
            payload = part.get_payload(decode=True)
            body = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
        parts.append(visible_text(body) if kind == "text/html" else body)
    return "\n".join(parts)


class _Visible(HTMLParser):
    """Text nodes outside <head>, <script>, <style> and comments."""

    HIDDEN = frozenset({"head", "script", "style", "noscript", "template"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hidden = 0
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN and self.hidden:
            self.hidden -= 1
        self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Visible()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


def units(text: str) -> list[str]:
    out: list[str] = []
    for token in normalize(text).split():
        if _NO_SPACE.search(token):
            word = ""
            for ch in token:
                if _NO_SPACE.match(ch):
                    if word:
                        out.append(word)
                        word = ""
                    out.append(ch)
                else:
                    word += ch
            if word:
                out.append(word)
        else:
            out.append(token)
    return out


def shingle_set(raw: str) -> set[str]:
    """The item's set of unit 3-grams, over what a reader sees of it."""
    found = units(reader_text(raw))
    if len(found) < SHINGLE:
        return {" ".join(found)} if found else set()
    return {" ".join(found[i : i + SHINGLE]) for i in range(len(found) - SHINGLE + 1)}


def jaccard_matrix(sets: Sequence[set[str]]) -> np.ndarray:
    """n x n Jaccard similarities (float32), computed exactly with one sparse product."""
    vocabulary: dict[str, int] = {}
    rows, cols = [], []
    for i, s in enumerate(sets):
        for shingle in s:
            rows.append(i)
            cols.append(vocabulary.setdefault(shingle, len(vocabulary)))
    x = sparse.csr_matrix(
        (np.ones(len(rows), dtype=np.float32), (rows, cols)),
        shape=(len(sets), max(1, len(vocabulary))),
    )
    inter = (x @ x.T).toarray()
    sizes = np.array([len(s) for s in sets], dtype=np.float32)
    union = sizes[:, None] + sizes[None, :] - inter
    similarity: np.ndarray = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    return similarity


def stream_truth(texts: Sequence[str]) -> list[frozenset[int] | None]:
    """For each item of a stream, the earlier items it is a near-duplicate of (by position);
    empty when it is a near-duplicate of none and shares under DIFFERENT with every earlier
    one; None (not scored) in between."""
    sim = jaccard_matrix([shingle_set(t) for t in texts])
    truth: list[frozenset[int] | None] = []
    for i in range(len(texts)):
        earlier = sim[i, :i]
        best = float(earlier.max()) if i else 0.0
        if best >= DUPLICATE:
            truth.append(frozenset(np.flatnonzero(earlier >= DUPLICATE).tolist()))
        elif best < DIFFERENT:
            truth.append(frozenset())
        else:
            truth.append(None)
    return truth
