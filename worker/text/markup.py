"""What a reader sees of a text: HTML (or XML-like markup) reduced to its visible text, and an
e-mail (a whole RFC 822 message) to its subject and its text parts. Everything downstream
(the content hash, the fingerprints, the length) is computed on that, so that markup,
templates, headers and transfer encodings do not count as content. Pure.

HTML goes through resiliparse (a C++ parser; `extract_plain_text`), which leaves out scripts,
styles, comments and hidden elements; with `main_content`, the elements that a site's template
repeats on every page are left out too: by their tag or ARIA role (nav, aside, header,
footer) and by the class or id names that themes give them (TEMPLATE_NAMES); and where the
markup names the page's content (one <article>, holding most of the page), what lies beside
it (a feedback box, comments, related pages) is left out too. Markup says that in any
language; resiliparse's own main-content heuristics count words by spaces and, on scripts
written without them, took a feedback box for a page's content (docs/quality.md compares the
choices).

Nesting is bounded: the work of the selectors grows with the depth of every element, and
the e-mail parser recurses per level (and checks every line against the boundary of every
level). A text nested deeper than real mail and pages ever are raises
TooDeep before that work is done.
"""

from __future__ import annotations

import email
import email.policy
import re
from email.message import EmailMessage
from typing import Self

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

from worker.model import Format

# Real pages nest up to ~25 elements (3,158 pages of documentation measured), real mail a few
# MIME levels (a forward per two or three). Main-content extraction of 1 MB of elements
# nested 255 deep takes about 0.6 s; an e-mail 32 levels deep about 1.6 s per MB of lines.
MAX_HTML_DEPTH = 256
MAX_MIME_DEPTH = 32
_DEEPER_THAN_LIMIT = " > ".join(["*"] * (MAX_HTML_DEPTH + 1))  # an element below the limit


class TooDeep(ValueError):
    """A text nested past a limit (MAX_HTML_DEPTH elements, MAX_MIME_DEPTH MIME parts)."""


# A tag: "<", an optional "/", a name, up to the next ">"; or a comment. Only the names of
# common HTML elements count: plain text writes "<file>" or "<name@example.org>" too.
_TAG = re.compile(r"<(?:/?([A-Za-z][A-Za-z0-9]*)\b[^<>]{0,500}|!--[^<>]{0,500})>")
_ELEMENT_NAMES = """a abbr article aside b blockquote body br button caption center code dd div
dl dt em figcaption figure font footer form h1 h2 h3 h4 h5 h6 head header hr html i iframe img
input li link main meta nav noscript ol p pre script section small span strong style sub sup
table tbody td tfoot th thead title tr tt u ul"""
_ELEMENTS = frozenset(_ELEMENT_NAMES.split())
_HTML_START = re.compile(r"\s*(<!doctype html|<html|<\?xml|<body|<head)", re.IGNORECASE)
_HEADER_LINE = re.compile(r"^[A-Za-z][A-Za-z0-9-]{0,76}:([ \t]|$)")
_MAIL_HEADERS = frozenset(
    {
        "from",
        "to",
        "subject",
        "date",
        "received",
        "return-path",
        "message-id",
        "mime-version",
        "content-type",
        "delivered-to",
        "reply-to",
        "cc",
        "sender",
        "in-reply-to",
        "references",
    }
)
_LOOK = 4096  # detection reads the start of a text only
# Class and id names (whole words) of a template's parts in common themes and documentation
# generators (DocBook's navheader and navfooter, Bootstrap's navbar, WordPress's site-header).
TEMPLATE_NAMES = (
    "header", "footer", "nav", "navbar", "navigation", "menu", "sidebar", "breadcrumb",
    "breadcrumbs", "navheader", "navfooter", "site-header", "site-footer", "site-nav",
)  # fmt: skip
_TEMPLATE = [
    "nav", "aside", "header", "footer",
    '[role="navigation"]', '[role="banner"]', '[role="contentinfo"]', '[role="complementary"]',
    *(f'[{attribute}~="{name}"]' for attribute in ("class", "id") for name in TEMPLATE_NAMES),
]  # fmt: skip
# The page's own content, where its markup names it: an <article> outside the template's parts
# and outside another article (an article within one is a comment or a quoted post).
_ARTICLE = f"article:not(:is(article, {', '.join(_TEMPLATE)}) article)"
# An article's start and end tags in the source.
_ARTICLE_TAG = re.compile(r"<(/?)article(?=[\s/>])[^<>]*>", re.IGNORECASE)
# The share of a page's text (without its template) that its article must hold to be read
# alone: an article that is a small part of a page (a teaser, a card) is not its content.
_ARTICLE_SHARE = 0.5


def detect(text: str) -> Format:
    """The text's format, from its start: an e-mail begins with a block of header lines
    (two or more of the usual ones), HTML with a document start or with tags making up a
    good part of it."""
    head = text[:_LOOK]
    if _is_email(head):
        return Format.EMAIL
    if "<" in head and (_HTML_START.match(head) or _tag_share(head) > 0.05):
        return Format.HTML
    return Format.TEXT


def _tag_share(head: str) -> float:
    tags = [
        m.group(0)
        for m in _TAG.finditer(head)
        if m.group(1) is None or m.group(1).lower() in _ELEMENTS
    ]
    return sum(map(len, tags)) / len(head) if len(tags) >= 4 else 0.0


def _is_email(head: str) -> bool:
    lines = head.split("\n", 60)
    if lines and lines[0].startswith("From "):  # an mbox envelope line
        lines = lines[1:]
    known = 0
    for line in lines:
        line = line.rstrip("\r")
        if not line:
            break
        if line[0] in " \t":  # a folded header continues
            continue
        if not _HEADER_LINE.match(line):
            return False
        known += line.split(":", 1)[0].lower() in _MAIL_HEADERS
    return known >= 2


def reader_text(
    text: str, format: Format | None = None, *, main_content: bool = True
) -> tuple[str, Format]:
    """What a reader sees of `text`, and its format (`format`, or detected when None)."""
    found = detect(text) if format is None else Format(format)
    if found is Format.HTML:
        return html_text(text, main_content=main_content), found
    if found is Format.EMAIL:
        return email_text(text), found
    return text, found


def html_text(html: str, *, main_content: bool = True) -> str:
    """The visible text of an HTML document (or a fragment, or XML); with `main_content`,
    without the elements of a site's template (navigation, headers, footers, sidebars), and
    where the markup names the page's one article, without what lies beside it; unless
    nothing is left without them."""
    tree = _parsed(html)
    if main_content:
        content: str = extract_plain_text(
            tree, alt_texts=False, list_bullets=False, skip_elements=_TEMPLATE
        )
        if content.strip():
            return _article_text(tree, html, content) or content
        # (a page whose wrapper is named as a template's part: its text says more than none)
    return extract_plain_text(tree, alt_texts=False, list_bullets=False)


def _parsed(html: str) -> HTMLTree:
    tree = HTMLTree.parse(html)
    # (a CSS selector: the parser's C code checks each element's ancestors, up to the limit)
    document = tree.document
    if document is not None and document.query_selector(_DEEPER_THAN_LIMIT) is not None:
        raise TooDeep(f"HTML elements nested more than {MAX_HTML_DEPTH} levels deep (the limit)")
    return tree


def _article_text(tree: HTMLTree, html: str, content: str) -> str | None:
    """The text of the page's one article, without the template's parts in it, where it
    holds most of `content` (the page's text without its template); else None. A page of
    several articles (a listing, a thread) names no one content."""
    document = tree.document
    if document is None or document.query_selector("article") is None:  # (most pages have none)
        return None
    found = document.query_selector_all(_ARTICLE)
    if len(found) != 1:
        return None
    # (as a list: a NodeList looks each item up anew, and walking one costs its square)
    every = document.query_selector_all("article").values()
    nth = [node == found[0] for node in every].index(True)
    # (parsed on its own: the extractor reads a whole tree, not an element)
    source = _enclosed(html, nth, len(every)) or found[0].html
    text: str = extract_plain_text(
        _parsed(source), alt_texts=False, list_bullets=False, skip_elements=_TEMPLATE
    )
    return text if _visible_length(text) >= _ARTICLE_SHARE * _visible_length(content) else None


def _enclosed(html: str, nth: int, count: int) -> str | None:
    """The source from the start tag of the `nth` of the page's `count` articles to its own
    end tag. A stray end tag in an article's content (content pasted into a template as
    written) makes the parser close the article there and put what follows beside it: the
    source tells what the author put in. None where the source's article tags are not the
    parsed elements' (one written in a comment or a script)."""
    tags = list(_ARTICLE_TAG.finditer(html))
    starts = [n for n, tag in enumerate(tags) if not tag.group(1)]
    if len(starts) != count:
        return None
    first = starts[nth]
    depth = 0
    for tag in tags[first:]:
        depth += -1 if tag.group(1) else 1
        if depth == 0:
            return html[tags[first].start() : tag.end()]
    return None


def _visible_length(text: str) -> int:
    """Characters other than white space: a length that means the same in every script."""
    return len("".join(text.split()))


def email_text(raw: str) -> str:
    """An e-mail's subject and the text of its parts (a text/plain part where it has both;
    HTML parts as all their visible text: a newsletter's header and footer are part of what it
    says), headers and attachments left out."""
    message = email.message_from_string(raw, policy=_BOUNDED)
    assert isinstance(message, EmailMessage)
    parts = []
    for part in _text_parts(message):
        body = _decoded(part)
        if part.get_content_subtype() == "html":
            body = html_text(body, main_content=False)
        parts.append(body)
    if not any(p.strip() for p in parts):  # broken MIME (a wrong boundary): the body as sent
        parts = [raw.replace("\r\n", "\n").partition("\n\n")[2]]
    return "\n".join(p for p in [str(message.get("subject", "")), *parts] if p)


def _text_parts(message: EmailMessage) -> list[EmailMessage]:
    """The text parts a reader is shown, in order: of alternatives, the plain one. (A loop
    rather than recursion: the nesting is bounded, but this way it cannot run out of stack.)"""
    found = []
    todo = [message]
    while todo:
        part = todo.pop()
        if part.is_multipart():
            children = [p for p in part.iter_parts() if isinstance(p, EmailMessage)]
            if part.get_content_subtype() == "alternative":
                plain = [p for p in children if p.get_content_type() == "text/plain"]
                children = plain[:1] or children[-1:]
            todo.extend(reversed(children))
        elif part.get_content_type() == "message/rfc822":
            inner = part.get_payload(0) if part.is_multipart() else None
            if isinstance(inner, EmailMessage):
                todo.append(inner)
        elif part.get_content_maintype() == "text" and not part.is_attachment():
            found.append(part)
    return found


class _BoundedMessage(EmailMessage):
    """A message that refuses parts nested past MAX_MIME_DEPTH: the parser attaches each
    part to its parent before it reads the part, so it stops there."""

    _depth = 0

    def attach(self, payload: Self) -> None:  # type: ignore[override]  # (as MIMEPart's)
        if self._depth >= MAX_MIME_DEPTH:
            raise TooDeep(f"MIME parts nested more than {MAX_MIME_DEPTH} levels deep (the limit)")
        payload._depth = self._depth + 1
        super().attach(payload)


_BOUNDED = email.policy.default.clone(message_factory=_BoundedMessage)


def _decoded(part: EmailMessage) -> str:
    try:
        content = part.get_content()
    except (LookupError, ValueError, AssertionError):  # an unknown or wrong charset
        content = None
    if isinstance(content, str):
        return content
    payload = part.get_payload(decode=True)
    return payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
