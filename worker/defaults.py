"""The default of every setting that changes what the detector decides, in one place: Settings
(the worker and the CLI) and the library classes (Fingerprinter, MemoryIndex, RedisIndex) take
theirs from here, so that a library user and the worker decide alike. docs/quality.md has the
measurements behind them (`python -m evaluation.choices` reproduces the comparison)."""

THRESHOLD = 11  # bits of the search fingerprint within which earlier articles are candidates
MAX_THRESHOLD = 15
RELATED_THRESHOLD = 0  # above THRESHOLD: also alert on related articles; 0: off
SIMILARITY = 0.6  # the estimated Jaccard similarity a candidate must reach to be a duplicate
RELATED_SIMILARITY = 0.3  # ... and a related article (with RELATED_THRESHOLD)
MAX_CANDIDATES = 16  # the nearest candidates (by the search fingerprint) an article is compared to
SHINGLE_SIZE = 3  # units per shingle of the set sketch
MAX_SHINGLE_SIZE = 10
SKETCH_BINS = 64  # the set sketch: one-permutation MinHash of this many bins (worker.text.sketch)
SKETCH_BITS = 8  # ... keeping this many bits of each bin's minimum
CHINESE_UNITS = "characters"  # or "jieba" (worker.text.features.ChineseUnits)
MIN_WORDS = 10.0  # shorter texts get no fingerprint (a character unit counts as half)
LAYOUT = "auto"  # the planner's choice of index tables (worker.layout.planner)
EXPECTED_DOCS = 1_000_000  # the index size the automatic layout is planned for
# Past this many expected articles the automatic layout is AUTO_BANDS, not SimHash tables: the
# tables' work per decision and the worker's copy of them grow with the index (docs/scaling.md).
AUTO_BANDS_PAST = 1_000_000
AUTO_BANDS = "bands:16x4"
RECALL = 1.0  # below 1, the planner may choose sampled (inexact) tables
# How long the record of an article deleted or replaced stays, for a redelivery of the message
# that decided it (longer than any range of uncommitted offsets).
REDELIVERY_WINDOW_S = 86_400
MAX_BUCKET_READ = 1000  # newest entries read per bucket; a bucket over it is "hot"
IDF_CAP = 5.0  # the largest IDF weight: rarer units all weigh this much
DETECT_FORMAT = True  # a text without a format is read as what it looks like (HTML, e-mail)
MAIN_CONTENT = True  # HTML without its template: navigation, headers, footers, sidebars
RENEW_ON_MATCH = False  # an article matched by a later copy starts its retention again
