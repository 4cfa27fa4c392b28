"""The pictures of docs/quality.md: where the Hamming distances of duplicate and different pairs
fall, and precision and recall against the threshold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def distance_histograms(
    path: Path, duplicates: Mapping[str, Sequence[int]], different: Sequence[int], title: str
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5.5))
    bins = list(range(0, 50))
    for name, values in duplicates.items():
        ax.hist(values, bins=bins, histtype="step", linewidth=1.6, label=f"copy: {name}")
    ax.hist(different, bins=bins, color="grey", alpha=0.35, label="different articles")
    ax.set_xlabel("Hamming distance between the two 64-bit fingerprints")
    ax.set_ylabel("pairs")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def threshold_curve(
    path: Path,
    thresholds: Sequence[int],
    precision: Sequence[float],
    recall: Sequence[float],
    title: str,
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    ax.plot(thresholds, precision, marker="o", label="precision")
    ax.plot(thresholds, recall, marker="s", label="recall")
    ax.set_xlabel("threshold k (bits)")
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
