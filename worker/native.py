"""The optional native extension (native/, Rust: the package dedup-worker-native), each part the
twin of a numpy path that gives the same results: the fingerprints (worker/text/native.py) and
the bucket cache's search (worker/index/redis/native_cache.py). Installing it needs a Rust
toolchain (`pip install ./native`); without it the numpy paths run."""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType


@cache
def native_module() -> ModuleType | None:
    """The native extension's module (dedup_native), or None when it is not installed."""
    try:
        return importlib.import_module("dedup_native")
    except ImportError:
        return None
