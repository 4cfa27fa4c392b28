"""Precision as the index grows: how often two texts that are not duplicates are compared,
and how often such a comparison calls them duplicates, over every pair of the largest real
collection the offline corpora make; extrapolated to larger indexes.
`python -m evaluation.growth` prints the figures docs/quality.md shows.

A comparison is a pair within the search radius (the index's tables bring it up as a
candidate); a false match is a comparison whose sketches reach the duplicate similarity while
the texts share under 0.3 of their shingles (exact Jaccard, evaluation/truth.py).

Extrapolated to N indexed articles: an article meets N x (pairs within the radius / pairs)
candidates (in a stream like this collection; or, across sources, in one of unrelated
texts), judges the 16 nearest of them (the index's rule), and is wrongly called a duplicate
about min(candidates, 16) x (false matches / comparisons) times; with no false match seen,
the rate taken is its 95% upper bound, 3 / comparisons.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from evaluation import corpora
from evaluation.truth import DIFFERENT, DUPLICATE, jaccard_matrix, shingle_set
from worker import defaults
from worker.text.fingerprint import Fingerprinter
from worker.text.sketch import bins_needed

_CHUNK = 512  # rows of the all-pairs distance matrix computed at once
SIZES = (1_000_000, 10_000_000, 100_000_000)
MAX_BYTES = 1_000_000  # the worker's default DEDUP_MAX_MESSAGE_BYTES


def collection() -> list[tuple[str, str]]:
    """(source, text) of every text the offline corpora hold, of every kind."""
    texts = [("news-en", a.text) for a in corpora.news_articles(min_words=0)]
    texts += [("news-en-lee", t) for t in corpora.lee_news()]
    texts += [("news-zh", t) for t in corpora.peoples_daily()]
    texts += [("html", html) for _, html in corpora.postgres_pages()]
    texts += [("html", html) for _, html, _ in corpora.git_pages()]
    for language in corpora.MAN_LANGUAGES:
        texts += [(f"man-{language}", t) for _, t in corpora.man_pages(language)]
    for language in corpora.REFERENCE_LANGUAGES:
        texts += [(f"reference-{language}", t) for _, t in corpora.reference_chapters(language)]
    texts += [("man-en", t) for _, t in corpora.english_man_pages()]
    texts += [("pod", t) for _, t in corpora.perl_pods()]
    for library in ("java", "c++"):
        texts += [(f"api-{library}", html) for _, html in corpora.api_pages(library)]
    texts += [("legal", t) for _, t in corpora.copyright_files() + corpora.common_licenses()]
    texts += [("mail", t) for _, t in corpora.email_messages()]
    # The worker dead-letters what is larger than its message limit.
    return [(source, t) for source, t in texts if len(t.encode()) <= MAX_BYTES]


@dataclass
class Pairs:
    texts: int
    pairs: int
    within: int  # pairs within the search radius: comparisons
    judged_near: int  # comparisons whose sketches reach the duplicate similarity
    false: int  # ... of texts sharing under DIFFERENT of their shingles
    gray: int  # ... sharing DIFFERENT..DUPLICATE
    true: int  # ... sharing at least DUPLICATE
    examples: list[tuple[str, str, float, float]]  # false matches: sources, estimate, truth
    cross_pairs: int = 0  # pairs of texts from different sources
    cross_within: int = 0  # ... within the search radius


def _within(search: np.ndarray, radius: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every pair i < j of fingerprints within `radius` bits, a block of rows at a time."""
    for start in range(0, len(search), _CHUNK):
        rows = search[start : start + _CHUNK]
        d = np.bitwise_count(rows[:, None] ^ search[None, :])
        i, j = np.nonzero(d <= radius)
        i += start
        keep = i < j
        yield i[keep], j[keep]


def measure(
    texts: list[tuple[str, str]],
    radius: int,
    similarity: float,
    fingerprinter: Fingerprinter | None = None,
) -> Pairs:
    fingerprinter = fingerprinter or Fingerprinter()
    fps = fingerprinter.many([t for _, t in texts])
    kept = [k for k, f in enumerate(fps) if f.search is not None]
    # Exact copies are decided by the content hash before any comparison: one of each.
    first: dict[bytes, int] = {}
    for k in kept:
        first.setdefault(fps[k].content_hash, k)
    kept = sorted(first.values())
    search = np.array([fps[k].search for k in kept], dtype=np.uint64)
    shape = fingerprinter.sketch_shape
    sketches = np.stack([np.frombuffer(fps[k].sketch or b"", dtype=shape.dtype) for k in kept])
    need = bins_needed(similarity, shape)
    names = sorted({texts[k][0] for k in kept})
    source = np.array([names.index(texts[k][0]) for k in kept])
    sizes = np.bincount(source)
    within = cross_within = 0
    near_i: list[np.ndarray] = []
    near_j: list[np.ndarray] = []
    for i, j in _within(search, radius):
        within += len(i)
        cross_within += int(np.count_nonzero(source[i] != source[j]))
        agree = np.count_nonzero(sketches[i] == sketches[j], axis=1)
        hit = agree >= need
        near_i.append(i[hit])
        near_j.append(j[hit])
    ni, nj = np.concatenate(near_i), np.concatenate(near_j)
    involved = sorted(set(ni.tolist()) | set(nj.tolist()))
    place = {k: n for n, k in enumerate(involved)}
    sim = jaccard_matrix([shingle_set(texts[kept[k]][1]) for k in involved])
    truth = np.array(
        [sim[place[a], place[b]] for a, b in zip(ni.tolist(), nj.tolist(), strict=True)]
    )
    false = truth < DIFFERENT
    examples = [
        (
            texts[kept[a]][0],
            texts[kept[b]][0],
            float(np.mean(sketches[a] == sketches[b])),
            float(t),
        )
        for a, b, t in zip(
            ni[false].tolist(), nj[false].tolist(), truth[false].tolist(), strict=True
        )
    ]
    return Pairs(
        texts=len(kept),
        pairs=len(kept) * (len(kept) - 1) // 2,
        within=within,
        judged_near=len(ni),
        false=int(false.sum()),
        gray=int(((truth >= DIFFERENT) & (truth < DUPLICATE)).sum()),
        true=int((truth >= DUPLICATE).sum()),
        examples=examples[:10],
        cross_pairs=(int(sizes.sum()) ** 2 - int((sizes**2).sum())) // 2,
        cross_within=cross_within,
    )


def report(p: Pairs, radius: int, similarity: float) -> str:
    observed = p.false / p.within if p.within else 0.0
    # With no false match seen, the rate is below 3 / comparisons at 95% confidence.
    rate = observed if p.false else 3 / max(1, p.within)
    bound = "" if p.false else " (none seen: the 95% upper bound, 3 / comparisons)"
    lines = [
        f"{p.texts:,} distinct texts, {p.pairs:,} pairs; radius {radius} bits, "
        f"similarity {similarity}",
        f"comparisons (pairs within the radius): {p.within:,} ({p.within / p.pairs:.2e} of "
        f"pairs); of texts from different sources: {p.cross_within:,} "
        f"({p.cross_within / max(1, p.cross_pairs):.2e} of such pairs)",
        f"judged near-duplicates: {p.judged_near:,}: {p.true:,} sharing >= {DUPLICATE} of "
        f"their shingles, {p.gray:,} sharing {DIFFERENT}-{DUPLICATE}, {p.false:,} sharing "
        f"under {DIFFERENT}",
        f"false matches per million comparisons: {observed * 1e6:,.2f}; taken as "
        f"{rate * 1e6:,.2f}{bound}",
        "",
        "| indexed articles | candidates per article: like this collection / across "
        "sources | compared (at most 16) | false matches per million articles |",
        "|---|---|---|---|",
    ]
    for n in SIZES:
        alike, across = n * p.within / p.pairs, n * p.cross_within / max(1, p.cross_pairs)
        compared = min(alike, defaults.MAX_CANDIDATES)
        lines.append(
            f"| {n:,} | {alike:,.0f} / {across:,.1f} | {compared:,.0f} | "
            f"{compared * rate * 1e6:,.1f} |"
        )
    if p.examples:
        lines += ["", "false matches (sources, estimated and true similarity):"]
        lines += [f"  {a} / {b}: {e:.2f} vs {t:.2f}" for a, b, e, t in p.examples]
    return "\n".join(lines)


def main() -> None:
    started = time.monotonic()
    texts = collection()
    print(f"collected {len(texts):,} texts ({time.monotonic() - started:.0f} s)", flush=True)
    radius, similarity = defaults.THRESHOLD, defaults.SIMILARITY
    pairs = measure(texts, radius, similarity)
    print(report(pairs, radius, similarity))
    print(f"\n({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
