"""Liveness and readiness over HTTP, beside the metrics: GET /metrics, /healthz, /readyz."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiokafka import AIOKafkaClient
from prometheus_client import generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from worker import wiring
from worker.pipeline.outputs import iso_time
from worker.settings import Settings
from worker.stream.kafka import client_options
from worker.stream.metrics import Metrics

log = logging.getLogger(__name__)
Check = Callable[[], Awaitable[object]]
CHECK_TIMEOUT_S = 2.0


class HealthServer:
    """GET /metrics, /healthz (the process answers) and /readyz (every check passes)."""

    def __init__(self, metrics: Metrics, checks: dict[str, Check], port: int) -> None:
        self.metrics, self.checks, self.port = metrics, checks, port
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "0.0.0.0", self.port).start()
        log.info("metrics and health on http://0.0.0.0:%d/metrics /healthz /readyz", self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _metrics(self, _: web.Request) -> web.Response:
        body = generate_latest(self.metrics.registry)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _healthz(self, _: web.Request) -> web.Response:
        return web.json_response({"status": "ok"})

    async def _readyz(self, _: web.Request) -> web.Response:
        results = await asyncio.gather(*(self._run(check) for check in self.checks.values()))
        report = dict(zip(self.checks, results, strict=True))
        ok = all(result == "ok" for result in results)
        body: dict[str, object] = {"status": "ok" if ok else "unavailable", "checks": report}
        if self.metrics.last_index_reset is not None:  # ready, but an operator should know
            at, why = self.metrics.last_index_reset
            body["last_index_reset"] = {"at": iso_time(int(at * 1000)), "why": why}
        return web.json_response(body, status=200 if ok else 503)

    @staticmethod
    async def _run(check: Check) -> str:
        try:
            await asyncio.wait_for(check(), CHECK_TIMEOUT_S)
        except Exception as exc:  # any failure means not ready; say which
            return f"failed: {type(exc).__name__}: {exc}"[:300]
        return "ok"


class KafkaReadiness:
    """A readiness check: one metadata request to the cluster (connects on first use)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: AIOKafkaClient | None = None

    async def __call__(self) -> None:
        if self._client is None:
            client = AIOKafkaClient(**client_options(self.settings))
            await client.bootstrap()
            self._client = client
        await self._client.fetch_all_metadata()

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()


class Health:
    """The HTTP endpoints with the worker's checks (Redis answers, Kafka answers), and the
    clients those checks use: started with the app, stopped with it."""

    def __init__(self, settings: Settings, metrics: Metrics) -> None:
        self._redis = wiring.redis_client(settings)
        self._kafka = KafkaReadiness(settings)
        self.server = HealthServer(
            metrics, {"redis": self._redis.ping, "kafka": self._kafka}, settings.http_port
        )

    async def start(self) -> None:
        await self.server.start()

    async def stop(self) -> None:
        await self.server.stop()
        await self._kafka.close()
        await self._redis.aclose()
