"""What the shared index of one namespace does whatever its postings (RedisIndex: SimHash
tables; RedisBandIndex: bands): its layout record and epoch, a batch decided in its turn
(guard.py: chains and claims), deletions (forget.lua), the expiry sweep (expire.lua), and the
recovery when the index was emptied or rolled back under the worker. A subclass gives the
description of its layout and the calls that decide articles (read_buckets, run_checks)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import Callable, Sequence
from typing import Any

from worker.errors import IndexReset, IndexUnavailable, LayoutMismatch, OutOfTurn
from worker.index.base import IndexOptions, Op, Rule
from worker.index.redis import guard, scripts
from worker.index.redis.acked import ReplicaAcks
from worker.index.redis.band_known import KnownStats
from worker.index.redis.client import ERRORS, Client, translate
from worker.index.redis.format import EXACT_PER_HASH, group_bits
from worker.index.redis.guard import Chain
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.nearest import BucketRead
from worker.index.redis.scripts import Script
from worker.model import Forget, Owner, Probe, Verdict

log = logging.getLogger(__name__)


class NamespaceIndex:
    threshold: int  # (the subclass's: its layout's, or every bit with bands)
    rule: Rule
    # Scripts whose calls carry what the worker read before them: after a reset they are not
    # run again, their caller reads again.
    _read_before: frozenset[Script] = frozenset()

    def __init__(
        self,
        client: Client,
        namespace: str,
        options: IndexOptions,
        fingerprint_spec: str | None,
        on_reset: Callable[[str], None] | None,
        expected_docs: int,
        replicas_acked: int,
    ) -> None:
        self.client = client
        # (fixed when the namespace is made, and stored: lua/lib.lua, exact_key)
        self.exact_groups = group_bits(expected_docs, EXACT_PER_HASH)
        self.groups = group_bits(expected_docs)  # (of the band and short lines' buckets)
        self.namespace = namespace
        self.max_bucket_read = options.max_bucket_read
        self.retention_s = options.retention_s
        self.renew_on_match = options.renew_on_match
        self.redelivery_window_s = options.redelivery_window_s
        self.fingerprint_spec = fingerprint_spec
        self.on_reset = on_reset
        self.keys = NamespaceKeys(namespace)
        self.acks = ReplicaAcks(client, self.keys, replicas_acked)
        # The index's epoch as this worker knows it (None: not read yet), from its meta record:
        # a new one there means that the index was emptied and built again.
        self._epoch: str | None = None
        self._sending = asyncio.Lock()  # one batch reads and sends at a time, in turn
        # The calls sent since the last failure, numbered (guard.py); a batch started before
        # a failure is not sent after it (OutOfTurn), so that none overtakes a failed one.
        self._chain = Chain(self.keys.chain())

    @property
    def epoch(self) -> str | None:
        """The index's epoch as this worker last read it (None: not yet): the scripts' calls
        carry it."""
        return self._epoch

    @property
    def uses_bucket_cache(self) -> bool:
        return False

    @property
    def native_cache(self) -> bool:
        return False

    @property
    def cached_entries(self) -> int:
        """Bucket entries in this worker's copy of the index (0 without one)."""
        return 0

    @property
    def known_stats(self) -> KnownStats | None:
        """How the cache of the articles it read serves this worker (None without one)."""
        return None

    @property
    def description(self) -> dict[str, str]:
        """What the index stores about its layout and fingerprints; every worker on it must
        agree."""
        raise NotImplementedError

    async def ensure_layout(self) -> None:
        """Record this index's layout (and, for a new index, its epoch), or refuse if the
        namespace was built with another layout or other fingerprints."""
        wanted = self.description
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                for field, value in wanted.items():
                    pipe.hsetnx(self.keys.meta, field, value)
                pipe.hsetnx(self.keys.meta, "epoch", secrets.token_hex(8))
                pipe.hgetall(self.keys.meta)
                stored_raw = (await pipe.execute())[-1]
        except ERRORS as exc:
            raise translate(exc) from exc
        stored = {k.decode(): v.decode() for k, v in stored_raw.items()}
        epoch = stored.pop("epoch")
        stored.pop("front", None)  # (the expiry sweep's, kept where every search reads it)
        if self.fingerprint_spec is None:
            stored.pop("fingerprints", None)
        if stored.get("format") != wanted["format"]:
            raise LayoutMismatch(
                f"namespace {self.namespace!r} is stored in format {stored.get('format')!r}; "
                f"this worker reads and writes format {wanted['format']!r} only. Rebuild it: "
                f"`dedup-worker backfill HISTORY.jsonl` with DEDUP_NAMESPACE set to a new "
                "namespace (or after deleting the old one's keys, "
                f"dedup:{{{self.namespace}}}:*), then point the workers at it"
            )
        if stored != wanted:
            differ = "; ".join(
                f"{field} {stored.get(field)!r} there, {wanted.get(field)!r} here"
                for field in sorted(stored.keys() | wanted.keys())
                if stored.get(field) != wanted.get(field)
            )
            raise LayoutMismatch(
                f"namespace {self.namespace!r} was built with another layout or other "
                f"fingerprints than this worker's: {differ}; use the same threshold, layout "
                "and fingerprint settings as the workers that built it, or another "
                "DEDUP_NAMESPACE"
            )
        self._epoch = epoch

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Verdict]:
        """(Index.check_and_insert) A batch of articles alone, outside a stream."""
        return [v for v in await self._again(probes) if isinstance(v, Verdict)]

    async def forget(self, ids: Sequence[str]) -> list[bool]:
        """Remove articles from every table; True for each id that was in the index."""
        return [bool(v) for v in await self._again([Forget(i) for i in ids])]

    async def _again(self, ops: Sequence[Op]) -> list[Verdict | bool]:
        try:
            return await self.decide(ops)
        # (what was read came from the index before; a chain whose state Redis lost)
        except (IndexReset, ScriptsLoaded, OutOfTurn):
            return await self.decide(ops)

    async def decide(self, ops: Sequence[Op], owner: Owner | None = None) -> list[Verdict | bool]:
        """(Index.decide) A batch of articles goes out at once, while the batches before may
        still be running (_decide_ahead: the tables with their bucket cache); else, or with
        deletions, once those sent before have run, its steps one after another in its turn.
        One try: a failure is raised (IndexReset after taking in the index as it is now; OutOfTurn
        when a batch sent before failed after this one was started), and the caller tries
        the batches again in their order."""
        if not ops:
            return []
        chain = self._chain
        partitions = {op.position[0] for op in ops if op.position is not None}
        claims = guard.claims(owner, partitions, self.keys.claims)
        try:
            if all(isinstance(op, Probe) for op in ops):
                probes = [op for op in ops if isinstance(op, Probe)]
                ahead = await self._decide_ahead(probes, chain, claims)
                if ahead is not None:
                    await self.acks.wait()
                    return list(ahead)
            async with self._sending:
                self._in_turn(chain)
                await self._settled(chain)
                out: list[Verdict | bool] = []
                for run in _runs(ops):
                    if isinstance(run[0], Probe):
                        probes = [op for op in run if isinstance(op, Probe)]
                        reads = await self.read_buckets(probes)
                        out += await self.run_checks(probes, reads, claims)
                    else:
                        out += await self._forget(
                            [op for op in run if isinstance(op, Forget)], claims
                        )
                await self.acks.wait()
                return out
        except BaseException:
            if self._chain is chain:  # (the first failure of the chain starts a new one)
                self._chain = Chain(self.keys.chain())
            raise

    def _in_turn(self, chain: Chain) -> None:
        if chain is not self._chain:
            raise OutOfTurn(
                "a batch sent to the index before this one failed after this one was started; "
                "this one goes again after it"
            )

    async def read_buckets(self, probes: Sequence[Probe]) -> list[BucketRead | None]:
        """The first step of a check: what the worker reads before the script decides (None
        per probe: nothing)."""
        return [None] * len(probes)

    async def run_checks(
        self,
        probes: Sequence[Probe],
        reads: Sequence[BucketRead | None],
        claims: Sequence[tuple[str, int]] = (),
    ) -> list[Verdict]:
        """The second step: the script calls that decide and insert, given the reads."""
        raise NotImplementedError

    async def _decide_ahead(
        self, probes: Sequence[Probe], chain: Chain, claims: list[tuple[str, int]]
    ) -> list[Verdict] | None:
        """A batch of articles decided without waiting for the batches before (None: not
        here; decided in turn)."""
        return None

    async def _settled(self, chain: Chain) -> None:
        """Wait until the batches sent ahead have run (in turn after them)."""

    async def refresh(self) -> None:
        """Bring what the worker holds of the index up to it (nothing here)."""

    async def _reload(self) -> None:
        """Take in the index again after a reset (nothing held here)."""

    async def _forget(
        self, forgets: Sequence[Forget], claims: Sequence[tuple[str, int]]
    ) -> list[bool]:
        [reply] = await self._run(
            Script.FORGET,
            lambda epoch: [
                scripts.forget_call(
                    self.keys, epoch, guard.pack(None, claims), self.redelivery_window_s, forgets
                )
            ],
        )
        return [bool(r) for r in reply]

    async def expire(self, limit: int = 1000) -> int:
        """One step of the expiry sweep (lua/expire.lua): its front removes up to `limit`
        indexed articles that expired, oldest first; once it has caught up, its pass looks
        at scripts.PASS_RECORDS records for the rest. Returns how many it removed. Workers
        share the front and the pass's cursor, so steps taken by any of them advance the same
        sweep."""
        if not self.retention_s:
            return 0
        [(removed, _)] = await self._run(
            Script.EXPIRE,
            lambda epoch: [scripts.expire_call(self.keys, epoch, self.retention_s, limit)],
        )
        return int(removed)

    async def _run(self, script: Script, calls: Callable[[str], list[list[Any]]]) -> list[Any]:
        """Run the calls that `calls` builds for the index's epoch. When the scripts find the
        index emptied or built again since, take in the index as it is now (_recover); then
        run the calls again, except those of `_read_before`, whose reads were of the index
        before (IndexReset: their caller reads again)."""
        for again in (False, True):
            if self._epoch is None:
                await self.ensure_layout()  # the scripts read the table spec from it
            assert self._epoch is not None
            try:
                return await scripts.run(self.client, script, calls(self._epoch))
            except ERRORS as exc:
                error = translate(exc)
                if not isinstance(error, IndexReset):
                    raise error from exc
                self._report_reset("the index was emptied or built again (its epoch changed)")
                await self._recover()
                if again or script in self._read_before:
                    raise error from exc
        raise AssertionError("unreachable")

    async def _recover(self) -> None:
        """Take in the index as it is now: its layout record (written again if it is gone)
        and what the worker holds of it (_reload)."""
        self._epoch = None
        await self.ensure_layout()
        await self._reload()

    def _report_reset(self, why: str) -> None:
        log.warning(
            "index %r: %s; what it lost is no longer matched, and the worker goes on with what "
            "it holds now",
            self.namespace,
            why,
        )
        if self.on_reset is not None:
            self.on_reset(why)

    async def close(self) -> None:
        await self.acks.close()
        await self.client.aclose()


class ScriptsLoaded(IndexUnavailable):
    """Redis did not have the scripts (a restart, SCRIPT FLUSH): they were loaded, nothing of
    the batch ran, and it can be sent again at once."""


def _runs(ops: Sequence[Op]) -> list[list[Op]]:
    """The ops in runs of articles and of deletions, in order."""
    return [list(run) for _, run in itertools.groupby(ops, type)]
