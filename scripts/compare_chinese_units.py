"""Chinese units for the words mode, measured on the Chinese evaluation sets (seed 2026):
Han characters with the packaged IDF table (the default), jieba words with the packaged
table, jieba words with jieba's own IDF table (what `DEDUP_CHINESE_TOKENS=jieba` uses), and
MinHashLSH 0.8 for reference. Prints a Markdown table (docs/quality.md). Needs the eval extra.

    .venv/bin/python scripts/compare_chinese_units.py
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaluation.datasets import Item, edited, natural
from evaluation.methods import Detector, MinHashLSH
from evaluation.metrics import score
from worker.index import MemoryIndex
from worker.layout.tables import pigeonhole
from worker.model import Probe
from worker.text.fingerprint import Fingerprinter
from worker.text.idf import IdfTable, default_table, jieba_table


@dataclass
class Words:
    name: str
    chinese: str
    idf: IdfTable

    def run(self, items: Sequence[Item], language: str) -> list[str | None]:
        fingerprint = Fingerprinter(chinese=self.chinese, idf=self.idf)
        index = MemoryIndex(pigeonhole(8), verify_threshold=14, clock_ms=lambda: 0)
        out = []
        for item in items:
            fp = fingerprint(item.text)
            out.append(index.check_and_insert_one(
                Probe(item.id, fp.content_hash, fp.simhash, fp.verify)).duplicate_of)
        return out


def main() -> None:
    methods: list[Detector] = [
        Words("characters, packaged IDF (default)", "bigrams", default_table()),
        Words("jieba words, packaged IDF", "jieba", default_table()),
        Words("jieba words, jieba's IDF", "jieba", jieba_table()),
        MinHashLSH(0.8),
    ]
    print("| set | " + " | ".join(m.name for m in methods) + " |")
    print("|---|" + "---|" * len(methods))
    for eval_set in [*edited("zh"), natural("zh")]:
        f1 = [score(eval_set.items, m.run(eval_set.items, "zh"), lambda _: "all").overall.f1
              for m in methods]
        print(f"| {eval_set.name} | " + " | ".join(f"{x:.3f}" for x in f1) + " |", flush=True)


if __name__ == "__main__":
    main()
