import json
import logging

import aiohttp
import pytest

from tests.services import free_port
from worker.model import Kind, Verdict
from worker.pipeline.decide import Accepted, Forgotten
from worker.pipeline.decode import Article, Reason, Rejection
from worker.stream.observability import (
    HealthServer,
    JsonFormatter,
    Metrics,
    RedactSecrets,
    logging_config,
)
from worker.text.fingerprint import Fingerprinter


def _sample(metrics: Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_metrics_count_verdicts_dead_letters_candidates_and_hot_buckets(
        caplog: pytest.LogCaptureFixture) -> None:
    metrics = Metrics()
    fp = Fingerprinter()("a text")
    article = Article("a", "a text", b"{}")
    metrics.record([
        Accepted(article, fp, Verdict("a", Kind.UNIQUE, 5, candidates=7)),
        Accepted(article, fp, Verdict("b", Kind.NEAR, 5, "a", 2, 7, candidates=9, hot_buckets=1)),
        Accepted(article, fp, Verdict("a", Kind.UNIQUE, 5, replayed=True)),
        Rejection(Reason.INVALID_JSON, "bad"),
        Accepted(article, fp, Verdict("c", Kind.UNIQUE, 6, replaced=True)),
        Forgotten("c", True),
        Forgotten("z", False),
    ])
    for change in ("replaced", "deleted", "absent"):
        assert _sample(metrics, "dedup_updates_total", change=change) == 1
    assert _sample(metrics, "dedup_verdicts_total", kind="unique", replayed="false") == 2
    assert _sample(metrics, "dedup_verdicts_total", kind="near", replayed="false") == 1
    assert _sample(metrics, "dedup_verdicts_total", kind="unique", replayed="true") == 1
    assert _sample(metrics, "dedup_dead_letters_total", reason="invalid_json") == 1
    assert _sample(metrics, "dedup_candidates_count") == 3  # replays are not counted
    assert _sample(metrics, "dedup_candidates_sum") == 16
    assert _sample(metrics, "dedup_hot_buckets_total") == 1
    assert "hot bucket" in caplog.text


def test_json_log_lines() -> None:
    record = logging.LogRecord("worker.stream.app", logging.WARNING, __file__, 1, "index %s",
                               ("down",),
                               None)
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "warning" and line["message"] == "index down"
    assert line["logger"] == "worker.stream.app" and "time" in line
    assert logging_config("info", "json")["formatters"]["default"]["()"] is JsonFormatter


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
                assert (await r.json())["checks"] == {"redis": "ok", "kafka": "ok"}
            healthy["ok"] = False
            async with http.get(f"{base}/readyz") as r:
                assert r.status == 503
                body = await r.json()
                assert body["checks"]["redis"].startswith("failed: ConnectionError: Redis is down")
                assert body["checks"]["kafka"] == "ok"
            async with http.get(f"{base}/metrics") as r:
                assert r.status == 200
                assert "dedup_index_retries_total 1.0" in await r.text()
    finally:
        await server.stop()


def test_secrets_are_redacted_in_every_form(capsys: pytest.CaptureFixture[str]) -> None:
    secret = "pä55\"word"
    logger = logging.getLogger("test.redact")
    handler = logging.StreamHandler()
    handler.addFilter(RedactSecrets([secret, ""]))
    logger.addHandler(handler)
    try:
        logger.warning("plain %s", secret)
        logger.warning("bytes %r", b"\x00user\x00" + secret.encode())
        logger.warning("json %s", json.dumps({"p": secret}))
        try:
            raise ValueError(secret)
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert secret not in err and repr(secret.encode())[2:-1] not in err
    assert json.dumps(secret)[1:-1] not in err
    assert err.count("***") == 4
