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


def rescraped_set(site: str, seed: int = 19, themes: str = "classic") -> EvalSet:
    """200 pages of `site` crawled in the old template, then 120 of them again in the new one
    (a third of those with their content edited) mixed with 80 pages not crawled before (a
    smaller site: 5/7 of its pages first, the rest new). `themes`: the two templates, a key
    of THEMES."""
    old_page, new_page = THEMES[themes]
    rng = random.Random(f"{seed}-{site}")
    chrome = CHROME[site]
    chosen, menu = _crawled(site, rng)
    first, new = chosen[: len(chosen) * 5 // 7], chosen[len(chosen) * 5 // 7 :]
    stream = [(f"{p.name}@1", old_page(p, chrome, menu), p.content, "first crawl") for p in first]
    later = []
    for page in rng.sample(first, min(len(first), 120)):
        content, tag = page.content, "re-scraped"
        if rng.random() < 1 / 3:
            content, tag = _edited(content, chrome, rng), "re-scraped, edited"
        later.append((f"{page.name}@2", new_page(page, content, chrome, menu, rng), content, tag))
    later += [(f"{p.name}@2", new_page(p, p.content, chrome, menu, rng), p.content, "new page")
              for p in new]  # fmt: skip
    rng.shuffle(later)
    stream += later
    return with_truth(
        f"re-scraped {site}" + ("" if themes == "classic" else f", {themes}"),
        chrome.language,
        "re-scraped",
        [(item_id, html, tag) for item_id, html, _, tag in stream],
        truth_texts=[content for _, _, content, _ in stream],
    )


def _crawled(site: str, rng: random.Random) -> tuple[list[Page], list[str]]:
    """The pages the two crawls see (280 of the site's pages of 40 units or more), and the
    navigation on every page (12 pages' titles)."""
    pages = [p for p in _pages(site) if len(units(visible_text(p.content))) >= 40]
    chosen = rng.sample(pages, min(len(pages), 280))
    return chosen, [p.title for p in rng.sample(pages, 12)]


def navigation(site: str, seed: int = 19) -> list[str]:
    """The navigation rescraped_set(site, seed) puts on every page (background.py's pages of
    the site carry it too)."""
    return _crawled(site, random.Random(f"{seed}-{site}"))[1]


# Where each template puts a page's content.
_CONTENT = (
    ('<div class="content">', '<div class="footer">'),
    ("<article>", '<div class="feedback">'),
    ('<div class="body" role="main">', '<div class="sphinxsidebar"'),
    ('<article class="md-content__inner md-typeset">', '<aside class="md-source-file">'),
)


def content(html: str) -> str:
    """A page's content (with its title) without the site's template, whichever of THEMES
    it is in; what is in none, whole."""
    for start, end in _CONTENT:
        if start in html:
            return _between(html, start, end)
    return html


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


def _sphinx(page: Page, chrome: Chrome, menu: list[str]) -> str:
    """Sphinx's classic themes (alabaster): a related-links bar, the body, a sidebar with the
    contents and a search box, a footer."""
    links = "".join(f'<li class="toctree-l1"><a href="p{n}.html">{t}</a></li>'
                    for n, t in enumerate(menu))  # fmt: skip
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{page.title} &#8212; '
        f"{chrome.site} {chrome.old_version}</title></head><body>"
        '<div class="related" role="navigation" aria-label="related navigation"><h3>'
        f'Navigation</h3><ul><li class="right"><a href="genindex.html">index</a></li>'
        f'<li class="nav-item nav-item-0"><a href="index.html">{chrome.site} '
        f"{chrome.old_version}</a> &#187;</li></ul></div>"
        '<div class="document"><div class="documentwrapper"><div class="bodywrapper">'
        f'<div class="body" role="main"><h1>{page.title}</h1>{page.content}</div></div></div>'
        '<div class="sphinxsidebar" role="navigation" aria-label="main navigation">'
        f'<div class="sphinxsidebarwrapper"><h3>{chrome.contents}</h3><ul>{links}</ul>'
        '<div id="searchbox" role="search"><h3>Quick search</h3><form class="search">'
        '<input type="text" name="q"><input type="submit" value="Go"></form></div>'
        "</div></div></div>"
        f'<div class="footer">&#169; 2023 {chrome.rights}. Created using Sphinx 5.3.0.</div>'
        "</body></html>"
    )


def _mkdocs(page: Page, content: str, chrome: Chrome, menu: list[str], rng: random.Random) -> str:
    """MkDocs' Material theme: a header bar, a primary sidebar of the site's pages and a
    secondary one of the page's headings, the article with its last update, a footer."""
    links = "".join(f'<li class="md-nav__item"><a class="md-nav__link" href="/p{n}/">{t}</a>'
                    "</li>" for n, t in enumerate(menu))  # fmt: skip
    headings = "".join(
        f'<li class="md-nav__item"><a class="md-nav__link" href="#h{n}">{visible_text(h)}</a></li>'
        for n, h in enumerate(re.findall(r"<h[2-4][^>]*>(.*?)</h[2-4]>", content, re.DOTALL))
    )
    day = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    return (
        f'<!DOCTYPE html><html lang="{chrome.language}"><head><meta charset="utf-8">'
        f"<title>{page.title} - {chrome.site} {chrome.new_version}</title></head><body>"
        '<header class="md-header" data-md-component="header"><nav class="md-header__inner '
        f'md-grid" aria-label="Header"><a href="/" class="md-header__button md-logo">'
        f'{chrome.site}</a><div class="md-header__title">{chrome.site} {chrome.new_version}'
        "</div></nav></header>"
        '<div class="md-container"><main class="md-main"><div class="md-main__inner md-grid">'
        '<div class="md-sidebar md-sidebar--primary" data-md-component="sidebar">'
        '<div class="md-sidebar__scrollwrap"><nav class="md-nav md-nav--primary" '
        f'aria-label="Navigation"><label class="md-nav__title">{chrome.site}</label>'
        f'<ul class="md-nav__list">{links}</ul></nav></div></div>'
        '<div class="md-sidebar md-sidebar--secondary" data-md-component="sidebar">'
        '<div class="md-sidebar__scrollwrap"><nav class="md-nav md-nav--secondary" '
        f'aria-label="{chrome.contents}"><label class="md-nav__title">{chrome.contents}</label>'
        f'<ul class="md-nav__list">{headings}</ul></nav></div></div>'
        '<div class="md-content" data-md-component="content"><article class="md-content__'
        f'inner md-typeset"><h1>{page.title}</h1>{content}<aside class="md-source-file">'
        f"{chrome.updated}: {day}</aside></article></div></div></main>"
        '<footer class="md-footer"><div class="md-footer-meta md-typeset"><div class="'
        f'md-copyright">© 2024 {chrome.rights}. Made with Material for MkDocs</div></div>'
        "</footer></div></body></html>"
    )


# The two templates of a site, before and after its redesign.
THEMES = {"classic": (_old, _new), "sphinx to mkdocs": (_sphinx, _mkdocs)}

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
