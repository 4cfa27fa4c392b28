"""Pages crawled again after their site's redesign: the truth is over their content."""

from __future__ import annotations

import pytest

from evaluation.rescraped import SITES, THEMES, rescraped_set


@pytest.mark.parametrize("themes", THEMES)
@pytest.mark.parametrize("site", SITES)
def test_a_rescraped_page_repeats_its_first_crawl_in_another_template(
    site: str, themes: str
) -> None:
    pages = rescraped_set(site, themes=themes)
    by_id = {item.id: item for item in pages.items}
    rescraped = [i for i in pages.items if i.tag == "re-scraped"]
    assert len(rescraped) >= 50
    for item in rescraped:
        first = by_id[item.id.replace("@2", "@1")]
        assert item.truth is not None
        assert first.id in item.truth
        assert item.text != first.text  # the template changed around the same content
    new = [i for i in pages.items if i.tag == "new page"]
    assert sum(i.truth == frozenset() for i in new) >= 0.9 * len(new)  # (a site may repeat)
    assert any(i.tag == "re-scraped, edited" and i.truth for i in pages.items)
    old_theme, new_theme = {
        "classic": ("navigation", "sidebar"),
        "sphinx to mkdocs": ("sphinxsidebar", "md-sidebar"),
    }[themes]
    assert all(old_theme in i.text for i in pages.items if i.tag == "first crawl")
    assert all(new_theme in i.text for i in new)
