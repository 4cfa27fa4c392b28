"""The tables a benchmark prints with `--markdown`, as docs/performance.md shows them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *map(line, rows)])
