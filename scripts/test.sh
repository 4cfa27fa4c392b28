#!/usr/bin/env bash
# Runs every check: lint, types, and the tests (unit, contract, and integration on real Kafka
# and Redis). Sets up what is missing; starts the local services unless they already run or a
# Docker engine is there for testcontainers, and stops only what it started.
# Extra arguments go to pytest (e.g. scripts/test.sh -k redis).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
started=""
if ! docker info >/dev/null 2>&1 && ! bash stack/local-stack.sh running; then
  bash stack/local-stack.sh up
  started=yes
fi
trap '[ -z "$started" ] || bash stack/local-stack.sh down' EXIT

.venv/bin/ruff check worker tests benchmarks
.venv/bin/mypy
.venv/bin/pytest -q "$@"
