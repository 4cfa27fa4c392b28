"""check_bands.lua's calls: the arguments every call of one index shares, made once, then each
article's (the script's header describes them)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import Any

from worker.index.base import Rule
from worker.index.redis.band_guesses import Batch
from worker.index.redis.format import pack_line, pack_position
from worker.index.redis.frame import Frame
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.scripts import ARTICLES_PER_CALL
from worker.layout.bands import Bands
from worker.model import Probe
from worker.text.simhash import to_bytes


class BandCalls:
    def __init__(
        self,
        keys: NamespaceKeys,
        bands: Bands,
        rule: Rule,
        *,
        retention_s: int,
        renew_on_match: bool,
        redelivery_window_s: int,
    ) -> None:
        self._frame = Frame(keys, retention_s, renew_on_match, redelivery_window_s)
        self._shared = [rule.duplicate_bins, bands.compared, bands.newest]

    def calls(
        self,
        probes: Sequence[Probe],
        epoch: str,
        guard: Callable[[], bytes] = bytes,
        guesses: Sequence[bytes] | None = None,
        read: Batch | None = None,
    ) -> list[list[Any]]:
        """One call per ARTICLES_PER_CALL probes, in order, for the index of `epoch`, each
        with the guard `guard` gives (guard.py); with the worker's guesses (band_guesses.py),
        made from what it read (`read`)."""
        out, token = [], secrets.token_hex(8).encode()
        for k, start in enumerate(range(0, len(probes), ARTICLES_PER_CALL)):
            mine = guesses[start : start + ARTICLES_PER_CALL] if guesses and read else []
            call = [*self._frame.head(epoch, guard()), *self._shared]
            if mine and mine[0] and read is not None:
                call += [str(read.since), read.head, token, str(k + 1)]
            else:
                call += ["", "", token, str(k + 1)]
            for i, probe in enumerate(probes[start : start + ARTICLES_PER_CALL]):
                call += [*_article(probe), mine[i] if mine else b""]
            out.append(call)
        return out


def _article(probe: Probe) -> list[Any]:
    fp = probe.fingerprint
    return [
        probe.id.encode("utf-8"),
        probe.content_hash,
        to_bytes(fp) if fp is not None else b"",
        probe.sketch if fp is not None and probe.sketch else b"",
        pack_position(probe.position),
        pack_line(probe.line) if probe.line else b"",
    ]
