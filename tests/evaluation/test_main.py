"""`python -m evaluation`: the harness's command, run from a checkout (not shipped)."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest

from evaluation.__main__ import parse_settings
from tests.support import ROOT


def test_the_command_runs_from_a_checkout() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evaluation", "--help"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "--setting NAME=VALUE" in done.stdout


def testparse_settings_are_parsed_and_checked_as_the_environments_are() -> None:
    assert parse_settings(("threshold=9", "shingle_size=2")) == {"threshold": 9, "shingle_size": 2}
    with pytest.raises(click.BadParameter, match="expected NAME=VALUE"):
        parse_settings(("no_such_setting=1",))
