"""The public API: `worker.__all__` is complete and every name in it resolves, and importing
the package loads none of the heavy dependencies until a name is used."""

from __future__ import annotations

import inspect
import subprocess
import sys

import worker
from worker import errors


def test_every_exported_name_resolves_to_its_home() -> None:
    for name in worker.__all__:
        value = getattr(worker, name)
        assert getattr(value, "__name__", name) == name
    assert sorted(worker.__all__) == worker.__all__
    assert set(dir(worker)) == {*worker.__all__, "__version__"}


def test_every_error_is_exported() -> None:
    raised = {
        name
        for name, value in inspect.getmembers(errors, inspect.isclass)
        if issubclass(value, errors.DedupError)
    }
    assert raised <= set(worker.__all__)


def test_the_library_classes_are_exported() -> None:
    assert {"Fingerprinter", "MemoryIndex", "RedisIndex", "Settings", "Verdict", "Probe"} <= set(
        worker.__all__
    )


def test_importing_the_package_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, worker, worker.cli; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'numpy', 'redis', 'faust', 'aiokafka', 'aiohttp', 'xxhash'}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"


def test_the_version_is_the_distributions() -> None:
    from importlib.metadata import version

    assert worker.__version__ == version("dedup-worker")
