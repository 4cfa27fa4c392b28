"""The optional compiled kernels (native/, Rust: the package dedup-worker-native), each the twin
of a numpy path that gives the same results: the fingerprints (worker/text/compiled.py) and
the bucket cache's search (worker/index/redis/compiled_cache.py). Installing them needs a
Rust toolchain (`pip install ./native`); without them the numpy paths run."""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType


@cache
def kernels() -> ModuleType | None:
    """The compiled module, or None when it is not installed."""
    try:
        return importlib.import_module("dedup_native")
    except ImportError:
        return None
