"""docker-compose.yml and the Dockerfile stay consistent with the code: the settings they name
exist, the image runs the package's command."""

import yaml

from tests.support import ROOT
from worker.settings import ENV, Settings

COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_runs_kafka_kraft_redis_with_aof_and_replicated_workers() -> None:
    services = COMPOSE["services"]
    assert services["kafka"]["image"].startswith("apache/kafka:")
    assert services["kafka"]["environment"]["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert "--appendonly" in services["redis"]["command"]
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
