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


async def test_a_library_user_needs_only_the_top_level_names() -> None:
    story = " ".join(f"word{i % 97} term{i % 13}" for i in range(150))
    copy = story.replace("word5 ", "changed ", 1)
    fingerprinter, index = worker.Fingerprinter(), worker.MemoryIndex()
    probes = [
        worker.Probe(article_id, fp.content_hash, fp.search, fp.sketch, (0, offset))
        for offset, (article_id, fp) in enumerate(
            zip(["a", "b"], fingerprinter.many([story, copy]), strict=True)
        )
    ]
    first, second = await index.decide(probes, worker.Owner("group/topic", 1))
    assert isinstance(first, worker.Verdict)
    assert isinstance(second, worker.Verdict)
    assert (first.kind, second.kind, second.duplicate_of) == (
        worker.Kind.UNIQUE,
        worker.Kind.NEAR,
        "a",
    )
    assert await index.decide([worker.Forget("a", (0, 2))]) == [True]


def test_the_model_loads_nothing_beyond_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules); import worker.model; "
        "print(sorted({m.split('.')[0] for m in set(sys.modules) - before} - "
        "set(sys.stdlib_module_names) - {'worker'}))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"


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
