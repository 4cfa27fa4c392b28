#!/usr/bin/env bash
# Every check: lint (ruff, formatting, the import layers), types (mypy), and the tests: unit,
# contract, and integration on real Kafka and Redis. Sets up what is missing; starts the local
# services unless they already run, and stops only what it started.
#
#   scripts/test.sh              everything
#   scripts/test.sh --unit       lint, types and the tests that need no services (seconds)
#   scripts/test.sh --lint       lint and types only (what .pre-commit-config.yaml runs)
# Other arguments go to pytest (e.g. scripts/test.sh -k redis).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

mode=all
case "${1:-}" in
  --unit) mode=unit; shift ;;
  --lint) mode=lint; shift ;;
esac

[ "$mode" = lint ] && [ -x .venv/bin/ruff ] || bash scripts/setup.sh
code=(worker tests benchmarks evaluation scripts)
.venv/bin/ruff check "${code[@]}"
.venv/bin/ruff format --check "${code[@]}"
.venv/bin/lint-imports
.venv/bin/mypy
[ "$mode" = lint ] && exit 0

if [ "$mode" = unit ]; then
  exec .venv/bin/pytest -q -m "not services" "$@"
fi
started=""
if ! bash stack/local-stack.sh running; then
  bash stack/local-stack.sh up
  started=yes
fi
trap '[ -z "$started" ] || bash stack/local-stack.sh down' EXIT
.venv/bin/pytest -q "$@"
