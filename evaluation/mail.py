"""E-mail as mail systems carry it, built around real text: whole RFC 822 messages (headers,
MIME parts, quoted-printable), plain or HTML in the templates mail programs and newsletter
services use, replies that quote, forwards, newsletters that repeat their template issue
after issue. The texts come from the news corpora; the structure is what varies."""

from __future__ import annotations

import hashlib
import random
import textwrap
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.policy import default as mail_policy
from email.utils import format_datetime
from html import escape

NAMES = (
    "Anna Keller",
    "Brian O'Neill",
    "Chen Wei",
    "Dana Ruiz",
    "Emeka Obi",
    "Fatima Zahra",
    "Greta Lind",
    "Hiro Tanaka",
    "Ines Duarte",
    "Jonas Berg",
    "Kavya Rao",
    "Liam Walsh",
    "Maria Rossi",
    "Nikolai Petrov",
    "Olga Nowak",
    "Pedro Alves",
    "Quinn Harper",
    "Rania Haddad",
    "Sven Olsen",
    "Tomas Novak",
)
DOMAINS = ("example.com", "mail.example.org", "corp.example.net", "news.example.com")

# Templates as newsletter and marketing services send them: tables, inline styles, font
# tags, &nbsp; spacers; {body} is the message's paragraphs.
TEMPLATES = {
    "table": (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><style>td{{font-family:Arial,'
        "Helvetica,sans-serif;font-size:14px;color:#333333}} .footer{{font-size:11px;color:"
        '#999999}}</style></head><body style="margin:0;padding:0;background:#f4f4f4"><table '
        'width="100%" cellpadding="0" cellspacing="0" border="0" bgcolor="#f4f4f4"><tr><td '
        'align="center"><table width="600" cellpadding="20" cellspacing="0" border="0" '
        'bgcolor="#ffffff"><tr><td><font face="Arial" size="2" color="#333333">{body}</font>'
        '</td></tr><tr><td class="footer">&nbsp;</td></tr></table></td></tr></table></body>'
        "</html>"
    ),
    "outlook": (
        '<html xmlns:o="urn:schemas-microsoft-com:office:office"><head><meta http-equiv='
        '"Content-Type" content="text/html; charset=utf-8"><!--[if gte mso 9]><xml><o:'
        "OfficeDocumentSettings><o:AllowPNG/></o:OfficeDocumentSettings></xml><![endif]-->"
        '<style>p.MsoNormal{{margin:0cm;font-size:11.0pt;font-family:"Calibri",sans-serif}}'
        '</style></head><body lang="EN-US" link="#0563C1"><div class="WordSection1">{body}'
        "</div></body></html>"
    ),
    "div": (
        '<html><body><div style="font-family: Georgia, serif; font-size: 15px; line-height: '
        '1.5; max-width: 640px; margin: auto">{body}</div></body></html>'
    ),
}


def html_body(template: str, paragraphs: list[str]) -> str:
    if template == "outlook":
        inner = "".join(
            f'<p class="MsoNormal">{escape(p)}<o:p></o:p></p><p class="MsoNormal">'
            "<o:p>&nbsp;</o:p></p>"
            for p in paragraphs
        )
    elif template == "table":
        inner = "<br>&nbsp;<br>".join(escape(p) for p in paragraphs)
    else:
        inner = "".join(f"<p>{escape(p)}</p>" for p in paragraphs)
    return TEMPLATES[template].format(body=inner)


@dataclass(frozen=True)
class Person:
    name: str
    address: str

    @property
    def header(self) -> str:
        return f"{self.name} <{self.address}>"


def people(rng: random.Random, count: int) -> list[Person]:
    out = []
    for name in rng.sample(NAMES, count):
        user = name.lower().replace(" ", ".").replace("'", "")
        out.append(Person(name, f"{user}@{rng.choice(DOMAINS)}"))
    return out


def paragraphs(text: str, words_each: int = 60) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + words_each]) for i in range(0, len(words), words_each)]


def signature(person: Person) -> str:
    return f"-- \n{person.name}\n{person.address}"


def message(
    sender: Person,
    to: Person,
    subject: str,
    when: datetime,
    text: str,
    *,
    html: str | None = None,
    alternative: bool = True,
) -> str:
    """A whole message: headers, then the text (quoted-printable where needed), or the HTML,
    or both as multipart/alternative."""
    msg = EmailMessage(policy=mail_policy)
    msg["From"] = sender.header
    msg["To"] = to.header
    msg["Subject"] = subject
    msg["Date"] = format_datetime(when)
    digest = hashlib.sha1(f"{sender.address} {when.isoformat()} {subject}".encode()).hexdigest()
    msg["Message-ID"] = f"<{digest[:20]}@{sender.address.split('@')[1]}>"
    msg["Received"] = (
        f"from mx.{sender.address.split('@')[1]} by mail.{to.address.split('@')[1]}"
        f"; {format_datetime(when + timedelta(seconds=3))}"
    )
    if html is None:
        msg.set_content(text, cte="quoted-printable")
    elif alternative:
        msg.set_content(text, cte="quoted-printable")
        msg.add_alternative(html, subtype="html", cte="quoted-printable")
    else:
        msg.set_content(html, subtype="html", cte="quoted-printable")
    if msg.is_multipart():
        msg.set_boundary(f"=_{digest[:24]}")  # (the library's default boundary is random)
    return msg.as_string()


def quoted(text: str, sender: Person, when: datetime) -> str:
    """The reply-below-quote block mail programs write."""
    lines = textwrap.wrap(text, 72) or [""]
    return f"On {when:%a, %d %b %Y at %H:%M}, {sender.header} wrote:\n" + "\n".join(
        "> " + line for line in lines
    )


def forwarded(text: str, subject: str, sender: Person, to: Person, when: datetime) -> str:
    return (
        "---------- Forwarded message ---------\n"
        f"From: {sender.header}\nDate: {when:%a, %b %d, %Y at %I:%M %p}\n"
        f"Subject: {subject}\nTo: {to.header}\n\n{text}"
    )


START = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
