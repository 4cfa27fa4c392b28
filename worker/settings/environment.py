"""Values as the environment gives them: a variable, or the file that VARIABLE_FILE names,
parsed to a setting's type, with messages that say the fix."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from pathlib import Path
from typing import Any

from worker.errors import ConfigError


def read_variable(var: str, environ: Mapping[str, str]) -> str | None:
    """The variable's value, or the content of the file that VARIABLE_FILE names (without
    its final line break); None if neither is set."""
    path = environ.get(f"{var}_FILE")
    if path is None:
        return environ.get(var)
    if var in environ:
        raise ConfigError(f"both {var} and {var}_FILE are set; unset one of them")
    try:
        return Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{var}_FILE={path!r} cannot be read: {exc}") from None


def parse_value(var: str, raw: str, default: Any) -> Any:
    kind = type(default)
    if issubclass(kind, StrEnum):
        choices = [m.value for m in kind]
        if raw.strip() not in choices:
            raise ConfigError(
                f"{var}={raw!r} is not one of {choices}; unset it to use {default.value!r}"
            )
        return kind(raw.strip())
    if kind is bool:
        value = raw.strip().lower()
        if value not in ("true", "false", "1", "0", "yes", "no"):
            raise ConfigError(f"{var}={raw!r} is not true or false; unset it to use {default}")
        return value in ("true", "1", "yes")
    try:
        return kind(raw.strip())
    except ValueError:
        raise ConfigError(
            f"{var}={raw!r} is not a valid {kind.__name__}; unset it to use {default!r}"
        ) from None
