"""Reading a text as a reader sees it: HTML to its visible text, an e-mail to its subject and
text parts; the format detected from the text's start, or given."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.support.texts import PAGE, mail
from worker.model import Format
from worker.text.markup import detect, email_text, html_text, reader_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PAGE, Format.HTML),
        ("<div><p>a fragment</p><p>of markup</p><br></div>", Format.HTML),
        ('<?xml version="1.0"?><doc><title>x</title></doc>', Format.HTML),
        (mail(plain="hello"), Format.EMAIL),
        ("From anna@example.com Mon Mar  2 08:00:00 2026\n" + mail(plain="hello"), Format.EMAIL),
        ("Received:\n from mx.example.com by mail.example.org\n" + mail(plain="hi"), Format.EMAIL),
        ("Plain text that mentions <b> once and a < b > c.", Format.TEXT),
        (  # a manual's placeholders and addresses are no markup
            "git checkout [-q] [-f] [-m] <branch>\ngit checkout --detach <commit> <path>\n"
            "git worktree add <path> <commit-ish>\nwrite to <anna@example.com> or <file>",
            Format.TEXT,
        ),
        ("<!-- a comment --><p>one</p><p>two</p><br>", Format.HTML),
        ("Subject: only one header-looking line\n\nand text", Format.TEXT),
        ("Note: this is prose.\nTo: whom it may concern, with a colon.\n\nBody.", Format.TEXT),
    ],
)
def test_the_format_is_detected_from_the_start(text: str, expected: Format) -> None:
    assert detect(text) is expected


def test_html_is_read_as_its_visible_text() -> None:
    everything = html_text(PAGE, main_content=False)
    assert "harbour bridge reopened" in everything
    assert "Traffic was light" in everything
    for hidden in ("tracking", "color", "a comment", "<p>"):
        assert hidden not in everything
    main = html_text(PAGE)
    assert "harbour bridge reopened" in main
    assert "Copyright 2026" not in main  # the footer is not the page's content


def test_a_generated_reference_page_keeps_its_member_list() -> None:
    """A generated API page: its navigation goes, the list of members (most of the page, and
    what tells it from its siblings) stays."""
    links = "".join(f"<li><a href='#m{i}'>com.example.Method{i}</a></li>" for i in range(80))
    page = (
        "<html><body><nav>Overview Package Class Use Tree Deprecated Index Help</nav>"
        "<main><h1>Uses of Class Widget</h1><p>Uses of Class java.util.Widget in the "
        f"standard library of this release.</p></main><ul>{links}</ul></body></html>"
    )
    assert "com.example.Method79" in html_text(page)
    assert "Deprecated" not in html_text(page)
    assert "Deprecated" in html_text(page, main_content=False)


CONTENT = (
    "<h1>2.1.8. パッケージ管理のトラブル</h1><p>内容が正確な正式文書を読むように心がけるべきです。"
    "<span class='menuchoice'>ファイル</span> を開きます。</p>"
)


def test_two_templates_of_one_page_read_alike_in_any_script() -> None:
    """A site redesigned: the old template names its parts with classes, the new one with
    HTML5 elements and ARIA roles. Either way, what is left is the page's content (Japanese,
    written without spaces, as English)."""
    menu = "".join(f"<li><a href='p{i}.html'>第{i}章 システム管理</a></li>" for i in range(12))
    old = (
        "<html><body><div class='header'>Debian リファレンス 2.109</div>"
        f"<div class='navigation'><ul>{menu}</ul></div><div class='content'>{CONTENT}</div>"
        "<div id='footer'>© 2023 著作権 青木 修</div></body></html>"
    )
    new = (
        "<html><body><header class='site-header'><a href='/'>ホーム</a> 2.124</header>"
        f"<div class='layout'><aside class='sidebar'><ul>{menu}</ul></aside><main>"
        "<div class='breadcrumb'>Debian / 2.1.8</div>"
        f"<article>{CONTENT}</article></main></div>"
        "<div role='contentinfo'>© 2024 著作権 青木 修 · 最終更新日 2024-02-09</div>"
        "</body></html>"
    )
    assert " ".join(html_text(old).split()) == " ".join(html_text(new).split())
    assert "ファイル を開きます" in html_text(new)  # (a class that only contains "menu")
    assert "システム管理" in html_text(new, main_content=False)


def test_a_page_whose_wrapper_is_named_as_a_template_part_is_read_whole() -> None:
    page = "<html><body><div class='menu'><p>Everything on this page.</p></div></body></html>"
    assert "Everything on this page." in html_text(page)
    assert html_text(PAGE) != html_text(PAGE, main_content=False)  # an article page: its content


ARTICLE = (
    "<h1>9.6.1. 硬盘空间使用情况</h1><p>硬盘空间的使用情况可以通过 mount、coreutils 和 xdu "
    "软件包提供的程序来评估。</p><p>df(1) 报告文件系统使用的硬盘空间。</p>"
)


def article_page(article: str, beside: str = "") -> str:
    return (
        "<html><body><header><a href='/'>首页</a></header><main>"
        f"<article>{article}</article>{beside}</main><footer>© 2024</footer></body></html>"
    )


def test_a_page_whose_markup_names_its_article_is_read_as_that_article() -> None:
    """What a page shows beside its one article (a feedback box, comments) is no more its
    content than its navigation: the same content reads alike with and without it."""
    feedback = "<div class='feedback'>本页面对您有帮助吗？ 是 否 报告问题</div>"
    plain = html_text(article_page(ARTICLE))
    assert " ".join(html_text(article_page(ARTICLE, feedback)).split()) == " ".join(plain.split())
    assert "有帮助" in html_text(article_page(ARTICLE, feedback), main_content=False)
    comments = "<section><h2>Comments</h2><p>First!</p></section>"
    assert "First!" not in html_text(article_page(ARTICLE, comments))
    quoted = "<article><p>A comment in the article.</p></article>"  # (not an article of its own)
    assert "A comment in the article." in html_text(article_page(ARTICLE + quoted, feedback))


def test_a_page_of_several_articles_or_a_small_one_is_read_whole() -> None:
    listing = article_page(ARTICLE, "<article><p>Another story entirely.</p></article>")
    assert "Another story entirely." in html_text(listing)
    body = "<p>" + "The page's own text, outside any article. " * 10 + "</p>"
    teaser = article_page("<p>A teaser.</p>", body)
    assert "outside any article" in html_text(teaser)
    card = "<aside><article>A card.</article></aside><main>"  # (in a template's part)
    carded = article_page(ARTICLE, "<p>有帮助</p>").replace("<main>", card)
    assert "有帮助" not in html_text(carded)


def test_an_article_closed_early_by_a_stray_end_tag_keeps_what_its_tags_enclose() -> None:
    """Content pasted into a template as written may close an element it never opened: the
    parser then ends the article there. What lies between its tags is still its content."""
    pasted = ARTICLE + "</div><p>脚注：du(8) 的输出。</p>"
    page = f"<html><body><main><div class='content'><article>{pasted}</article></div>"
    page += "<div class='feedback'>本页面对您有帮助吗？</div></main></body></html>"
    text = html_text(page)
    assert "脚注" in text
    assert "有帮助" not in text
    scripted = page.replace("<main>", "<main><script>var a = '<article>';</script>")
    assert "硬盘空间" in html_text(scripted)  # (tags in a script: the parsed article is read)


def test_an_email_is_read_as_its_subject_and_text() -> None:
    plain = email_text(mail(plain="See you at noon = soon, caf\u00e9."))
    assert " ".join(plain.split()) == "Bridge news See you at noon = soon, caf\u00e9."
    assert "Anna" not in plain  # headers other than the subject are left out
    both = email_text(mail(plain="the plain part", html="<p>the <b>html</b> part</p>"))
    assert "the plain part" in both
    assert "html part" not in both  # of alternatives, the plain one
    only_html = email_text(mail(html="<table><tr><td>the <b>html</b> part</td></tr></table>"))
    assert " ".join(only_html.split()) == "Bridge news the html part"
    with_attachment = email_text(mail(plain="body", attachment="secret bytes"))
    assert "secret" not in with_attachment
    assert "body" in with_attachment
    base64 = email_text(mail(plain="encoded body", cte="base64"))
    assert "encoded body" in base64


def test_the_same_text_reads_alike_in_every_format() -> None:
    text = "The harbour bridge reopened on Monday after six months of repairs."
    as_html = f"<html><body><p>{text}</p></body></html>"
    assert reader_text(text) == (text, Format.TEXT)
    assert reader_text(as_html)[0].strip() == text
    assert reader_text(as_html)[1] is Format.HTML
    assert reader_text(as_html, Format.TEXT) == (as_html, Format.TEXT)  # given, not detected
    assert text in reader_text(mail(plain=text))[0]


def nested_parts(levels: int) -> str:
    """An e-mail whose text part sits `levels` MIME levels below the message."""
    head = "From: a@example.com\nTo: b@example.org\nSubject: deep\nMIME-Version: 1.0\n"
    opens = "".join(
        f'Content-Type: multipart/mixed; boundary="b{i}"\n\n--b{i}\n' for i in range(levels)
    )
    closes = "".join(f"\n--b{i}--\n" for i in reversed(range(levels)))
    return head + opens + "Content-Type: text/plain\n\nhello\n" + closes


def nested_messages(levels: int) -> str:
    """An e-mail forwarded as an attachment (message/rfc822) `levels` times over."""
    forward = "From: a@example.com\nTo: b@example.org\nContent-Type: message/rfc822\n\n"
    return "Subject: deep\n" + forward * levels + "From: a@example.com\n\nhello\n"


def nested_html(levels: int, open_tags: str = "<div>") -> str:
    return "<html><body>" + open_tags * levels + "the story " * 20


@pytest.mark.parametrize("build", [nested_parts, nested_messages], ids=["multipart", "rfc822"])
def test_mail_nested_past_the_limit_is_too_deep(build: Callable[[int], str]) -> None:
    from worker.text.markup import MAX_MIME_DEPTH

    assert email_text(build(MAX_MIME_DEPTH)).split() == ["deep", "hello"]
    with pytest.raises(ValueError, match=f"nested more than {MAX_MIME_DEPTH} levels"):
        email_text(build(MAX_MIME_DEPTH + 1))


@pytest.mark.parametrize("build", [nested_parts, nested_messages], ids=["multipart", "rfc822"])
def test_mail_nested_500_levels_is_too_deep_not_a_recursion_error(
    build: Callable[[int], str],
) -> None:
    with pytest.raises(ValueError, match="nested more than"):
        email_text(build(500))


@pytest.mark.parametrize(
    ("tags", "elements"),  # (a table's rows are in a <tbody> the parser adds)
    [("<div>", 1), ("<table><tr><td>", 4), ("<ul><li>", 2), ("<span>", 1)],
)
def test_html_nested_past_the_limit_is_too_deep(tags: str, elements: int) -> None:
    from worker.text.markup import MAX_HTML_DEPTH

    levels = (MAX_HTML_DEPTH - 2) // elements  # (below <html> and <body>)
    assert "the story" in html_text(nested_html(levels, tags))
    with pytest.raises(ValueError, match=f"nested more than {MAX_HTML_DEPTH} levels"):
        html_text(nested_html(levels + 1, tags))


def test_16000_nested_divs_are_too_deep_at_once() -> None:
    # (main-content extraction took seconds on these, and grows faster than their square)
    with pytest.raises(ValueError, match="nested more than"):
        html_text(nested_html(16_000))
