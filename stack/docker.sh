#!/usr/bin/env bash
# A Docker engine with Compose v2 on a Debian machine that reaches package registries but no
# image registry: Debian's docker.io, Compose v2 built from the Go module proxy, and stand-ins
# for the base images that docker-compose.yml and the Dockerfile name (python:3.11-slim,
# redis:7, apache/kafka:4.1.1), built from Debian packages and Maven Central's Kafka jars
# (stack/standins/). Real Docker, real Compose, the project's own Dockerfile and compose file;
# only the base images differ from Docker Hub's.
#
#   stack/docker.sh up       install and start what is missing (quick the second time)
#   stack/docker.sh down     stop the engine, if this script started it
#   stack/docker.sh images   build the stand-in images that are missing (engine running)
#
# Cached: the Compose binary in ~/.cache/dedup-worker, Go's module and build caches, the
# images in the engine's own store (/var/lib/docker).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
state="$root/.stack/docker"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/dedup-worker"
compose_version=v2.40.3
plugin="$HOME/.docker/cli-plugins/docker-compose"
base=local/debian:bookworm
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

log() { echo "docker.sh: $*" >&2; }

install_engine() {
  command -v dockerd >/dev/null && command -v debootstrap >/dev/null && return
  log "installing docker.io and debootstrap from Debian"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq docker.io debootstrap >/dev/null
}

start_engine() {
  mkdir -p "$state"
  docker info >/dev/null 2>&1 && return
  log "starting dockerd (log: $state/dockerd.log)"
  $sudo dockerd --pidfile "$state/dockerd.pid" > "$state/dockerd.log" 2>&1 &
  for _ in $(seq 60); do
    docker info >/dev/null 2>&1 && { touch "$state/started-here"; return; }
    sleep 1
  done
  tail -20 "$state/dockerd.log"
  log "dockerd did not answer in 60 s"
  exit 1
}

install_compose() {
  docker compose version >/dev/null 2>&1 && return
  local binary="$cache/docker-compose-$compose_version"
  if [ ! -x "$binary" ]; then
    log "building Compose $compose_version from the Go module proxy (a few minutes, once)"
    local dir src
    dir=$(go mod download -json "github.com/docker/compose/v2@$compose_version" \
      | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
    src=$(mktemp -d)
    cp -r "$dir/." "$src"
    chmod -R u+w "$src"
    mkdir -p "$cache"
    (cd "$src" && CGO_ENABLED=0 go build -trimpath \
      -ldflags "-X github.com/docker/compose/v2/internal.Version=$compose_version" -o "$binary.part" ./cmd) \
      > "$cache/compose-build.log" 2>&1 || { tail -30 "$cache/compose-build.log"; exit 1; }
    mv "$binary.part" "$binary"
    rm -rf "$src"
  fi
  mkdir -p "$(dirname "$plugin")"
  cp "$binary" "$plugin"
}

mirror() {  # the machine's own Debian mirror, from its apt sources
  grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | awk '{print $2}' | head -1
}

build_images() {
  if ! docker image inspect "$base" >/dev/null 2>&1; then
    log "building $base with debootstrap"
    local rootfs
    rootfs=$(mktemp -d)
    $sudo debootstrap --variant=minbase bookworm "$rootfs" "$(mirror)" > "$state/debootstrap.log" 2>&1 \
      || { tail -20 "$state/debootstrap.log"; exit 1; }
    $sudo tar -C "$rootfs" -c . | docker import - "$base" >/dev/null
    $sudo rm -rf "$rootfs"
  fi
  local context
  for image in python:3.11-slim redis:7 apache/kafka:4.1.1; do
    docker image inspect "$image" >/dev/null 2>&1 && continue
    log "building the stand-in for $image"
    context=$(mktemp -d)
    cp -r "$here/standins/${image%%:*}/." "$context"
    # The machine's package traffic goes through a proxy with its own CA: pip and apt in the
    # images need it.
    cp /etc/ssl/certs/ca-certificates.crt "$context/host-ca.crt"
    if [ "$image" = apache/kafka:4.1.1 ]; then
      bash "$here/local-stack.sh" install
      cp -r "$root/.stack/kafka-libs" "$context/libs"
      cp "$here/log4j2.properties" "$context/"
    fi
    docker build -q -t "$image" "$context" > "$state/build-${image//[:\/]/-}.log" 2>&1 \
      || { tail -30 "$state/build-${image//[:\/]/-}.log"; exit 1; }
    rm -rf "$context"
  done
}

stop_engine() {
  [ -f "$state/started-here" ] || return 0
  if [ -f "$state/dockerd.pid" ]; then
    $sudo kill "$(cat "$state/dockerd.pid")" 2>/dev/null || true
    for _ in $(seq 30); do
      [ -e "/proc/$(cat "$state/dockerd.pid" 2>/dev/null)" ] || break
      sleep 1
    done
  fi
  rm -f "$state/started-here"
}

case "${1:-}" in
  up) install_engine; start_engine; install_compose; build_images ;;
  images) build_images ;;
  down) stop_engine ;;
  *) echo "usage: $0 up|down|images" >&2; exit 2 ;;
esac
