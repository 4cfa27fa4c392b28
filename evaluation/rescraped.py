"""Pages crawled again after their site's redesign, as a crawler meets them: the content of
each page the same (or lightly edited), its template new (header, navigation, sidebar,
footer, version strings). Four sites: PostgreSQL's and Git's manuals (English) and the Debian
Reference in Japanese and Chinese (scripts written without spaces).

The first crawl is each page's content in the site's old template; the second, after the
redesign, some of the same pages in the new one (some with their content edited) and pages
the first crawl did not see. The truth is the Jaccard truth of evaluation/truth.py over each
page's content alone: a re-scraped page repeats its first crawl when its content does,
whatever the templates around it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

from evaluation import corpora
from evaluation.datasets import EvalSet, with_truth
from evaluation.truth import units, visible_text

SITES = ("postgresql", "git", "ja", "zh-cn")


@dataclass(frozen=True)
class Chrome:
    """What a site's templates say, in its language."""

    site: str
    language: str
    old_version: str
    new_version: str
    home: str
    contents: str  # "On this page"
    helpful: str  # the feedback box
    rights: str  # the footer's notice
    updated: str  # "Last updated"


CHROME = {
    "postgresql": Chrome(
        "PostgreSQL", "en", "15.4", "16.2", "Home", "On this page",
        "Was this page helpful? Yes No. Report a documentation issue",
        "All rights reserved. The PostgreSQL Global Development Group", "Last updated",
    ),
    "git": Chrome(
        "Git", "en", "2.39.2", "2.43.0", "Home", "In this guide",
        "Is something wrong on this page? Edit it on GitHub or tell the mailing list",
        "Git is a member of Software Freedom Conservancy", "Last updated",
    ),
    "ja": Chrome(
        "Debian リファレンス", "ja", "2.109", "2.124", "ホーム", "このページの内容",
        "このページは役に立ちましたか？ はい いいえ 問題を報告する",
        "著作権 青木 修 および Debian プロジェクト", "最終更新日",
    ),
    "zh-cn": Chrome(
        "Debian 参考手册", "zh-cn", "2.109", "2.124", "首页", "本页内容",
        "本页面对您有帮助吗？ 是 否 报告问题",
        "版权所有 青木修 与 Debian 项目", "最后更新",
    ),
}  # fmt: skip


@dataclass(frozen=True)
class Page:
    name: str
    title: str
    content: str  # the page's content as HTML, without the site's template


def rescraped_set(site: str, seed: int = 19) -> EvalSet:
    """200 pages of `site` crawled in the old template, then 120 of them again in the new one
    (a third of those with their content edited) mixed with 80 pages not crawled before (a
    smaller site: 5/7 of its pages first, the rest new)."""
    rng = random.Random(f"{seed}-{site}")
    chrome = CHROME[site]
    pages = [p for p in _pages(site) if len(units(visible_text(p.content))) >= 40]
    chosen = rng.sample(pages, min(len(pages), 280))
    first, new = chosen[: len(chosen) * 5 // 7], chosen[len(chosen) * 5 // 7 :]
    menu = [p.title for p in rng.sample(pages, 12)]  # the navigation, on every page
    stream = [(f"{p.name}@1", _old(p, chrome, menu), p.content, "first crawl") for p in first]
    later = []
    for page in rng.sample(first, min(len(first), 120)):
        content, tag = page.content, "re-scraped"
        if rng.random() < 1 / 3:
            content, tag = _edited(content, chrome, rng), "re-scraped, edited"
        later.append((f"{page.name}@2", _new(page, content, chrome, menu, rng), content, tag))
    later += [(f"{p.name}@2", _new(p, p.content, chrome, menu, rng), p.content, "new page")
              for p in new]  # fmt: skip
    rng.shuffle(later)
    stream += later
    return with_truth(
        f"re-scraped {site}",
        chrome.language,
        "re-scraped",
        [(item_id, html, tag) for item_id, html, _, tag in stream],
        truth_texts=[content for _, _, content, _ in stream],
    )


def _old(page: Page, chrome: Chrome, menu: list[str]) -> str:
    links = "".join(f'<li><a href="p{n}.html">{t}</a></li>' for n, t in enumerate(menu))
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{page.title} - '
        f"{chrome.site} {chrome.old_version}</title></head><body>"
        f'<div class="header"><a href="index.html">{chrome.site}</a> {chrome.old_version}</div>'
        f'<div class="navigation"><ul>{links}</ul></div>'
        f'<div class="content"><h1>{page.title}</h1>{page.content}</div>'
        f'<div class="footer"><p><a href="index.html">{chrome.home}</a></p>'
        f"<p>© 2023 {chrome.rights}. {chrome.site} {chrome.old_version}</p></div></body></html>"
    )


def _new(page: Page, content: str, chrome: Chrome, menu: list[str], rng: random.Random) -> str:
    links = "".join(f'<li><a href="/docs/{n}/">{t}</a></li>' for n, t in enumerate(menu))
    day = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return (
        f'<!DOCTYPE html><html lang="{chrome.language}"><head><meta charset="utf-8">'
        f"<title>{chrome.site} {chrome.new_version} | {page.title}</title></head><body>"
        f'<header class="site-header"><nav><a href="/">{chrome.home}</a> '
        f'<a href="/docs/">{chrome.site} {chrome.new_version}</a></nav></header>'
        f'<div class="layout"><aside class="sidebar"><h2>{chrome.contents}</h2><ul>{links}</ul>'
        f'</aside><main><nav class="breadcrumb">{chrome.site} / {page.title}</nav>'
        f"<article><h1>{page.title}</h1>{content}</article>"
        f'<div class="feedback">{chrome.helpful}</div></main></div>'
        f"<footer><p>© 2024 {chrome.rights}.</p><p>{chrome.site} {chrome.new_version} · "
        f"{chrome.updated} {day}</p></footer></body></html>"
    )


_VERSION = re.compile(r"\b\d+\.\d+(\.\d+)?\b")
_PARAGRAPH = re.compile(r"<p[ >].*?</p>", re.DOTALL)


def _edited(content: str, chrome: Chrome, rng: random.Random) -> str:
    """The content as the redesigned site shows it: version strings of the new release, and
    sometimes a paragraph cut."""
    edited = _VERSION.sub(chrome.new_version, content)
    paragraphs = _PARAGRAPH.findall(edited)
    if len(paragraphs) >= 6 and rng.random() < 0.5:
        edited = edited.replace(rng.choice(paragraphs), "", 1)
    return edited


def _pages(site: str) -> Iterator[Page]:
    if site == "postgresql":
        for name, html in corpora.postgres_pages():
            content = _between(html, "<hr /></div>", '<div class="navfooter">')
            yield Page(name, _title(html), content)
    elif site == "git":
        for name, html, _ in corpora.git_pages():
            content = _between(html, '<div id="content">', '<div id="footer')
            yield Page(name, _title(html), content)
    else:
        for chapter, html in corpora.reference_chapters(site):
            for n, part in enumerate(re.split(r'<div class="section">', html)[1:]):
                heading = re.search(r"<h[1-4][^>]*>(.*?)</h[1-4]>", part, re.DOTALL)
                title = visible_text(heading.group(1)) if heading else chapter
                yield Page(f"{chapter}-{n}", " ".join(title.split()), part)


def _title(html: str) -> str:
    found = re.search(r"<title>(.*?)</title>", html, re.DOTALL)
    return " ".join(visible_text(found.group(1)).split()) if found else ""


def _between(html: str, start: str, end: str) -> str:
    """What lies between the first `start` and the next `end` (the page's content)."""
    begin = html.find(start)
    begin = 0 if begin < 0 else begin + len(start)
    stop = html.find(end, begin)
    return html[begin : stop if stop >= 0 else len(html)]
