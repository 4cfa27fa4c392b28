import json
import logging
import re

import pytest

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
