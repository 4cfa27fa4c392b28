"""Hostile and malformed input: each message gets a verdict or a dead letter with a reason,
and nothing raises. Sizes are bounded by DEDUP_MAX_MESSAGE_BYTES before any parsing."""

from __future__ import annotations

import json

import pytest

from tests.support.schemas import validate
from worker.index import MemoryIndex
from worker.model import Accepted, Rejection
from worker.pipeline.outputs import Source, output_messages
from worker.pipeline.pipeline import Pipeline
from worker.text.fingerprint import Fingerprinter

LIMIT = 1_000_000


def _article(text: str, id: str = "x") -> bytes:
    return json.dumps({"id": id, "text": text}, ensure_ascii=False).encode()


CASES: dict[str, tuple[bytes, str]] = {
    "invalid UTF-8": (b'{"id": "x", "text": "caf\xe9"}', "invalid_utf8"),
    "NUL bytes in the text": (_article("before\u0000after " * 30), "unique"),
    "raw NUL byte outside strings": (b'{"id": "x",\x00 "text": "t"}', "invalid_json"),
    "escaped lone surrogate": (b'{"id": "x", "text": "a \\udc80 b"}', "invalid_value"),
    "zero-width and control characters": (
        _article("zero\u200bwidth \u202eright-to-left override\u202c \x07bell " * 20),
        "unique",
    ),
    "emoji only": (_article("😀🎉🔥" * 200), "unique"),
    "right-to-left script": (
        _article("مرحبا بالعالم هذا نص عربي طويل بما فيه الكفاية " * 10),
        "unique",
    ),
    "Hebrew with niqqud": (_article("שָׁלוֹם עוֹלָם זֶה טֶקְסְט אָרֹךְ מַסְפִּיק " * 10), "unique"),
    "10k-deep JSON": (b"[" * 10_000 + b"]" * 10_000, "invalid_json"),
    "deep JSON inside an article": (
        b'{"id": "x", "text": "t", "extra": ' + b"[" * 5000 + b"]" * 5000 + b"}",
        "invalid_json",
    ),
    "50 MB message": (b'{"id": "x", "text": "' + b"a" * 50_000_000 + b'"}', "too_large"),
    "1M-word text": (_article("word " * 1_000_000), "too_large"),
    "number as id": (b'{"id": 12, "text": "t"}', "wrong_type"),
    "number as text": (b'{"id": "x", "text": 12}', "wrong_type"),
    "object as text": (b'{"id": "x", "text": {"a": 1}}', "wrong_type"),
    "boolean as id": (b'{"id": true, "text": "t"}', "wrong_type"),
    "huge integer field": (b'{"id": "x", "text": "fine text", "n": ' + b"9" * 400 + b"}", "unique"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
async def test_hostile_message_gets_a_verdict_or_a_dead_letter(case: str) -> None:
    raw, expected = CASES[case]
    decider = Pipeline(Fingerprinter(), MemoryIndex(), LIMIT)
    [decision] = await decider.run([raw])
    got = decision.reason.value if isinstance(decision, Rejection) else decision.verdict.kind
    assert got == expected
    [out] = output_messages(decision, raw, b"k", Source("articles", 0, 7, None), LIMIT, threshold=3)
    body = json.loads(out.value)
    validate("rejected" if isinstance(decision, Rejection) else "unique", body)
    if isinstance(decision, Accepted):
        assert out.value.endswith(raw + b"}")
    else:
        assert body["raw_bytes"] == len(raw)
        assert len(out.value) < 2 * LIMIT


async def test_a_1m_word_text_is_fingerprinted_when_the_limit_allows_it() -> None:
    raw = _article("word" + " word".join(str(i % 5000) for i in range(1_000_000)))
    decider = Pipeline(Fingerprinter(), MemoryIndex(), len(raw))
    [decision] = await decider.run([raw])
    assert isinstance(decision, Accepted)
    assert decision.verdict.fingerprint is not None
    assert decision.fingerprint.words == 1_000_000


async def test_texts_with_nothing_left_once_normalised_are_copies_only_of_themselves() -> None:
    # They all normalise to "": one content hash would make each an exact copy of the first.
    texts = ["!!!", "😀🎉", "—", "\u200b", "© ®"]
    raws = [_article(t, id=f"t{i}") for i, t in enumerate(texts)]
    raws.append(_article("!!!", id="again"))
    decisions = await Pipeline(Fingerprinter(), MemoryIndex(), LIMIT).run(raws)
    kinds = [
        (d.verdict.kind.value, d.verdict.duplicate_of) for d in decisions if isinstance(d, Accepted)
    ]
    assert kinds == [("unique", None)] * len(texts) + [("exact", "t0")]
