import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from worker.cli import main
from worker.errors import ConfigError
from worker.text.features import HAN_CHAR
from worker.text.fingerprint import Fingerprinter
from worker.text.idf import IdfTable, default_table, jieba_table
from worker.text.simhash import feature_hashes


def test_build_keeps_units_below_the_cap() -> None:
    docs = [["the", "cat"], ["the", "dog"], ["the", "cat", "cat"], ["a", "bird"]]
    table = IdfTable.build(docs, cap=1.8)
    assert table.docs == 4
    assert table.weight("the") == pytest.approx(math.log(5 / 4) + 1, abs=1e-4)
    assert table.weight("cat") == pytest.approx(math.log(5 / 3) + 1, abs=1e-4)
    assert "bird" not in table.weights
    assert table.weight("bird") == 1.8
    assert table.weight("never seen") == 1.8


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    table = IdfTable.build([["a", "b"], ["a"], ["a", "tab\tin"]], cap=3.0)
    path = tmp_path / "idf.tsv"
    table.save(path)
    assert IdfTable.load(path) == table


def test_bad_files_say_how_to_make_a_good_one(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="dedup-worker idf build"):
        IdfTable.load(tmp_path / "missing.tsv")
    (tmp_path / "x.tsv").write_text("word\t1.0\n")
    with pytest.raises(ConfigError, match="not an IDF table"):
        IdfTable.load(tmp_path / "x.tsv")


def test_the_packaged_table_weighs_common_units_low() -> None:
    table = default_table()
    assert table.weight("the") < 1.5
    assert table.weight("的") < 1.5
    assert table.weight("zebra-crossing-42") == table.cap


def test_idf_build_command(tmp_path: Path) -> None:
    source = tmp_path / "articles.jsonl"
    source.write_text(
        "\n".join(
            [
                json.dumps({"id": "1", "text": "The cat sat"}),
                json.dumps({"id": "2", "text": "the DOG sat"}),
                "not json",
            ]
        )
        + "\n"
    )
    out = tmp_path / "idf.tsv"
    result = CliRunner().invoke(main, ["idf", "build", str(source), "-o", str(out), "--cap", "1.3"])
    assert result.exit_code == 0, result.output
    assert "2 articles" in result.output
    assert "1 lines skipped" in result.output
    table = IdfTable.load(out)
    assert table.cap == 1.3
    assert set(table.weights) == {"the", "sat"}


def test_tables_of_two_languages_merge() -> None:
    en = IdfTable.build([["the", "cat"], ["the"]], cap=5.0)
    zh = IdfTable.build([["的", "猫"], ["的"]], cap=5.0)
    both = en.merged(zh)
    assert both.docs == 4
    assert both.weight("the") == en.weight("the")
    assert both.weight("的") == zh.weight("的")
    with pytest.raises(ValueError, match="caps"):
        en.merged(IdfTable.build([["x"]], cap=3.0))


def test_jieba_words_are_weighed_by_jiebas_own_table() -> None:
    table = jieba_table()
    packaged = default_table()
    assert table.weights["中国"] == pytest.approx(3.02732068666 + 1, abs=1e-4)  # jieba's, +1
    assert table.weights["的"] == pytest.approx(0.88474202619 + 1, abs=1e-4)
    assert table.weights["the"] == packaged.weights["the"]  # English words kept
    han_only_in_packaged = [
        u for u in packaged.weights if HAN_CHAR.search(u) and u not in table.weights
    ]
    assert han_only_in_packaged  # the packaged character weights are not carried over
    assert all(w < table.cap for w in table.weights.values())
    assert Fingerprinter(chinese="jieba").idf is table
    assert Fingerprinter().idf is packaged


@pytest.mark.parametrize(
    "table",
    [default_table(), IdfTable({}, 0), IdfTable({"a": 1.5, "b": 2.0}, 2)],
    ids=["packaged", "empty", "two"],
)
def test_weights_by_hash_equal_weights_by_unit(table: IdfTable) -> None:
    units = [*table.weights, "unknown", "zzz-not-there", "中", "the"] * 2
    got = table.weights_of(feature_hashes(units))
    assert got.tolist() == [table.weight(u) for u in units]


def test_weights_by_hash_in_a_table_with_crowded_buckets() -> None:
    # 5,000 units in a table of 2^15 buckets: many buckets hold two or more
    table = IdfTable({f"w{i}": 1 + i / 10_000 for i in range(5_000)}, 5_000)
    units = [f"w{i}" for i in range(0, 6_000, 3)]
    assert table.weights_of(feature_hashes(units)).tolist() == [table.weight(u) for u in units]
