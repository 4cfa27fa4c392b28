import asyncio
import dataclasses
import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.support import ROOT
from tests.support.factories import probe
from tests.support.schemas import validate
from tests.support.tenant import Tenant, collect_until
from tests.support.texts import PRODUCT_PAGE, PROMOTION, RECIPE
from worker import wiring
from worker.cli import main
from worker.cli.stream import alert_line
from worker.index.redis.status import Status
from worker.model import Kind, Verdict
from worker.settings import ENV


def test_scan_prints_one_verdict_per_line(tmp_path: Path) -> None:
    lines = [
        json.dumps({"id": "page", "text": PRODUCT_PAGE}),
        json.dumps({"id": "recipe", "text": RECIPE}),
        "this is not json",
        json.dumps({"id": "copy", "text": PRODUCT_PAGE.replace("Portland", "Denver")}),
        json.dumps({"id": "same", "text": RECIPE.upper()}),
        "",
        json.dumps({"id": "short", "text": "a few words"}),
    ]
    path = tmp_path / "articles.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["scan", str(path)])
    assert result.exit_code == 0, result.output
    out = [json.loads(line) for line in result.output.splitlines()]
    assert len(out) == len(lines)
    for line in out:
        validate("scan-line", line)
    assert [o["verdict"] for o in out] == [
        "unique",
        "unique",
        "rejected",
        "duplicate",
        "duplicate",
        "rejected",
        "unique",
    ]
    assert out[2] == {
        "line": 3,
        "verdict": "rejected",
        "reason": "invalid_json",
        "detail": out[2]["detail"],
    }
    assert out[3]["duplicate_of"] == "page"
    assert 0 <= out[3]["distance"] <= 3
    assert out[4]["duplicate_of"] == "recipe"
    assert out[4]["distance"] == 0
    assert out[6]["fingerprint"] is None
    assert all(len(o["fingerprint"]) == 16 for o in out[:2])


def test_scan_with_bands_judges_short_lines_by_their_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV["layout"], "bands:16x4")
    lines = [
        {"id": "title", "text": "Storm closes the harbour for a second day"},
        {"id": "page", "text": PRODUCT_PAGE},
        {"id": "retitled", "text": "Storm closes the harbour for a third day"},
        {"id": "copy", "text": PRODUCT_PAGE.replace("Portland", "Denver")},
        {"id": "other", "text": "Harbour reopens after the storm"},
    ]
    path = tmp_path / "articles.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    result = CliRunner().invoke(main, ["scan", str(path)])
    assert result.exit_code == 0, result.output
    out = [json.loads(line) for line in result.output.splitlines()]
    for line in out:
        validate("scan-line", line)
    assert [(o["verdict"], o["duplicate_of"]) for o in out] == [
        ("unique", None),
        ("unique", None),
        ("duplicate", "title"),
        ("duplicate", "page"),
        ("unique", None),
    ]
    assert (out[2]["distance"], out[2]["similarity"]) == (None, 0.78)  # 7 of 9 words, in hundredths


def test_scan_decides_every_line_around_texts_that_cannot_be_read(tmp_path: Path) -> None:
    forward = "From: a@example.com\nTo: b@example.org\nContent-Type: message/rfc822\n\n"
    lines = [
        json.dumps({"id": "page", "text": PRODUCT_PAGE}),
        json.dumps({"id": "deep", "text": "Subject: deep\n" + forward * 500 + "\nhello\n"}),
        json.dumps({"id": "divs", "text": "<html><body>" + "<div>" * 20_000 + "the story"}),
        json.dumps({"id": "recipe", "text": RECIPE}),
    ]
    path = tmp_path / "articles.jsonl"
    path.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(main, ["scan", str(path)])
    assert result.exit_code == 0, result.output
    out = [json.loads(line) for line in result.output.splitlines()]
    for line in out:
        validate("scan-line", line)
    assert [o.get("reason", o["verdict"]) for o in out] == [
        "unique",
        "too_deep",
        "too_deep",
        "unique",
    ]


def test_scan_threshold_option(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    promoted = PRODUCT_PAGE.replace("complete your kit,", PROMOTION)
    path.write_text(
        json.dumps({"id": "page", "text": PRODUCT_PAGE})
        + "\n"
        + json.dumps({"id": "copy", "text": promoted})
        + "\n"
    )
    default = CliRunner().invoke(main, ["scan", str(path)]).output.splitlines()
    assert json.loads(default[1])["distance"] == 5  # the promotion moves five bits
    strict = CliRunner().invoke(main, ["scan", "--threshold", "4", str(path)]).output
    assert [json.loads(line)["verdict"] for line in strict.splitlines()] == ["unique", "unique"]


def test_bad_setting_is_a_clean_error(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text("")
    result = CliRunner().invoke(main, ["scan", str(path)], env={"DEDUP_THRESHOLD": "99"})
    assert result.exit_code != 0
    assert "threshold must be 0..15" in result.output
    assert "Traceback" not in result.output


def test_alert_lines_for_alerts_and_dead_letters() -> None:
    line = alert_line(
        {
            "kind": "near",
            "id": "b",
            "duplicate_of": "a",
            "original": "o",
            "distance": 2,
            "similarity": 0.8431,
            "threshold": 3,
            "fingerprint": "00000000000000ff",
            "duplicate_of_fingerprint": "00000000000000fc",
        }
    )
    assert line.split() == [
        "near",
        "b",
        "~",
        "a",
        "similarity",
        "0.84",
        "distance",
        "2/3",
        "00000000000000ff",
        "vs",
        "00000000000000fc",
        "original",
        "o",
    ]
    dead = alert_line(
        {
            "reason": "invalid_json",
            "detail": "not valid JSON",
            "source": {"partition": 1, "offset": 7},
        }
    )
    assert "invalid_json" in dead
    assert "offset 7" in dead


def test_plan_prints_the_layouts_and_the_cosine_figures() -> None:
    result = CliRunner().invoke(
        main, ["plan", "--threshold", "7", "--docs", "5000000", "--cosine", "0.8"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    chosen = [line for line in lines if line.startswith("*")]
    assert len(chosen) == 1  # past a million articles, auto takes bands
    assert chosen[0].startswith("* bands, 16 of 4 bins")
    assert chosen[0].split()[-5:] == ["0.644", "0.891", "0.988", "1.000", "1.000"]  # J .5 .. .9
    assert chosen[0].split()[-6] == "462"  # bytes per article
    assert any(line.lstrip().startswith("pigeonhole, 8 bands") for line in lines)
    assert "the worker's layout (*): bands:16x4" in result.output
    assert next(line for line in lines if line.startswith("+")).startswith("+ multi-index")
    assert "angle 36.87 deg" in result.output
    assert "79.52%" in result.output
    assert "13.11 differing bits" in result.output


def test_plan_as_json() -> None:
    result = CliRunner().invoke(main, ["plan", "--threshold", "7", "--docs", "5000000", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    validate("plan", plan)
    assert plan["chosen"]["layout"].startswith("multi-index")
    assert plan["chosen"] in plan["layouts"]
    assert any(e["layout"].startswith("pigeonhole, 8 bands") for e in plan["layouts"])
    sixteen = next(b for b in plan["bands"] if b["layout"] == "bands:16x4")
    assert sixteen["recall"]["0.8"] == pytest.approx(1 - (1 - 0.8**4) ** 16)
    assert sixteen["entries_read_at_most"] == 16 * 32
    assert plan["worker_layout"] == "bands:16x4"


@pytest.mark.parametrize(
    ("docs", "env", "worker_layout"),
    [
        ("1000000", {}, "multi-index"),  # up to a million, the planner's tables
        ("1000001", {}, "bands:16x4"),
        ("5000000", {"DEDUP_RELATED_THRESHOLD": "9"}, "multi-index"),  # related alerts: tables
        ("5000000", {"DEDUP_LAYOUT": "pigeonhole"}, "pigeonhole"),
        ("10", {"DEDUP_LAYOUT": "bands:21x3"}, "bands:21x3"),
    ],
)
def test_plan_marks_the_layout_the_worker_uses(
    docs: str, env: dict[str, str], worker_layout: str
) -> None:
    result = CliRunner().invoke(main, ["plan", "--threshold", "7", "--docs", docs], env=env)
    assert result.exit_code == 0, result.output
    marked = [line for line in result.output.splitlines() if line.startswith("*")]
    assert f"the worker's layout (*): {worker_layout}" in result.output
    if worker_layout.startswith("bands"):
        assert marked == [m for m in marked if m.startswith("* bands")]
        assert len(marked) == 1
    elif worker_layout == "multi-index":
        assert len(marked) == 1
        assert "multi-index" in marked[0]
    else:
        assert marked == []  # a named table layout: the planner's is marked "+"


def test_plan_with_a_bad_layout_setting_is_a_clean_error() -> None:
    result = CliRunner().invoke(
        main, ["plan", "--threshold", "3", "--docs", "10"], env={"DEDUP_LAYOUT": "multi-index:9"}
    )
    assert result.exit_code != 0
    assert "2..3 substrings" in result.output
    assert "Traceback" not in result.output


def test_forget_sends_deletes_for_the_workers_to_apply_in_stream_order(tenant: Tenant) -> None:
    result = CliRunner().invoke(main, ["forget", "a", "b"], env=tenant.env())
    assert result.exit_code == 0, result.output
    topic = {"input": tenant.settings.input_topic}
    out = collect_until(tenant.kafka, topic, lambda out: len(out.get("input", [])) >= 2, quiet=0)
    sent = sorted(out["input"], key=lambda m: m["id"])  # (keyed by id: maybe two partitions)
    assert sent == [{"id": "a", "op": "delete"}, {"id": "b", "op": "delete"}]
    told = CliRunner().invoke(main, ["forget", "--json", "c"], env=tenant.env())
    assert told.exit_code == 0, told.output
    validate("forget", json.loads(told.stdout))
    assert json.loads(told.stdout) == {"deletes_sent": ["c"], "topic": topic["input"]}


def test_forget_now_removes_ids_and_writes_their_tombstones(tenant: Tenant) -> None:
    settings = tenant.settings

    async def check(article_id: str) -> Verdict:
        index = wiring.redis_index(settings)
        [v] = await index.check_and_insert([probe(article_id, 0x1234, content="c")])
        await index.close()
        return v

    asyncio.run(check("a"))
    result = CliRunner().invoke(main, ["forget", "--now", "a", "zzz"], env=tenant.env())
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["forgot: a", "not indexed: zzz"]
    again = CliRunner().invoke(main, ["forget", "--now", "--json", "zzz"], env=tenant.env())
    assert again.exit_code == 0, again.output
    validate("forget", json.loads(again.output))
    assert json.loads(again.output) == {"forgot": [], "not_indexed": ["zzz"]}
    assert asyncio.run(check("b")).kind is Kind.UNIQUE  # same content, but "a" is gone
    out = collect_until(
        tenant.kafka,
        {"unique": settings.unique_topic},
        lambda out: len(out.get("unique_tombstones", [])) >= 3,
        quiet=0,
    )
    assert sorted(out["unique_tombstones"]) == ["a", "zzz", "zzz"]


def test_backfill_indexes_history_for_the_stream(redis_url: str, tmp_path: Path) -> None:
    env = {ENV["redis_url"]: redis_url, ENV["namespace"]: f"cli-{uuid.uuid4().hex[:8]}"}
    history = tmp_path / "history.jsonl"
    history.write_text(
        "\n".join(
            [
                json.dumps({"id": "page", "text": PRODUCT_PAGE}),
                json.dumps({"id": "recipe", "text": RECIPE}),
                json.dumps({"id": "copy", "text": PRODUCT_PAGE.replace("Portland", "Denver")}),
                json.dumps({"id": "recipe", "op": "delete"}),
                "not json",
            ]
        )
        + "\n"
    )
    quiet = CliRunner().invoke(main, ["backfill", str(history)], env=env)
    assert quiet.exit_code == 0, quiet.output
    assert "backfilled: 1 deleted, 1 duplicate, 1 rejected, 2 unique" in quiet.output
    later = tmp_path / "later.jsonl"
    later.write_text(
        json.dumps({"id": "late", "text": PRODUCT_PAGE.upper()})
        + "\n"
        + json.dumps({"id": "r2", "text": RECIPE})
        + "\n"
    )
    shown = CliRunner().invoke(main, ["backfill", "--verdicts", str(later)], env=env)
    assert shown.exit_code == 0, shown.output
    lines = [json.loads(line) for line in shown.stdout.splitlines()]
    for line in lines:
        validate("scan-line", line)
    assert [(o["id"], o["verdict"], o["duplicate_of"]) for o in lines] == [
        ("late", "duplicate", "page"),
        ("r2", "unique", None),
    ]  # recipe was deleted


def test_status_reports_the_index(redis_url: str, tmp_path: Path) -> None:
    env = {
        ENV["redis_url"]: redis_url,
        ENV["namespace"]: f"cli-{uuid.uuid4().hex[:8]}",
        ENV["layout"]: "multi-index:2",
        ENV["threshold"]: "3",
    }
    empty = CliRunner().invoke(main, ["status"], env=env)
    assert empty.exit_code == 0, empty.output
    assert "none yet" in empty.output
    assert "0 with a verdict" in empty.output
    history = tmp_path / "h.jsonl"
    history.write_text(
        json.dumps({"id": "page", "text": PRODUCT_PAGE})
        + "\n"
        + json.dumps({"id": "copy", "text": PRODUCT_PAGE.upper()})
        + "\n"
        + json.dumps({"id": "recipe", "text": RECIPE})
        + "\n"
    )
    assert CliRunner().invoke(main, ["backfill", str(history)], env=env).exit_code == 0
    result = CliRunner().invoke(main, ["status"], env=env)
    assert result.exit_code == 0, result.output
    lines = dict(line.split(None, 1) for line in result.output.splitlines())
    assert lines["layout"].startswith("multi-index, threshold 3")
    assert lines["tables"] == "63-32/1 31-0/1"
    assert lines["articles"].startswith("3 with a verdict; 2 originals in the buckets; 2 distinct")
    assert lines["buckets"].startswith("4 holding 4 entries (1.0 per bucket); largest 1")
    assert lines["bucket"] == "sizes   <=1: 4"
    assert lines["retention"].startswith("none")
    assert lines["sized"].startswith("for      up to 1,048,576 articles")  # (the default size)
    assert "WARNING" not in lines
    address = redis_url.split("//")[1].split("/")[0]
    assert re.fullmatch(
        rf"{re.escape(address)}: 100\.0% of the namespace's keys \(\d+\); .* MiB used .*",
        lines["node"],
    ), lines["node"]
    as_json = CliRunner().invoke(main, ["status", "--json"], env=env)
    assert as_json.exit_code == 0, as_json.output
    record = json.loads(as_json.output)
    validate("status", record)
    assert (record["records"], record["originals"], record["entries"]) == (3, 2, 4)
    assert record["layout"]["layout"] == "multi-index"
    assert record["retention_days"] is None
    assert record["sized_for"] == 1_048_576
    [node] = record["nodes"]
    assert (node["address"], node["used_memory_bytes"] > 0) == (address, True)
    assert node["keys"] >= 4  # (meta, docs, ids, exact texts, buckets)


def test_status_warns_of_a_namespace_grown_far_past_its_size() -> None:
    made = Status({"exact_groups": "8"}, 0, 0, 0, 0, 0, 0, {}, 0)
    assert made.sized_for == 32 << 8
    assert not made.outgrown
    grown = dataclasses.replace(made, exact_texts=2 * made.sized_for + 1)
    assert grown.outgrown
    assert Status({}, 0, 0, 0, 0, 0, 0, {}, 0).sized_for is None  # (no worker yet)


def backfilled_status(
    redis_url: str, tmp_path: Path, texts: list[str], **settings: str
) -> dict[str, Any]:
    """`status --json` of a new namespace after `texts` were backfilled into it (validated)."""
    env = {
        ENV["redis_url"]: redis_url,
        ENV["namespace"]: f"cli-{uuid.uuid4().hex[:8]}",
        **{ENV[name]: value for name, value in settings.items()},
    }
    history = tmp_path / "h.jsonl"
    history.write_text(
        "".join(json.dumps({"id": f"a{n}", "text": t}) + "\n" for n, t in enumerate(texts))
    )
    assert CliRunner().invoke(main, ["backfill", str(history)], env=env).exit_code == 0
    as_json = CliRunner().invoke(main, ["status", "--json"], env=env)
    assert as_json.exit_code == 0, as_json.output
    record: dict[str, Any] = json.loads(as_json.output)
    validate("status", record)
    return record


def test_status_counts_the_postings_of_a_band_index(redis_url: str, tmp_path: Path) -> None:
    texts = [
        PRODUCT_PAGE,
        PRODUCT_PAGE.upper(),
        RECIPE,
        "Fix the race between the cache and its reload",
    ]
    record = backfilled_status(redis_url, tmp_path, texts, layout="bands:16x4")
    assert record["layout"]["layout"] == "bands"
    assert record["layout"]["tables"] == "bands:16x4"
    # two originals and a short line, each under 16 buckets (the exact copy under none)
    assert (record["records"], record["originals"], record["entries"]) == (4, 3, 48)


def test_status_counts_the_postings_of_short_lines_in_a_tables_index(
    redis_url: str, tmp_path: Path
) -> None:
    texts = [PRODUCT_PAGE, "Fix the race between the cache and its reload"]
    record = backfilled_status(redis_url, tmp_path, texts, layout="multi-index:2", threshold="3")
    # the page under its 2 table buckets, the short line under its 16 line buckets
    assert (record["records"], record["originals"], record["entries"]) == (2, 2, 18)


def test_the_readme_sample_is_what_scan_prints_for_the_examples() -> None:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("<!-- scan-sample -->", 1)[1].split("```json\n", 1)[1]
    sample = block.split("```", 1)[0].splitlines()
    assert sample
    examples = b"".join(
        (ROOT / "examples" / n).read_bytes() for n in ("originals.jsonl", "later.jsonl")
    )
    result = CliRunner().invoke(main, ["scan", "-"], input=examples)
    assert result.exit_code == 0, result.output
    printed = result.output.splitlines()
    assert f"Of the {len(printed)} lines" in readme
    for line in sample:
        assert line in printed, line
