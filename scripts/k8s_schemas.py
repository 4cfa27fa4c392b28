"""JSON Schemas for kubeconform, offline: one standalone, strict schema per kind, from
Kubernetes' own OpenAPI v3 spec (the k8s.io/kubernetes Go module's api/openapi-spec/v3) and
from the CRDs of the kinds the chart adds (the Prometheus Operator's ServiceMonitor and
PrometheusRule, KEDA's ScaledObject), all fetched through the Go module proxy by
scripts/check_chart.sh. Files are named as kubeconform's schema-location template
`{{ .ResourceKind }}{{ .KindSuffix }}.json` expects (deployment-apps-v1.json).

    python scripts/k8s_schemas.py OUT_DIR SPEC_DIR CRD.yaml...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml


def file_name(group: str, version: str, kind: str) -> str:
    suffix = f"-{group.split('.')[0]}" if group else ""
    return f"{kind.lower()}{suffix}-{version}.json"


def strict(schema: Any) -> Any:
    """Objects with listed properties accept no others (kubeconform's -strict schemas), and
    `nullable` becomes JSON Schema's null type."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) for k, v in schema.items()}
    open_ended = "additionalProperties" in out or out.get("x-kubernetes-preserve-unknown-fields")
    if "properties" in out and not open_ended:
        out["additionalProperties"] = False
    if out.pop("nullable", False) and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def inline(schema: Any, components: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """`schema` with every $ref to components replaced by its target (a cycle: anything)."""
    if isinstance(schema, list):
        return [inline(s, components, seen) for s in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        name = ref.rsplit("/", 1)[1]
        if name in seen:
            return {}
        return inline(components[name], components, (*seen, name))
    out = {k: inline(v, components, seen) for k, v in schema.items()}
    # OpenAPI wraps a $ref with a default or a description in allOf of one.
    if len(out.get("allOf", ())) == 1 and isinstance(out["allOf"][0], dict):
        out = {**out.pop("allOf")[0], **out}
    return out


def from_spec(spec_dir: Path, out: Path) -> int:
    written = 0
    for path in sorted(spec_dir.glob("*_openapi.json")):
        components = json.loads(path.read_text()).get("components", {}).get("schemas", {})
        for schema in components.values():
            for gvk in schema.get("x-kubernetes-group-version-kind", []):
                name = file_name(gvk["group"], gvk["version"], gvk["kind"])
                if (out / name).exists():
                    continue
                body = strict(inline(schema, components))
                (out / name).write_text(json.dumps(body))
                written += 1
    return written


def from_crd(path: Path, out: Path) -> int:
    crd = yaml.safe_load(path.read_text())
    group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
    for version in crd["spec"]["versions"]:
        schema = strict(version["schema"]["openAPIV3Schema"])
        (out / file_name(group, version["name"], kind)).write_text(json.dumps(schema))
    return len(crd["spec"]["versions"])


def main() -> None:
    out, spec_dir, *crds = map(Path, sys.argv[1:])
    out.mkdir(parents=True, exist_ok=True)
    count = from_spec(spec_dir, out) + sum(from_crd(crd, out) for crd in crds)
    print(f"k8s_schemas: {count} schemas in {out}")


if __name__ == "__main__":
    main()
