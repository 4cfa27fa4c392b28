"""Validation of messages against the JSON Schemas in schemas/ (the contract)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from tests.support import ROOT

SCHEMAS = ROOT / "schemas"
BASE = "https://dedup-worker.example/schemas/"


@cache
def _registry() -> Registry:
    resources = []
    for path in SCHEMAS.glob("*.schema.json"):
        schema = json.loads(path.read_text())
        Draft202012Validator.check_schema(schema)
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@cache
def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    return Draft202012Validator(schema, registry=_registry())


def validate(name: str, message: Any) -> None:
    """Raise jsonschema.ValidationError unless `message` fits schemas/<name>.schema.json."""
    validator(name).validate(message)


def is_valid(name: str, message: Any) -> bool:
    return validator(name).is_valid(message)
