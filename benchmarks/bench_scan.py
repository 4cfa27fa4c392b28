"""The embedded `scan` against datasketch MinHashLSH on the same file.

A file of N articles (one JSON per line) is written once per kind and size: bench_growth's
documents (template: manual pages recombined from their blocks; news: sentences of the News
Articles corpus), one in ten followed later by a planted copy with a tenth of its blocks
replaced. Then, each in a process of its own, side by side:
- `dedup-worker scan FILE` with each layout named by `--layouts` (DEDUP_LAYOUT), its verdicts
  written to a file, as a user runs it;
- datasketch MinHashLSH (threshold 0.8, 128 permutations, unit 3-grams of the normalised
  text: evaluation/methods.py's baseline), each article queried then inserted.

Printed per run: seconds, articles/s, the process's peak memory, the planted copies found,
and each run's time against datasketch's. A run past `--budget` seconds is stopped and
printed as such. Needs the evaluation's corpora (scripts/setup.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

PLANTED_EVERY = 10  # one article in this many gets a copy, 1..1000 articles later


def write_file(path: Path, kind: str, size: int, seed: int) -> None:
    from benchmarks.bench_growth import Documents

    rng = random.Random(seed)
    documents = Documents(kind, rng)
    pending: list[tuple[int, str, list[str]]] = []  # (due, id, blocks)
    with path.open("w") as out:
        n = 0
        while n < size:
            if pending and pending[0][0] <= n:
                _, of, blocks = pending.pop(0)
                text = "\n".join(documents.copy(blocks, 0.1))
                out.write(json.dumps({"id": f"copy-of-{of}", "text": text}) + "\n")
            else:
                blocks = documents.next()
                out.write(json.dumps({"id": f"d{n}", "text": "\n".join(blocks)}) + "\n")
                if rng.randrange(PLANTED_EVERY) == 0:
                    pending.append((n + rng.randint(1, 1000), f"d{n}", blocks))
                    pending.sort()
            n += 1


def file_for(kind: str, size: int, folder: Path) -> Path:
    """The file, written by a process of its own: a child inherits its parent's peak memory
    (Linux's ru_maxrss), so this one stays small."""
    path = folder / f"scan-{kind}-{size}.jsonl"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".partial")
        me = [sys.executable, "-m", "benchmarks.bench_scan"]
        subprocess.run([*me, "--write", f"{kind},{size},{partial}"], check=True)
        partial.rename(path)
    return path


def run_datasketch(path: Path) -> None:
    """(in a process of its own) datasketch over the file; prints the copies it found."""
    from datasketch import MinHash, MinHashLSH

    from evaluation.methods import shingles

    threshold, perms = 0.8, 128
    lsh = MinHashLSH(threshold=threshold, num_perm=perms)
    template = MinHash(num_perm=perms)
    kept: dict[str, Any] = {}
    found = 0
    with path.open() as lines:
        for line in lines:
            item = json.loads(line)
            m = template.copy()
            m.update_batch(list(shingles(item["text"])))
            best = max((m.jaccard(kept[c]) for c in lsh.query(m)), default=0.0)
            found += best >= threshold and item["id"].startswith("copy-of-")
            if item["id"] not in kept:
                lsh.insert(item["id"], m)
                kept[item["id"]] = m
    print(json.dumps({"copies_found": found}))


def copies_found(verdicts: Path) -> int:
    found = 0
    with verdicts.open() as lines:
        for line in lines:
            v = json.loads(line)
            found += v["verdict"] == "duplicate" and str(v.get("id", "")).startswith("copy-of-")
    return found


def measure(
    command: list[str], env: dict[str, str], stdout: Path, budget: float
) -> dict[str, float | None]:
    """Runs `command`, its output to `stdout`: its seconds, CPU seconds and peak memory (MB);
    seconds None past the budget."""
    started = time.perf_counter()
    with stdout.open("w") as out:
        child = subprocess.Popen(command, env=env, stdout=out)
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - started > budget:
                child.kill()
                child.wait()
                return {"seconds": None}
            time.sleep(0.1)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{command} exited with {status}")
    return {
        "seconds": time.perf_counter() - started,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", default="template,news")
    parser.add_argument("--sizes", default="50000")
    parser.add_argument("--layouts", default="bands:16x4,auto", help="DEDUP_LAYOUT of each scan")
    parser.add_argument("--budget", type=float, default=3600.0, help="seconds per run")
    parser.add_argument(
        "--no-datasketch", action="store_true", help="only the scans (e.g. past its memory)"
    )
    parser.add_argument("--folder", type=Path, default=Path.home() / ".cache/dedup-worker/bench")
    parser.add_argument("--datasketch", type=Path, help=argparse.SUPPRESS)  # (the children)
    parser.add_argument("--write", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        kind, size, path = args.write.split(",")
        write_file(Path(path), kind, int(size), seed=int(size))
        return
    if args.datasketch:
        run_datasketch(args.datasketch)
        return
    print(
        "| kind | articles | run | seconds | articles/s | CPU s | peak MB | copies found | speed |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in args.kinds.split(","):
        for size in map(int, args.sizes.split(",")):
            path = file_for(kind, size, args.folder)
            planted = sum(1 for line in path.open() if '"id": "copy-of-' in line)
            me = [sys.executable, "-m", "benchmarks.bench_scan"]
            runs: list[tuple[str, list[str], dict[str, str]]] = []
            if not args.no_datasketch:
                runs.append(("datasketch MinHashLSH 0.8", [*me, "--datasketch", str(path)], {}))
            for layout in args.layouts.split(","):
                scan = [sys.executable, "-m", "worker", "scan", str(path)]
                runs.append((f"scan, layout {layout}", scan, {"DEDUP_LAYOUT": layout}))
            base = None
            for name, command, extra in runs:
                out = args.folder / f"out-{kind}-{size}.jsonl"
                figures = measure(command, {**os.environ, **extra}, out, args.budget)
                if figures["seconds"] is None:
                    print(f"| {kind} | {size:,} | {name} | over {args.budget:.0f} | | | | | |")
                    continue
                if name.startswith("datasketch"):
                    found = json.loads(out.read_text())["copies_found"]
                    base = figures["seconds"]
                else:
                    found = copies_found(out)
                ratio = f"{base / figures['seconds']:.2f}x datasketch's" if base else "1x"
                print(
                    f"| {kind} | {size:,} | {name} | {figures['seconds']:.1f} | "
                    f"{size / figures['seconds']:,.0f} | {figures['cpu_s']:.1f} | "
                    f"{figures['peak_mb']:,.0f} | {found}/{planted} | {ratio} |",
                    flush=True,
                )
                out.unlink()


if __name__ == "__main__":
    main()
