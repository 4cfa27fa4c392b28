"""Hand-written texts the tests share (not from any corpus): the classic SimHash experiment's,
random texts of every script, a news page and an e-mail."""

from __future__ import annotations

import random
import string
from email.message import EmailMessage

PRODUCT_PAGE = """
Trailhead 40 Travel Backpack in Slate Grey. Built for long weekends and short business trips,
the Trailhead 40 carries everything you need without the bulk of a rolling suitcase. The main
compartment opens flat like a clamshell, so packing cubes slide in and out without a fight, and
the padded laptop sleeve holds machines up to sixteen inches behind its own zip. Two quick access
pockets on the front keep a passport, a phone and a charging cable within reach at the security
line. The shell is woven from recycled nylon with a water resistant coating, and the base is
reinforced where bags usually wear through first. Every zip is lockable and the shoulder straps
tuck away behind a panel when you check the bag at the gate. Capacity is forty litres, which
meets the carry on limits of most airlines, and the empty weight is just one point four
kilograms. The hip belt is removable, the sternum strap slides to fit, and the back panel is
ventilated for warm days on foot. Inside you will find a mesh divider, a key clip, a bottle
pocket that holds a full litre and a hidden pocket for cards and cash. We design and test every
bag in our workshop in Portland, where each one is inspected by hand before it leaves. Orders
placed before two in the afternoon ship the same day, and delivery is free on orders over fifty
dollars. If the bag does not suit you, return it within sixty days for a full refund, no
questions asked. Every Trailhead is covered by our lifetime warranty against defects in
materials and workmanship, and our repair service will fix wear and tear at cost. Customers
tell us the Trailhead 40 has replaced both their gym bag and their suitcase, and that the
clamshell opening is the feature they would never give up. Choose from Slate Grey, Forest
Green, Desert Sand and Midnight Blue, each with matching zip pulls and a reflective strip for
walking home after dark. Pair it with our packing cube set or the compact toiletry case to
complete your kit, and save ten percent when you buy them together today.
"""

RECIPE = """
Slow Roasted Tomato Soup. This soup starts with a tray of ripe tomatoes roasted low and slow
until their edges caramelise and their juices turn sweet and thick. Halve two kilograms of plum
tomatoes, lay them cut side up on a large tray, and scatter over six cloves of unpeeled garlic,
two quartered red onions and a few sprigs of thyme. Drizzle everything with olive oil, season
well with salt and black pepper, and roast at one hundred and sixty degrees for about ninety
minutes, turning the tray once halfway through. When the tomatoes have slumped and browned at
the edges, squeeze the soft garlic from its skins and tip the whole tray, juices and all, into a
large pot. Add a litre of vegetable stock and a teaspoon of smoked paprika, bring it to a gentle
simmer and let it bubble for ten minutes so the flavours come together. Blend the soup until it
is completely smooth, then taste it and adjust the seasoning with a little more salt, a pinch of
sugar if the tomatoes were sharp, or a splash of red wine vinegar if they were very sweet. For a
richer bowl, stir in a small pot of double cream just before serving, or swirl a spoonful of
yoghurt on top of each portion instead. Tear a handful of fresh basil leaves over the soup and
finish with a thread of good olive oil. Serve it with thick slices of toasted sourdough rubbed
with a cut garlic clove, or with a grilled cheese sandwich for dipping on a cold evening. The
soup keeps well in the fridge for four days and freezes beautifully for up to three months, so
it is worth making a double batch while tomatoes are cheap at the end of summer. Children tend
to like it best without the paprika, and a few croutons fried in butter make it feel like a
treat. Leftover roasted tomatoes can also be stirred through pasta with a little parmesan for a
quick supper the next day.
"""

# A sentence inserted into PRODUCT_PAGE (in place of "complete your kit,"): a promotional edit.
PROMOTION = (
    "complete your kit. Sign up to our newsletter today and get free shipping on your first order,"
)


def random_texts(alphabet: str, count: int, seed: int) -> list[str]:
    """`count` texts of 0-300 characters drawn from `alphabet`."""
    rng = random.Random(seed)
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 300))) for _ in range(count)
    ]


# Alphabets for random texts: ASCII (letters, digits, punctuation, whitespace, controls), and
# that with the scripts written without spaces, wide forms and invisible characters.
LATIN = string.printable + "\x00\x07\x1f"  # letters, digits, punctuation, whitespace
MIXED = (
    LATIN + "中文字词国家新闻报道，。、《》“”ＡＢＣ１２３éüßǰﬁ²😀\u200b\u00ad\u3000\u2028"
    "\U00020000\U0002a6d6ひらがなカタカナ한국어"
)


# A text in each script, its units, and its length in words (a character unit counts half).
SCRIPTS = {
    "japanese": ("東京でお花見をしました", list("東京でお花見をしました"), 5.5),
    "thai": ("ภาษาไทย", list("ภาษาไทย"), 3.5),
    "lao": ("ພາສາລາວ", list("ພາສາລາວ"), 3.5),
    "khmer": ("ភាសាខ្មែរ", list("ភាសាខ្មែរ"), 4.5),
    "myanmar": ("မြန်မာစာ", list("မြန်မာစာ"), 4.0),
    "tibetan": ("བོད་ཡིག", list("བོདཡིག"), 3.0),  # (the tsheg separates syllables)
    "korean": ("한국어 문장입니다 여기", ["한국어", "문장입니다", "여기"], 3),
    "russian": ("русский текст здесь", ["русский", "текст", "здесь"], 3),
    "mixed": ("the iPhone 手机很好 sold", ["the", "iphone", "手", "机", "很", "好", "sold"], 5.0),
}


# A news page: a navigation bar, a style, a script, a comment and a footer around one article.
PAGE = """<!DOCTYPE html><html><head><title>Title</title><style>p {color: red}</style>
<script>var tracking = 'hidden';</script></head><body>
<nav><a href="/">Home</a> <a href="/docs">Docs</a> <a href="/blog">Blog</a></nav>
<article><h1>Harbour bridge reopens</h1><p>The harbour bridge reopened on Monday after six
months of repairs, the city said.</p><p>Traffic was light in the morning.</p></article>
<!-- a comment --><footer>Copyright 2026 Example News</footer></body></html>"""


def mail(**parts: str) -> str:
    msg = EmailMessage()
    msg["From"] = "Anna <anna@example.com>"
    msg["To"] = "bo@example.org"
    msg["Subject"] = "Bridge news"
    if "plain" in parts:
        msg.set_content(parts["plain"], cte=parts.get("cte", "quoted-printable"))
    if "html" in parts:
        if "plain" in parts:
            msg.add_alternative(parts["html"], subtype="html")
        else:
            msg.set_content(parts["html"], subtype="html")
    if "attachment" in parts:
        msg.add_attachment(
            parts["attachment"].encode(),
            maintype="application",
            subtype="octet-stream",
            filename="a.bin",
        )
    return msg.as_string()
