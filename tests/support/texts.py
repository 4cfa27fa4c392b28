"""Hand-written texts for the classic SimHash experiment (not from any corpus)."""

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
