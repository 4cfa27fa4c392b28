"""A unit's count weighed otherwise than the worker's square root: linearly (each occurrence
counts), or as 1 + ln. The evaluation's choices measure them against the default."""

from __future__ import annotations

from typing import Any

import numpy as np

from worker.text.fingerprint import Fingerprinter

DAMPINGS = ("linear", "log")


class DampedFingerprinter(Fingerprinter):
    """A Fingerprinter whose search fingerprint weighs a unit's count by `tf` ("linear" or
    "log"); it always computes with numpy."""

    def __init__(self, *args: Any, tf: str, **options: Any) -> None:
        if tf not in DAMPINGS:
            raise ValueError(f"tf must be one of {DAMPINGS}, got {tf!r}")
        self.tf = tf
        super().__init__(*args, native=False, **options)

    def damped(self, counts: np.ndarray) -> np.ndarray:
        return counts.astype(np.float64) if self.tf == "linear" else 1 + np.log(counts)
