"""`dedup-worker evaluate`: the evaluation harness, which lives in the repository's
evaluation/ folder (it needs the corpora and the peers of the `eval` extra), not in the
package."""

from __future__ import annotations

from pathlib import Path

import click

from worker import defaults
from worker.cli.common import clean_errors


@click.command()
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("docs/quality"),
    show_default=True,
    help="Folder for results.md and the pictures.",
)
@click.option(
    "--threshold",
    type=int,
    default=defaults.THRESHOLD,
    show_default=True,
    help="Threshold of this project's detector.",
)
@click.option(
    "--originals",
    type=int,
    default=300,
    show_default=True,
    help="Originals per edited set (as many distractors).",
)
@click.option(
    "--language",
    "languages",
    multiple=True,
    type=click.Choice(["en", "zh"]),
    default=("en", "zh"),
    show_default=True,
)
@click.option(
    "--seed",
    type=int,
    default=2026,
    show_default=True,
    help="Draws the edited sets (another seed: another sample of articles and edits).",
)
def evaluate(
    out: Path, threshold: int, originals: int, languages: tuple[str, ...], seed: int
) -> None:
    """Measure detection quality on real news (English and Chinese), edited and natural
    near-duplicates, beside datasketch MinHashLSH and the simhash library (from a checkout
    of the repository, after scripts/setup.sh)."""
    try:
        from evaluation.run import evaluate as run_evaluation
    except ImportError as exc:
        raise click.ClickException(
            f"evaluate runs from a checkout of the repository ({exc}): run scripts/setup.sh "
            "there, then .venv/bin/dedup-worker evaluate"
        ) from exc

    with clean_errors():
        run_evaluation(
            out,
            threshold,
            originals,
            originals,
            languages,
            log=lambda line: click.echo(line, err=True),
            seed=seed,
        )
    click.echo(f"wrote {out / 'results.md'}", err=True)
