"""Tests of the native extension (worker.native) skip where it is not installed, unless
DEDUP_REQUIRE_NATIVE is set (CI sets it): then its absence fails."""

from __future__ import annotations

import os

import pytest

from worker.native import native_module


def require_native() -> None:
    if native_module() is not None:
        return
    why = "the native extension is not installed (pip install ./native; needs a Rust toolchain)"
    if os.environ.get("DEDUP_REQUIRE_NATIVE"):
        pytest.fail(f"DEDUP_REQUIRE_NATIVE is set, but {why}")
    pytest.skip(why)
