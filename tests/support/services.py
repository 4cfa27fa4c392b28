"""Where the tests find real Redis and Kafka.

In order: DEDUP_TEST_REDIS_URL / DEDUP_TEST_KAFKA_BOOTSTRAP if set; containers started by
testcontainers when DEDUP_TEST_SERVICES=containers (on the images docker-compose.yml names:
redis:7, apache/kafka:4.1.1; here, stack/docker.sh's stand-ins); else the services of
`stack/local-stack.sh up`. An engine that merely answers does not switch the suite to
containers: which services run is chosen, not guessed.
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from tests.support import ROOT

LOCAL_REDIS_URL = "redis://127.0.0.1:{port}/15"  # db 15: the tests wipe it, the demo uses 0
LOCAL_KAFKA = "127.0.0.1:{port}"
HINT = "start the local services first: bash stack/local-stack.sh up"
KAFKA_IMAGE = "apache/kafka:4.1.1"
REDIS_IMAGE = "redis:7"


def use_containers() -> bool:
    return os.environ.get("DEDUP_TEST_SERVICES", "local") == "containers"


@contextmanager
def redis_service() -> Iterator[str]:
    if url := os.environ.get("DEDUP_TEST_REDIS_URL"):
        yield url
    elif use_containers():
        os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")  # (no ryuk image here)
        from testcontainers.redis import RedisContainer

        with RedisContainer(REDIS_IMAGE) as container:
            host = container.get_container_host_ip()
            yield f"redis://{host}:{container.get_exposed_port(6379)}/0"
    else:
        port = int(os.environ.get("DEDUP_STACK_REDIS_PORT", "6379"))
        _require_port(port, "Redis")
        yield LOCAL_REDIS_URL.format(port=port)


@contextmanager
def kafka_service() -> Iterator[str]:
    if bootstrap := os.environ.get("DEDUP_TEST_KAFKA_BOOTSTRAP"):
        yield bootstrap
    elif use_containers():
        yield from _kafka_container()
    else:
        port = int(os.environ.get("DEDUP_STACK_KAFKA_PORT", "9092"))
        _require_port(port, "Kafka")
        yield LOCAL_KAFKA.format(port=port)


def _kafka_container() -> Iterator[str]:
    """A single KRaft node in a container, advertised on the host port it is published on."""
    os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.waiting_utils import wait_for_logs

    port = free_port()
    settings = {
        "KAFKA_NODE_ID": "1",
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:9093",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        # The broker reaches itself (the transaction coordinator does) on a listener of its
        # own: the host's port that the clients' listener is published on is not its port.
        "KAFKA_LISTENERS": "PLAINTEXT://:9092,CONTROLLER://:9093,BROKER://:19092",
        "KAFKA_ADVERTISED_LISTENERS": f"PLAINTEXT://127.0.0.1:{port},BROKER://localhost:19092",
        "KAFKA_INTER_BROKER_LISTENER_NAME": "BROKER",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": (
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT"
        ),
        "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
        "KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS": "1",
        "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
        "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
        "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    }
    container = DockerContainer(KAFKA_IMAGE).with_bind_ports(9092, port)
    for name, value in settings.items():
        container = container.with_env(name, value)
    with container:
        wait_for_logs(container, "Kafka Server started", timeout=120)
        yield f"127.0.0.1:{port}"


def free_port() -> int:
    """A port free on every address, below the kernel's range for outgoing connections (a
    port it hands out can be taken by a client's connection before the server binds it) and
    the cluster's (cluster_base_port)."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(10_000, 20_000)
        if _port_free(port, "0.0.0.0"):
            return port
    raise RuntimeError("no free port in 10000-19999")


@contextmanager
def redis_server(folder: Path) -> Iterator[redis.Redis]:
    """A Redis server of its own in `folder`, without persistence."""
    folder.mkdir()
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""],
        cwd=folder,
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(port=port)
    try:
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if server.poll() is not None:
                    raise
                subprocess.run(["sleep", "0.05"], check=True)
        yield client
    finally:
        client.close()
        server.terminate()
        server.wait(10)


def _port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
        return True


CLUSTER_NODES = 6  # stack/local-stack.sh's cluster: 3 primaries, then a replica of each


def cluster_host(node: int) -> str:
    """The loopback address of the cluster's node `node` (stack/local-stack.sh)."""
    return f"127.0.1.{node + 1}"


def cluster_base_port() -> int:
    """A port p with p + i free on node i's address (the cluster's nodes), and their cluster
    bus ports (p + i + 10000) too."""
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(20_000, 40_000)
        taken = [(cluster_host(i), base + i) for i in range(CLUSTER_NODES)]
        if all(_port_free(p, host) and _port_free(p + 10_000, host) for host, p in taken):
            return base
    raise RuntimeError("no free ports for a Redis Cluster")


@contextmanager
def redis_cluster_service(state: Path) -> Iterator[str]:
    """A Redis Cluster of 3 primaries with a replica each: DEDUP_TEST_REDIS_CLUSTER_URL (one
    node's URL) if set, else one started by stack/local-stack.sh in `state` (Docker or not:
    redis-server is installed)."""
    if url := os.environ.get("DEDUP_TEST_REDIS_CLUSTER_URL"):
        yield url
        return
    base = cluster_base_port()
    env = {**os.environ, "DEDUP_STACK_DIR": str(state), "DEDUP_STACK_CLUSTER_PORT": str(base)}
    subprocess.run(
        ["bash", str(SCRIPT), "up", "cluster"],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    try:
        yield f"redis://{cluster_host(0)}:{base}/0"
    finally:
        subprocess.run(
            ["bash", str(SCRIPT), "down", "cluster"],
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )


def _require_port(port: int, what: str) -> None:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        pytest.fail(
            f"{what} is not running on 127.0.0.1:{port}; {HINT} (or set "
            "DEDUP_TEST_SERVICES=containers to use Docker)",
            pytrace=False,
        )


SCRIPT = ROOT / "stack" / "local-stack.sh"
PORT_TAKEN = 3  # local-stack.sh's exit status when a port is in use


class PortTaken(Exception):
    pass


class PrivateServices:
    """A private Redis and/or Kafka broker, started by the project's own stack/local-stack.sh
    in a temporary state dir on free ports, for tests that stop, restart or reconfigure them."""

    def __init__(self, state: Path, **extra: str) -> None:
        self.state = state  # the services' data, logs and pids
        self.env = {**os.environ, **extra, "DEDUP_STACK_DIR": str(state)}
        self._pick_ports()

    def _pick_ports(self) -> None:
        for service in ("KAFKA", "CONTROLLER", "REDIS"):
            name = f"DEDUP_STACK_{service}_PORT"
            self.env[name] = str(free_port())
        self.kafka = f"127.0.0.1:{self.env['DEDUP_STACK_KAFKA_PORT']}"
        self.redis_url = f"redis://127.0.0.1:{self.env['DEDUP_STACK_REDIS_PORT']}/0"

    def run(self, *args: str) -> None:
        done = subprocess.run(
            ["bash", str(SCRIPT), *args], env=self.env, capture_output=True, text=True, timeout=180
        )
        if done.returncode == PORT_TAKEN:
            raise PortTaken(done.stderr)
        if done.returncode:
            pytest.fail(
                f"stack/local-stack.sh {' '.join(args)} exited with {done.returncode}:\n"
                f"{done.stdout[-3000:]}{done.stderr[-3000:]}",
                pytrace=False,
            )

    @contextmanager
    def started(self, service: str) -> Iterator[None]:
        for attempt in range(3):
            try:
                self.run("up", service)
                break
            except PortTaken:
                # an ephemeral port picked free was taken since (by a client's connection)
                if attempt == 2 or self.env.get("DEDUP_STACK_SASL_PORT"):
                    raise
                self._pick_ports()
        try:
            yield
        finally:
            self.run("down", service)

    def redis_cli(self, *args: str) -> str:
        return subprocess.run(
            ["redis-cli", "-p", self.env["DEDUP_STACK_REDIS_PORT"], *args],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()


@contextmanager
def private_service(service: str, state: Path, **extra: str) -> Iterator[PrivateServices]:
    services = PrivateServices(state, **extra)
    with services.started(service):
        yield services
