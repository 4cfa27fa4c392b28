"""Per-article fingerprint cost on real news, this project against the peers, side by side in
one run. English: the Lee corpus (300 articles); Chinese: People's Daily 1998 (600-character
pieces); HTML: pages of two documentation sites (PostgreSQL's and Git's manuals), with the
extraction libraries beside this project's. The methods take turns round by round, so a slow
spell of the machine hits them all."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import xxhash

from evaluation.corpora import git_pages, lee_news, peoples_daily, postgres_pages
from evaluation.tokens import tokenize
from tests.support.reference import simhash_reference
from worker.model import Format
from worker.text.features import units
from worker.text.fingerprint import Fingerprinter
from worker.text.markup import reader_text
from worker.text.normalize import normalize, normalized_tokens
from worker.text.simhash import simhash

Method = Callable[[list[str]], object]  # fingerprints all the texts it is given
BATCH = 100  # the worker's default batch size (DEDUP_BATCH_SIZE)


def each(fn: Callable[[str], object]) -> Method:
    """One text at a time."""
    return lambda texts: [fn(text) for text in texts]


def batched(fingerprinter: Fingerprinter, size: int = BATCH) -> Method:
    """In batches of `size`, as the worker fingerprints a batch of messages."""
    return lambda texts: [
        fingerprinter.many(texts[i : i + size]) for i in range(0, len(texts), size)
    ]


def features(text: str, chinese: str = "bigrams") -> list[str]:
    return tokenize(normalize(text), chinese=chinese).items


def floor(chinese: str) -> Method:
    """Building the features and hashing them: what any SimHash of these features must do."""
    return each(
        lambda text: [xxhash.xxh3_64_intdigest(f.encode()) for f in features(text, chinese)]
    )


def units_floor(text: str) -> object:
    """The floor: normalising, cutting units, hashing each unit once."""
    return [xxhash.xxh3_64_intdigest(u.encode()) for u in units(normalized_tokens(text)).items]


def jieba_itself() -> Method:
    """SimHash over words cut by jieba's own Python implementation (not rjieba)."""
    import jieba

    jieba.setLogLevel(60)
    jieba.initialize()

    def run(text: str) -> object:
        words = [w for w in jieba.lcut(normalize(text)) if w.strip()]
        return simhash(words)

    return each(run)


def peers(chinese: str) -> dict[str, Method]:
    out: dict[str, Method] = {}
    try:
        from simhash import Simhash

        out["simhash library, Simhash(text) default"] = each(Simhash)
    except ImportError:
        print("  (simhash library not installed: pip install -e '.[eval]')")
    try:
        from datasketch import MinHash

        template = MinHash(num_perm=128)

        def minhash(text: str) -> object:
            m = template.copy()
            m.update_batch([f.encode() for f in features(text, chinese)])
            return m

        out["datasketch MinHash-128, shingle features"] = each(minhash)
    except ImportError:
        print("  (datasketch not installed: pip install -e '.[eval]')")
    return out


def report(title: str, texts: list[str], methods: dict[str, Method], rounds: int) -> None:
    """Each method's median time per text, and its median ratio to the first method, the ratio
    taken within each round (the machine's slow spells move both sides of a ratio alike)."""
    print(f"\n{title}: {len(texts)} texts, median of {rounds} rounds")
    samples: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(rounds):
        for name, fn in methods.items():
            start = time.perf_counter()
            fn(texts)
            samples[name].append((time.perf_counter() - start) / len(texts) * 1e6)
    ours = samples[next(iter(methods))]
    for name, values in samples.items():
        ratio = statistics.median(v / o for v, o in zip(values, ours, strict=True))
        print(f"  {name:<60} {statistics.median(values):8.1f} us/text  {ratio:6.2f}x the first row")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--chinese-texts", type=int, default=500)
    parser.add_argument("--html-pages", type=int, default=200)
    parser.add_argument("--parts", default="english,chinese,html", help="which tables to run")
    args = parser.parse_args()
    parts = args.parts.split(",")
    normalize("warm up")  # builds the normalisation table once
    if "english" in parts:
        run_english(args)
    if "chinese" in parts:
        run_chinese(args)
    if "html" in parts:
        run_html(args)


def run_english(args: argparse.Namespace) -> None:
    english = list(lee_news())
    words = statistics.mean(len(t.split()) for t in english)
    report(
        f"English news (mean {words:.0f} words)",
        english,
        {
            **ours(),
            "bit-by-bit SimHash, shingle features": each(lambda t: simhash_reference(features(t))),
            **peers("bigrams"),
        },
        args.rounds,
    )


def run_chinese(args: argparse.Namespace) -> None:
    chinese = list(peoples_daily())[: args.chinese_texts]
    chars = statistics.mean(len(t) for t in chinese)
    report(
        f"Chinese news (mean {chars:.0f} characters)",
        chinese,
        {
            **ours(),
            f"dedup-worker, jieba words (via rjieba), batches of {BATCH}": batched(
                Fingerprinter(chinese="jieba")
            ),
            "SimHash over jieba.lcut words (pure Python)": jieba_itself(),
            **peers("bigrams"),
        },
        args.rounds,
    )


def run_html(args: argparse.Namespace) -> None:
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.html import HTMLTree

    def heuristics(html: str) -> object:
        return extract_plain_text(HTMLTree.parse(html), main_content=True, list_bullets=False)

    pages = [html for _, html in postgres_pages()[: args.html_pages // 2]]
    pages += [html for _, html, _ in git_pages()[: args.html_pages - len(pages)]]
    size = statistics.mean(len(p.encode()) for p in pages) / 1024
    report(
        f"HTML pages (mean {size:.0f} KB)",
        pages,
        {
            f"dedup-worker, batches of {BATCH}: detect, template left out, fingerprint": batched(
                Fingerprinter()
            ),
            "its extraction alone: resiliparse, template left out": each(
                lambda t: reader_text(t, Format.HTML, main_content=True)
            ),
            "resiliparse's main-content heuristics": each(heuristics),
            "resiliparse, all visible text": each(
                lambda t: reader_text(t, Format.HTML, main_content=False)
            ),
            **extractors(),
        },
        args.rounds,
    )


def extractors() -> dict[str, Method]:
    """The other extraction libraries considered."""
    import justext
    import trafilatura
    from selectolax.lexbor import LexborHTMLParser

    def selectolax_text(html: str) -> object:
        body = LexborHTMLParser(html).body
        return body.text(separator=" ") if body is not None else ""

    stop = justext.get_stoplist("English")
    return {
        "selectolax, the body's text": each(selectolax_text),
        "trafilatura.extract (main content)": each(trafilatura.extract),
        "jusText (main content)": each(lambda t: justext.justext(t, stop)),
    }


def ours() -> dict[str, Method]:
    """This project's fingerprints and their floor; the first is the row the others are
    compared to."""
    path = "native extension" if Fingerprinter().native else "numpy: no native extension"
    return {
        f"dedup-worker, batches of {BATCH} ({path})": batched(Fingerprinter()),
        f"dedup-worker, batches of {BATCH}, numpy": batched(Fingerprinter(native=False)),
        "dedup-worker, one text at a time": each(Fingerprinter()),
        "floor: normalise + units + xxh3": each(units_floor),
        "floor of a shingle SimHash: normalise + shingles + xxh3": floor("bigrams"),
    }


if __name__ == "__main__":
    main()
