"""The worker's logs: plain or one JSON object per line, with secrets redacted."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, quote_plus

# What every LogRecord has; anything else on a record came from `extra=` and is kept.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per log line (DEDUP_LOG_FORMAT=json): UTC time to the millisecond,
    level, logger, message, the fields given in `extra=`, and the exception and stack if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update((k, v) for k, v in vars(record).items() if k not in _STANDARD)
        # (exc_text first, as logging.Formatter does: RedactSecrets leaves it redacted there)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class RedactSecrets(logging.Filter):
    """Replaces every secret in a log record by ***: in its message, traceback, stack and
    `extra=` fields. Needed: at debug level aiokafka logs its SASL handshake, password
    included."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__()
        forms = {
            form
            for secret in secrets
            if secret
            for form in (
                secret,
                repr(secret.encode())[2:-1],  # in bytes (aiokafka's SASL handshake)
                json.dumps(secret)[1:-1],
                json.dumps(secret, ensure_ascii=False)[1:-1],
                quote(secret, safe=""),  # in a URL
                quote_plus(secret, safe=""),
            )
        }
        self.forms = sorted(forms, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.forms:
            return True
        record.msg, record.args = self._redact(record.getMessage()), ()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self._redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self._redact(record.stack_info)
        for name, value in list(vars(record).items()):
            if name not in _STANDARD:
                setattr(record, name, self._redacted(value))
        return True

    def _redact(self, text: str) -> str:
        for form in self.forms:
            text = text.replace(form, "***")
        return text

    def _redacted(self, value: Any) -> Any:
        """An `extra=` field: a text redacted; anything else but a number as the text it is
        logged as (JsonFormatter), if that holds a secret."""
        if isinstance(value, str):
            return self._redact(value)
        if value is None or isinstance(value, bool | int | float):
            return value
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except ValueError:  # (a circular reference)
            text = str(value)
        redacted = self._redact(text)
        return value if redacted == text else redacted


def logging_config(level: str, fmt: str, secrets: Sequence[str] = ()) -> dict[str, Any]:
    """A logging.config dictConfig for the worker process; `secrets` never reach the output."""
    formatter: dict[str, Any] = (
        {"()": JsonFormatter}
        if fmt == "json"
        else {"format": "[%(asctime)s] [%(process)d] [%(levelname)s] %(message)s"}
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"default": formatter},
        "filters": {"redact": {"()": RedactSecrets, "secrets": list(secrets)}},
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "formatter": "default",
                "filters": ["redact"],
            }
        },
        "root": {"level": level.upper(), "handlers": ["default"]},
    }
