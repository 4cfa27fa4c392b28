"""Tests of the compiled kernels (worker.native) skip where they are not installed, unless
DEDUP_REQUIRE_COMPILED is set (CI sets it): then their absence fails."""

from __future__ import annotations

import os

import pytest

from worker.native import kernels


def require_compiled() -> None:
    if kernels() is not None:
        return
    why = "the compiled kernels are not installed (pip install ./native; needs a Rust toolchain)"
    if os.environ.get("DEDUP_REQUIRE_COMPILED"):
        pytest.fail(f"DEDUP_REQUIRE_COMPILED is set, but {why}")
    pytest.skip(why)
