"""Per-article fingerprint cost on real news, this project against the peers, side by side in
one run. English: the Lee corpus (300 articles); Chinese: People's Daily 1998 (600-character
pieces)."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import xxhash

from worker.corpora import lee_news, peoples_daily
from worker.fingerprint import Fingerprinter
from worker.normalize import normalize
from worker.simhash import simhash, simhash_reference
from worker.tokens import tokenize

Method = Callable[[str], object]


def per_doc_us(fn: Method, texts: list[str], rounds: int) -> float:
    """Median over rounds of the mean time per text, in microseconds."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            fn(text)
        samples.append((time.perf_counter() - start) / len(texts) * 1e6)
    return statistics.median(samples)


def features(text: str, chinese: str = "bigrams") -> list[str]:
    return tokenize(normalize(text), chinese=chinese).items


def floor(chinese: str) -> Method:
    """Building the features and hashing them: what any SimHash of these features must do."""
    return lambda text: [xxhash.xxh3_64_intdigest(f.encode()) for f in features(text, chinese)]


def jieba_itself() -> Method:
    """SimHash over words cut by jieba's own Python implementation (not rjieba)."""
    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()

    def run(text: str) -> object:
        words = [w for w in jieba.lcut(normalize(text)) if w.strip()]
        return simhash(words)

    return run


def peers(chinese: str) -> dict[str, Method]:
    out: dict[str, Method] = {}
    try:
        from simhash import Simhash

        out["simhash library, Simhash(text) default"] = Simhash
    except ImportError:
        print("  (simhash library not installed: pip install -e '.[eval]')")
    try:
        from datasketch import MinHash

        template = MinHash(num_perm=128)

        def minhash(text: str) -> object:
            m = template.copy()
            m.update_batch([f.encode() for f in features(text, chinese)])
            return m

        out["datasketch MinHash-128, same features"] = minhash
    except ImportError:
        print("  (datasketch not installed: pip install -e '.[eval]')")
    return out


def report(title: str, texts: list[str], methods: dict[str, Method], rounds: int) -> None:
    print(f"\n{title}: {len(texts)} texts, median of {rounds} rounds")
    figures = {name: per_doc_us(fn, texts, rounds) for name, fn in methods.items()}
    ours = next(iter(figures.values()))
    for name, us in figures.items():
        print(f"  {name:<44} {us:9.1f} us/text  {us / ours:6.2f}x the first row")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--chinese-texts", type=int, default=500)
    args = parser.parse_args()
    normalize("warm up")  # builds the normalisation table once

    english = list(lee_news())
    words = statistics.mean(len(t.split()) for t in english)
    report(f"English news (mean {words:.0f} words)", english, {
        "dedup-worker, words mode (default; two fingerprints)": Fingerprinter(),
        "dedup-worker, shingles mode (3-word shingles)": Fingerprinter(features="shingles"),
        "floor: normalise + shingles + xxh3 only": floor("bigrams"),
        "bit-by-bit SimHash, same features": lambda t: simhash_reference(features(t)),
        **peers("bigrams"),
    }, args.rounds)

    chinese = list(peoples_daily())[: args.chinese_texts]
    chars = statistics.mean(len(t) for t in chinese)
    report(f"Chinese news (mean {chars:.0f} characters)", chinese, {
        "dedup-worker, words mode (default; two fingerprints)": Fingerprinter(),
        "dedup-worker, shingles mode (bigrams)": Fingerprinter(features="shingles"),
        "floor: normalise + bigrams + xxh3 only": floor("bigrams"),
        "dedup-worker, shingles mode (jieba via rjieba)": Fingerprinter(chinese="jieba",
                                                                         features="shingles"),
        "SimHash over jieba.lcut words (pure Python)": jieba_itself(),
        **peers("bigrams"),
    }, args.rounds)


if __name__ == "__main__":
    main()
