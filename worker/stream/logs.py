"""The worker's logs: plain or one JSON object per line, with secrets redacted."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

# What every LogRecord has; anything else on a record came from `extra=` and is kept.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per log line (DEDUP_LOG_FORMAT=json): UTC time to the millisecond,
    level, logger, message, the fields given in `extra=`, and the exception if any."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update((k, v) for k, v in vars(record).items() if k not in _STANDARD)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class RedactSecrets(logging.Filter):
    """Replaces every secret in a log record by ***. Needed: at debug level aiokafka logs its
    SASL handshake, password included."""

    def __init__(self, secrets: Sequence[str]) -> None:
        super().__init__()
        forms = {
            form
            for secret in secrets
            if secret
            for form in (secret, repr(secret.encode())[2:-1], json.dumps(secret)[1:-1])
        }
        self.forms = sorted(forms, key=len, reverse=True)

    def filter(self, record: logging.LogRecord) -> bool:
        if self.forms:
            message = record.getMessage()
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            for form in self.forms:
                message = message.replace(form, "***")
                if record.exc_text:
                    record.exc_text = record.exc_text.replace(form, "***")
            record.msg, record.args = message, ()
        return True


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
