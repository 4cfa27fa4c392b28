#!/usr/bin/env bash
# The project's local services, without Docker: a real Apache Kafka broker (KRaft, single node,
# jars from Maven Central) and Debian's redis-server, both on 127.0.0.1.
#
#   stack/local-stack.sh install        fetch the Kafka jars (cached in ~/.m2); install redis-server
#   stack/local-stack.sh up [SERVICE]   start both, or only kafka or redis; wait until ready
#   stack/local-stack.sh down [SERVICE] stop what `up` started
#   stack/local-stack.sh wipe           delete the stopped services' data (topics, Redis keys);
#                                       benchmarks start from a wiped stack: a broker holding
#                                       thousands of old test partitions is measurably slower
#   stack/local-stack.sh status         print what runs
#   stack/local-stack.sh running        exit 0 if both answer (for scripts)
#   stack/local-stack.sh up cluster     a Redis Cluster of 3 primaries, each with a replica:
#                                       node i on 127.0.1.(i+1), port DEDUP_STACK_CLUSTER_PORT
#                                       (7000) + i (the primaries first); `down cluster` stops it
#                                       (not part of up/down alone)
#
# State (data, logs, pids) lives in DEDUP_STACK_DIR (.stack/ at the repository root); the jars
# in .stack/kafka-libs. Ports: DEDUP_STACK_KAFKA_PORT (9092), DEDUP_STACK_CONTROLLER_PORT (9093),
# DEDUP_STACK_REDIS_PORT (6379). Another state dir and other ports give a second, private stack
# (the fault tests restart theirs). DEDUP_STACK_SASL_PORT adds a SASL_PLAINTEXT listener (PLAIN,
# user "dedup", password DEDUP_STACK_SASL_PASSWORD) beside the plain one, for the security tests.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
state=${DEDUP_STACK_DIR:-$root/.stack}
libs="$root/.stack/kafka-libs"
kafka_port=${DEDUP_STACK_KAFKA_PORT:-9092}
controller_port=${DEDUP_STACK_CONTROLLER_PORT:-9093}
redis_port=${DEDUP_STACK_REDIS_PORT:-6379}
sasl_port=${DEDUP_STACK_SASL_PORT:-}
cluster_port=${DEDUP_STACK_CLUSTER_PORT:-7000}
port_taken=3  # the exit status when a port is in use (callers may pick others and retry)

log() { echo "local-stack: $*" >&2; }

install_redis() {
  command -v redis-server >/dev/null && return
  log "installing redis-server from Debian"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >/dev/null
  # Debian's package starts a system service on 6379; the stack runs its own.
  $sudo service redis-server stop >/dev/null 2>&1 || true
}

install_kafka() {
  [ -f "$libs/.complete" ] && return
  mkdir -p "$(dirname "$libs")"
  command -v mvn >/dev/null || { log "mvn not found: install Maven (apt-get install maven)"; exit 1; }
  log "fetching the Kafka jars from Maven Central"
  rm -rf "$libs"
  mvn -B -q -f "$here/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs" > "$libs.log" 2>&1 \
    || { cat "$libs.log"; exit 1; }
  touch "$libs/.complete"
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...; COMMAND's status 2 gives up at once
  local seconds=$1 what=$2 status; shift 2
  for _ in $(seq $((seconds * 5))); do
    status=0; "$@" >/dev/null 2>&1 || status=$?
    [ "$status" -eq 0 ] && return 0
    [ "$status" -eq 2 ] && { log "$what failed to start"; return 1; }
    sleep 0.2
  done
  log "$what not ready after ${seconds}s"
  return 1
}

redis_ready() {  # PONG, not just an answer: while loading its AOF Redis answers LOADING
  [ "$(redis-cli -p "$redis_port" ping 2>/dev/null)" = PONG ]
}

redis_up() {
  if redis_ready; then
    log "redis already answers on 127.0.0.1:$redis_port"
    return
  fi
  mkdir -p "$state/redis"
  # rdbcompression no: the index is mostly random bits (fingerprints, sketches, content
  # hashes), which LZF does not shrink, and compressing them is much of what a rewrite of the
  # append-only file costs (docs/operations.md).
  redis-server --bind 127.0.0.1 --port "$redis_port" --dir "$state/redis" \
    --appendonly yes --appendfsync everysec --rdbcompression no --save "" --daemonize yes \
    --pidfile "$state/redis.pid" --logfile "$state/redis.log"
  wait_for 60 redis redis_ready || { tail -20 "$state/redis.log"; exit 1; }
  log "redis ready on 127.0.0.1:$redis_port"
}

kafka_config() {
  local listeners="PLAINTEXT://127.0.0.1:$kafka_port,CONTROLLER://127.0.0.1:$controller_port"
  local advertised="PLAINTEXT://127.0.0.1:$kafka_port"
  local protocols="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT"
  if [ -n "$sasl_port" ]; then
    listeners="$listeners,SASL_PLAINTEXT://127.0.0.1:$sasl_port"
    advertised="$advertised,SASL_PLAINTEXT://127.0.0.1:$sasl_port"
    protocols="$protocols,SASL_PLAINTEXT:SASL_PLAINTEXT"
  fi
  cat > "$state/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
controller.listener.names=CONTROLLER
listeners=$listeners
advertised.listeners=$advertised
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=$protocols
log.dirs=$state/kafka-data
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
PROPS
  if [ -n "$sasl_port" ]; then
    local password=${DEDUP_STACK_SASL_PASSWORD:-dedup-secret}
    cat >> "$state/server.properties" <<PROPS
sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_dedup="$password";
PROPS
  fi
}

kafka_started() {  # fails at once, not after the wait, when the broker has exited
  pid_alive "$state/kafka.pid" || { log "kafka exited while starting"; return 2; }
  grep -q "Kafka Server started" "$state/kafka.log"
}

kafka_up() {
  if pid_alive "$state/kafka.pid"; then
    log "kafka already running (pid $(cat "$state/kafka.pid"))"
    return
  fi
  local port
  for port in "$kafka_port" "$controller_port" $sasl_port; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      log "port $port is taken by another process; set DEDUP_STACK_KAFKA_PORT," \
        "DEDUP_STACK_CONTROLLER_PORT or DEDUP_STACK_SASL_PORT"
      exit "$port_taken"
    fi
  done
  kafka_config
  local java_opts=(-Xms256m -Xmx512m -XX:+UseG1GC -Djava.awt.headless=true
    "-Dlog4j2.configurationFile=$here/log4j2.properties" "-Dkafka.logs.dir=$state")
  java "${java_opts[@]}" -cp "$libs/*" kafka.tools.StorageTool format \
    -t dedup-local-stack-000001 -c "$state/server.properties" --ignore-formatted \
    > "$state/kafka-format.log" 2>&1 || { cat "$state/kafka-format.log"; exit 1; }
  : > "$state/kafka.log"
  nohup java "${java_opts[@]}" -cp "$libs/*" kafka.Kafka "$state/server.properties" \
    >> "$state/kafka.log" 2>&1 &
  echo $! > "$state/kafka.pid"
  # An open port is not enough: the broker accepts connections before it is ready.
  wait_for 90 kafka kafka_started || { tail -30 "$state/kafka.log"; exit 1; }
  log "kafka ready on 127.0.0.1:$kafka_port"
}

cluster_nodes=6  # 3 primaries, then a replica of each
# A primary that stops answering is failed over to its replica after this long (Redis's
# default is 15 s; the fault tests wait for it).
cluster_node_timeout_ms=3000

# Each node on a loopback address of its own, which it also sends from (to the other nodes and
# its primary), so that a test can cut one off from the others and not from its clients.
cluster_host() { echo "127.0.1.$(($1 + 1))"; }
cluster_cli() { local i=$1; shift; redis-cli -h "$(cluster_host "$i")" -p $((cluster_port + i)) "$@"; }

cluster_ready() {
  cluster_cli 0 cluster info 2>/dev/null | grep -q "cluster_state:ok" || return 1
  # every replica attached and in step with its primary (a failover needs one)
  for i in $(seq 3 $((cluster_nodes - 1))); do
    cluster_cli "$i" info replication 2>/dev/null | grep -q "master_link_status:up" || return 1
  done
}

cluster_up() {
  if cluster_ready; then
    log "redis cluster already answers on $(cluster_host 0):$cluster_port"
    return
  fi
  local nodes=()
  for i in $(seq 0 $((cluster_nodes - 1))); do
    local host port=$((cluster_port + i)) dir="$state/cluster/$i"
    host=$(cluster_host "$i")
    mkdir -p "$dir"
    # (protected mode would refuse the other nodes: they do not connect from 127.0.0.1)
    redis-server --bind "$host" --bind-source-addr "$host" --protected-mode no --port "$port" \
      --dir "$dir" --cluster-enabled yes --cluster-config-file nodes.conf \
      --cluster-node-timeout "$cluster_node_timeout_ms" \
      --appendonly yes --rdbcompression no --save "" --daemonize yes \
      --pidfile "$state/cluster-$i.pid" --logfile "$state/cluster-$i.log"
    nodes+=("$host:$port")
  done
  for i in $(seq 0 $((cluster_nodes - 1))); do
    wait_for 30 "cluster node $i" cluster_cli "$i" ping
  done
  # (redis-cli makes the first three the primaries and the others their replicas)
  redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes \
    > "$state/cluster-create.log" 2>&1 || { cat "$state/cluster-create.log"; exit 1; }
  wait_for 60 "redis cluster" cluster_ready
  log "redis cluster ready on $(cluster_host 0):$cluster_port ($cluster_nodes nodes)"
}

cluster_down() {
  for i in $(seq 0 $((cluster_nodes - 1))); do
    stop_pid "$state/cluster-$i.pid" "cluster node $i"
  done
  rm -rf "$state/cluster"
}

stop_pid() {  # stop_pid PIDFILE NAME
  local pidfile=$1 name=$2
  pid_alive "$pidfile" || { rm -f "$pidfile"; return 0; }
  local pid; pid=$(cat "$pidfile")
  kill "$pid"
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  kill -0 "$pid" 2>/dev/null && { log "$name did not stop in 30s; killing"; kill -9 "$pid"; }
  rm -f "$pidfile"
  log "$name stopped"
}

case "${1:-}" in
  install) mkdir -p "$state"; install_redis; install_kafka ;;
  up)
    mkdir -p "$state"; install_redis
    if [ "${2:-}" = cluster ]; then cluster_up; exit 0; fi
    install_kafka
    [ "${2:-redis}" != redis ] || redis_up
    [ "${2:-kafka}" != kafka ] || kafka_up ;;
  down)
    if [ "${2:-}" = cluster ]; then cluster_down; exit 0; fi
    [ "${2:-kafka}" != kafka ] || stop_pid "$state/kafka.pid" kafka
    [ "${2:-redis}" != redis ] || stop_pid "$state/redis.pid" redis ;;
  wipe)
    if pid_alive "$state/kafka.pid" || redis_ready; then
      echo "local-stack: stop the services first ($0 down)" >&2; exit 1
    fi
    rm -rf "$state/kafka-data" "$state/redis"; log "data wiped" ;;
  running)
    pid_alive "$state/kafka.pid" && redis_ready ;;
  status)
    pid_alive "$state/kafka.pid" && echo "kafka: running (pid $(cat "$state/kafka.pid"))" \
      || echo "kafka: stopped"
    redis_ready && echo "redis: answers on $redis_port" \
      || echo "redis: stopped" ;;
  *) echo "usage: $0 install|up|down|wipe|status|running" >&2; exit 2 ;;
esac
