"""docker-compose.yml and the Dockerfile stay consistent with the code: the settings they name
exist, the image runs the package's command."""

import json
import shutil
import subprocess

import pytest
import yaml

from tests.support import ROOT
from worker.settings import ENV, Settings

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_runs_kafka_kraft_redis_with_aof_and_replicated_workers() -> None:
    services = COMPOSE["services"]
    assert services["kafka"]["image"].startswith("apache/kafka:")
    assert services["kafka"]["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"
    redis = services["redis"]["command"]
    assert redis[redis.index("--appendonly") + 1] == "yes"
    assert redis[redis.index("--rdbcompression") + 1] == "no"  # (docs/operations.md, Redis)
    assert services["worker"]["deploy"]["replicas"] >= 2
    assert services["worker"]["build"] == "."


def test_compose_sets_only_real_settings_with_valid_values() -> None:
    env = {k: str(v) for k, v in COMPOSE["services"]["worker"]["environment"].items()}
    assert set(env) <= set(ENV.values())
    settings = Settings.from_env(env)
    assert settings.kafka_bootstrap == "kafka:9092"
    assert settings.redis_url.startswith("redis://redis:")


def test_compose_kafka_advertises_the_worker_address() -> None:
    kafka = COMPOSE["services"]["kafka"]["environment"]
    assert "PLAINTEXT://kafka:9092" in kafka["KAFKA_ADVERTISED_LISTENERS"]


def test_dockerfile_installs_the_package_and_runs_the_cli() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install" in dockerfile
    assert 'ENTRYPOINT ["dedup-worker"]' in dockerfile


def _exported() -> set[str]:
    """Every sample name the worker's /metrics can show (counters' _total, histograms' parts)."""
    from worker.index.redis.band_known import KnownStats
    from worker.stream.metrics import Metrics

    metrics = Metrics()
    metrics.watch_known(lambda: KnownStats(0, 0, 0, 0))  # (as a band worker's)
    names = set()
    for family in metrics.registry.collect():
        names.add(family.name)
        if family.type == "counter":
            names.add(f"{family.name}_total")
        if family.type == "histogram":
            names.update(f"{family.name}_{part}" for part in ("bucket", "sum", "count"))
        if family.type == "info":
            names.add(f"{family.name}_info")
    return names


def test_the_dashboard_and_the_alert_rules_ask_only_for_metrics_the_worker_exports() -> None:
    import json
    import re

    dashboard = json.loads((ROOT / "deploy/grafana/dedup-worker.json").read_text())
    queries = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    rules = yaml.safe_load((ROOT / "deploy/prometheus/alerts.yaml").read_text())
    queries += [rule["expr"] for group in rules["groups"] for rule in group["rules"]]
    asked = {m for q in queries for m in re.findall(r"\b(?:dedup|process)_[a-z_]+\b", q)}
    assert asked, "no metric found in the queries"
    assert asked <= _exported(), sorted(asked - _exported())


def test_the_native_extensions_locked_crates_build_with_the_rust_the_image_installs() -> None:
    # The image compiles native/ with Debian's rustc-web; a locked crate that asks for a newer
    # Rust fails that build, and only the compose test would notice.
    cargo = shutil.which("cargo")
    if cargo is None:
        pytest.skip("cargo is not installed")
    manifest = ROOT / "native" / "Cargo.toml"
    done = subprocess.run(
        [cargo, "metadata", "--locked", "--format-version", "1", "--manifest-path", str(manifest)],
        capture_output=True,
        text=True,
        check=True,
    )
    packages = json.loads(done.stdout)["packages"]
    ours = next(p for p in packages if p["manifest_path"] == str(manifest))
    assert ours["rust_version"], "native/Cargo.toml must say its rust-version"
    too_new = [
        f"{p['name']} {p['version']} needs Rust {p['rust_version']}"
        for p in packages
        if p["rust_version"] and _version(p["rust_version"]) > _version(ours["rust_version"])
    ]
    assert not too_new, (
        f"native/Cargo.lock: {too_new}, but the image builds with Rust {ours['rust_version']}"
    )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))
