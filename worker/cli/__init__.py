"""The `dedup-worker` command line. Each command imports what it needs when it runs, so that
`--help` and the commands without services load neither Kafka's nor Redis's clients."""

from __future__ import annotations

import click

from worker.cli import files, index, stream


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="dedup-worker")
def main() -> None:
    """Near-duplicate detection for a stream of articles (settings: DEDUP_* variables)."""


for command in (
    stream.worker,
    stream.publish,
    stream.alerts,
    files.scan,
    files.backfill,
    files.idf,
    index.forget,
    index.status,
    index.plan,
):
    main.add_command(command)
