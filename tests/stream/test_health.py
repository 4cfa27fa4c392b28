import aiohttp

from tests.support.services import free_port
from worker.stream.health import HealthServer
from worker.stream.metrics import Metrics


async def test_health_endpoints() -> None:
    healthy = {"ok": True}

    async def redis_check() -> None:
        if not healthy["ok"]:
            raise ConnectionError("Redis is down")

    async def kafka_check() -> None:
        return None

    metrics = Metrics()
    metrics.index_retries.inc()
    port = free_port()
    server = HealthServer(metrics, {"redis": redis_check, "kafka": kafka_check}, port)
    await server.start()
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as r:
                assert r.status == 200
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 200
                body = await r.json()
                assert body["checks"] == {"redis": "ok", "kafka": "ok"}
                assert "last_index_reset" not in body
            metrics.index_reset("the index was emptied")
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 200  # still ready: the worker goes on with the index
                assert (await r.json())["last_index_reset"]["why"] == "the index was emptied"
            healthy["ok"] = False
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 503
                body = await r.json()
                assert body["checks"]["redis"].startswith("failed: ConnectionError: Redis is down")
                assert body["checks"]["kafka"] == "ok"
            async with http.get(f"{base}/metrics") as r:
                assert r.status == 200
                text = await r.text()
                assert "dedup_index_retries_total 1.0" in text
                assert "dedup_index_resets_total 1.0" in text
    finally:
        await server.stop()
