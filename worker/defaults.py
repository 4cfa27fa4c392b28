"""The default of every setting that changes what the detector decides, in one place: Settings
(the worker and the CLI) and the library classes (Fingerprinter, MemoryIndex, RedisIndex) take
theirs from here, so that a library user and the worker decide alike. docs/quality.md has the
measurements behind them."""

THRESHOLD = 8  # bits of the search fingerprint: closer articles are near-duplicates
MAX_THRESHOLD = 15
RELATED_THRESHOLD = 0  # above THRESHOLD: also alert on related articles; 0: off
VERIFY_THRESHOLD = 14  # bits of the verification fingerprint a candidate must be within
SHINGLE_SIZE = 3  # units per shingle of the verification fingerprint
MAX_SHINGLE_SIZE = 10
CHINESE_UNITS = "characters"  # or "jieba" (worker.text.features.ChineseUnits)
MIN_WORDS = 20.0  # shorter texts get exact matching only (a Han character counts as half)
LAYOUT = "auto"  # the planner's choice of index tables (worker.layout.planner)
EXPECTED_DOCS = 1_000_000  # the index size the automatic layout is planned for
RECALL = 1.0  # below 1, the planner may choose sampled (inexact) tables
MAX_BUCKET_READ = 1000  # newest entries read per bucket; a bucket over it is "hot"
IDF_CAP = 5.0  # the largest IDF weight: rarer units all weigh this much
DETECT_FORMAT = True  # a text without a format is read as what it looks like (HTML, e-mail)
MAIN_CONTENT = True  # HTML without what looks like navigation, headers and footers
