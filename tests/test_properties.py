"""Property-based tests: no input text or message bytes can make the pure code raise."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from worker.model import Article, Deletion, Kind, Rejection, Verdict
from worker.pipeline.decode import decode_article
from worker.pipeline.outputs import Source, output_messages
from worker.text.features import units
from worker.text.fingerprint import Fingerprinter
from worker.text.normalize import normalize

fingerprint = Fingerprinter(min_words=3)
jieba_fingerprint = Fingerprinter(chinese="jieba", min_words=3)
words = st.lists(
    st.sampled_from(["alpha", "Beta", "GAMMA", "中文", "ñandú", "x1", "über"]),
    min_size=0,
    max_size=40,
)


@given(st.text())
def test_normalize_never_raises_and_is_idempotent_and_its_units_are_never_empty(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once
    found = units(once.split())
    assert all(found.items)


@given(st.text())
@settings(max_examples=200)
def test_fingerprint_never_raises_and_is_deterministic(text: str) -> None:
    first, second = fingerprint(text), fingerprint(text)
    assert first == second
    # (a text too short for a stable fingerprint is matched by its exact content only)
    assert (first.search is None) == (first.words < fingerprint.min_words or not first.words)
    assert (first.sketch is None) == (first.search is None)
    jieba_fingerprint(text)


@given(words, st.lists(st.sampled_from([" ", "  ", "\t", "\n", " \u3000 "]), min_size=1))
def test_case_and_whitespace_runs_do_not_change_the_fingerprint(
    ws: list[str], seps: list[str]
) -> None:
    plain = " ".join(ws)
    spaced = "".join(w + seps[i % len(seps)] for i, w in enumerate(ws))
    assert fingerprint(plain.upper()) == fingerprint(spaced.lower()) == fingerprint(plain)


@given(st.binary(max_size=2000) | st.text().map(str.encode))
def test_any_bytes_become_an_article_a_deletion_or_a_rejection_that_says_why(raw: bytes) -> None:
    decoded = decode_article(raw, 1000)
    assert isinstance(decoded, Article | Deletion | Rejection)
    if isinstance(decoded, Rejection):
        assert decoded.detail
    else:
        assert decoded.id


@given(
    st.dictionaries(
        st.text(max_size=5),
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers()
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(),
            lambda inner: st.lists(inner) | st.dictionaries(st.text(max_size=5), inner),
            max_leaves=10,
        ),
    )
)
def test_any_json_object_decodes_and_its_verdict_encodes(body: dict[str, object]) -> None:
    import orjson

    try:
        raw = orjson.dumps(body)
    except TypeError:  # integers over 64 bits: orjson cannot write them; not our input
        return
    decoded = decode_article(raw, 100_000)
    if isinstance(decoded, Article):
        from worker.model import Accepted

        verdict = Verdict(decoded.id, Kind.UNIQUE, None, seen_at_ms=1)
        accepted = Accepted(decoded, fingerprint(decoded.text), verdict)
        [out] = output_messages(accepted, raw, None, Source("t", 0, 0, None), 100_000, threshold=3)
        assert orjson.loads(out.value)["article"] == orjson.loads(raw)
