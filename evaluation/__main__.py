"""`python -m evaluation`: detection quality on the development sets, from a checkout of the
repository (the harness needs the corpora and the peers of the `eval` extra, which the package
does not ship)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from worker.cli.common import clean_errors
from worker.settings import ENV, Settings


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("docs/quality"),
    show_default=True,
    help="Folder for results.md and the pictures.",
)
@click.option(
    "--setting",
    "settings",
    multiple=True,
    metavar="NAME=VALUE",
    help="Change a setting of this project's detector (e.g. threshold=10); repeat.",
)
@click.option(
    "--only",
    multiple=True,
    metavar="SET",
    help="Only the development sets whose names start with SET; repeat.",
)
@click.option(
    "--originals",
    type=int,
    default=300,
    show_default=True,
    help="Originals per edited news set (as many distractors).",
)
@click.option(
    "--seed",
    type=int,
    default=2026,
    show_default=True,
    help="Draws the edited news sets (another seed: other articles and edits).",
)
def evaluate(
    out: Path, settings: tuple[str, ...], only: tuple[str, ...], originals: int, seed: int
) -> None:
    """Measure detection quality on the development sets (news, mail, newsletters, HTML
    sites, legal text, manuals in several languages, short texts) beside datasketch
    MinHashLSH, and on edited news beside the simhash library too (from a checkout of the
    repository, after scripts/setup.sh)."""
    from evaluation.run import evaluate as run_evaluation

    with clean_errors():
        changes = parse_settings(settings)
        run_evaluation(
            out,
            changes,
            originals,
            originals,
            log=lambda line: click.echo(line, err=True),
            seed=seed,
            only=only,
        )
    click.echo(f"wrote {out / 'results.md'}", err=True)


def parse_settings(pairs: tuple[str, ...]) -> dict[str, Any]:
    """NAME=VALUE pairs as setting values, parsed and checked as the environment's are."""
    raw: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in ENV:
            raise click.BadParameter(
                f"{pair!r}: expected NAME=VALUE with NAME one of {sorted(ENV)}",
                param_hint="--setting",
            )
        raw[name] = value
    parsed = Settings.from_env({ENV[name]: value for name, value in raw.items()})
    return {name: getattr(parsed, name) for name in raw}


if __name__ == "__main__":
    evaluate()
