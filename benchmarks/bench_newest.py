"""How many of a band bucket's newest postings to read (Bands.newest), measured side by side.

    python -m benchmarks.bench_newest --size 1000000 --newest 8

Fills the worker's Redis band index (bands:16x4) with `--size` template pages
(bench_growth's), then decides `--rounds` batches of `--batch` further pages by turns with
two indexes over that namespace: one reading each bucket's newest NEWEST postings (the
default), the other `--newest`. They share one cache of the articles read (band_known.py),
so that neither reads what the other has, and they take turns (the order swapped each round)
so that the machine's load falls on both alike. Printed for each: Redis's CPU per decision
and the part the deciding scripts took, decisions per second, and the postings read per
decision. Quality is the evaluation's to judge (evaluation.choices, evaluation.background).
Needs the evaluation's corpora and Redis (database 10, wiped).
"""

from __future__ import annotations

import argparse
import asyncio
import time

from benchmarks.bench_growth import CALL, script_us, supply
from benchmarks.bench_index import server_cpu_s
from benchmarks.redis_state import wipe
from worker import wiring
from worker.index.redis import RedisBandIndex
from worker.index.redis.client import connect
from worker.layout.bands import NEWEST, Bands
from worker.settings import Settings


async def measure(args: argparse.Namespace) -> None:
    client = connect(args.redis_url)
    await wipe(client)
    settings = Settings(expected_docs=args.size, layout="bands:16x4")
    options = wiring.index_options(settings)

    def index(newest: int) -> RedisBandIndex:
        bands = Bands(16, 4, newest=newest)
        on = connect(args.redis_url)  # (a connection of its own, as a worker's)
        return RedisBandIndex(on, "newest", bands, options, expected_docs=args.size)

    first, second = index(NEWEST), index(args.newest)
    second._known = first._known  # (one cache: the same articles are known to both)
    second._reads.known = first._known
    articles = supply("template", wiring.fingerprinter(settings), args.seed)
    started, filled = time.perf_counter(), 0
    while filled < args.size:
        chunk = [next(articles) for _ in range(min(2000, args.size - filled))]
        await first.check_and_insert(chunk)
        filled += len(chunk)
    print(f"{args.size:,} template pages indexed in {time.perf_counter() - started:.0f} s")
    # Per setting: Redis CPU (us), the scripts' (us), seconds, postings read, decisions.
    totals = {NEWEST: [0.0] * 5, args.newest: [0.0] * 5}
    turns = [(NEWEST, first), (args.newest, second)]
    for round_ in range(args.rounds):
        for newest, target in turns if round_ % 2 == 0 else turns[::-1]:
            batch = [next(articles) for _ in range(args.batch)]
            cpu, scripts = await server_cpu_s(client), await script_us(client)
            began = time.perf_counter()
            postings = 0
            for at in range(0, len(batch), CALL):
                verdicts = await target.check_and_insert(batch[at : at + CALL])
                postings += sum(v.candidates for v in verdicts)
            total = totals[newest]
            total[2] += time.perf_counter() - began
            total[0] += (await server_cpu_s(client) - cpu) * 1e6
            total[1] += await script_us(client) - scripts
            total[3] += postings
            total[4] += len(batch)
    print("  newest | Redis CPU us/decision | of it, deciding | decisions/s | postings read")
    for newest, (cpu_us, scripts_us, seconds, read, decided) in totals.items():
        print(
            f"  {newest:>6} | {cpu_us / decided:>21,.0f} | {scripts_us / decided:>15,.0f} | "
            f"{decided / seconds:>11,.0f} | {read / decided:>13.1f}"
        )
    await first.close()
    await second.close()
    await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="pages indexed first")
    parser.add_argument("--newest", type=int, default=8, help="the setting set beside NEWEST")
    parser.add_argument("--rounds", type=int, default=24, help="batches decided by each")
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--redis-url", default="redis://localhost:6379/10")
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
