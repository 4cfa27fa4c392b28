import json
import logging
import logging.config
import re
from urllib.parse import quote, quote_plus

import pytest

from worker.settings import Settings
from worker.stream.logs import JsonFormatter, RedactSecrets, logging_config


def test_json_log_lines() -> None:
    record = logging.LogRecord(
        "worker.stream.app", logging.WARNING, __file__, 1, "index %s", ("down",), None
    )
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "warning"
    assert line["message"] == "index down"
    assert line["logger"] == "worker.stream.app"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", line["time"])
    assert logging_config("info", "json")["formatters"]["default"]["()"] is JsonFormatter


def test_secrets_are_redacted_in_every_form(capsys: pytest.CaptureFixture[str]) -> None:
    secret = 'pä55"word'
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
    assert secret not in err
    assert repr(secret.encode())[2:-1] not in err
    assert json.dumps(secret)[1:-1] not in err
    assert err.count("***") == 4


def test_json_log_lines_keep_extra_fields() -> None:
    logger = logging.getLogger("test.extra")
    record = logger.makeRecord(
        "test.extra", logging.INFO, __file__, 1, "batch", (), None, extra={"partition": 3}
    )
    line = json.loads(JsonFormatter().format(record))
    assert line["partition"] == 3
    assert "args" not in line
    assert "msecs" not in line


SECRET = "hunter2-pä55"  # (no character that JSON escapes: found as it is if it leaks)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_secrets_are_redacted_in_tracebacks_stacks_and_extra_fields(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    logging.config.dictConfig(logging_config("info", fmt, [SECRET]))
    try:
        log = logging.getLogger("test.redact.formats")
        try:
            try:
                raise ConnectionError(f"redis://:{SECRET}@cache:6379 refused")
            except ConnectionError as exc:
                raise RuntimeError(f"no index (password {SECRET})") from exc
        except RuntimeError:
            log.exception("cannot start")
        log.handle(
            log.makeRecord(
                log.name,
                logging.WARNING,
                __file__,
                1,
                "with a stack",
                (),
                None,
                extra={"url": f"redis://:{SECRET}@cache", "settings": {"password": SECRET}},
                sinfo=f'Stack (most recent call last):\n  File "x.py", line 1\n    p = "{SECRET}"',
            )
        )
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    err = capsys.readouterr().err
    assert SECRET not in err
    assert "Traceback" in err
    assert "Stack (most recent call last)" in err
    if fmt == "json":
        failed, stacked = map(json.loads, err.splitlines())
        assert "RuntimeError: no index (password ***)" in failed["exception"]
        assert "redis://:***@cache:6379 refused" in failed["exception"]
        assert stacked["url"] == "redis://:***@cache"
        assert json.loads(stacked["settings"]) == {"password": "***"}
        assert stacked["stack"].endswith('p = "***"')


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_every_form_of_the_redis_and_kafka_passwords_is_redacted(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(
        kafka_security_protocol="SASL_PLAINTEXT",
        kafka_username="dedup",
        kafka_password='k"af ka/é',
        redis_url="redis://dedup:r%40d%C3%A9s@cache:6379/0?password=q%2Bp+x",
    )
    passwords = ['k"af ka/é', "r@dés", "q+p x"]  # as the clients use them
    forms = []
    for password in passwords:
        forms += [
            password,
            repr(password.encode())[2:-1],
            json.dumps(password)[1:-1],
            json.dumps(password, ensure_ascii=False)[1:-1],
            quote(password, safe=""),
            quote_plus(password),
        ]
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    logging.config.dictConfig(logging_config("info", fmt, settings.secrets))
    try:
        log = logging.getLogger("test.redact.passwords")
        for form in forms:
            log.warning("at redis://dedup:%s@cache", form)
        log.warning("%s", settings.redis_url)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    lines = capsys.readouterr().err.splitlines()
    if fmt == "json":
        messages = [json.loads(line)["message"] for line in lines]
    else:
        messages = [line.split("[WARNING] ", 1)[1] for line in lines]
    assert messages == [
        *["at redis://dedup:***@cache"] * len(forms),
        "redis://dedup:***@cache:6379/0?password=***",
    ]
