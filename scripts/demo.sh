#!/usr/bin/env bash
# The worker end to end on a fresh machine: set-up, Kafka and Redis, one worker, a small sample
# with planted duplicates and malformed lines, and the alerts it raises. Stops what it started.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
started=""
if ! bash stack/local-stack.sh running; then
  bash stack/local-stack.sh up
  started=yes
fi

# A fresh namespace and fresh topics per run, so that earlier runs do not answer for this one.
run="demo-$(date +%s)"
export DEDUP_NAMESPACE=$run DEDUP_APP_ID=$run DEDUP_INPUT_TOPIC=$run.articles \
  DEDUP_UNIQUE_TOPIC=$run.unique DEDUP_DUPLICATES_TOPIC=$run.duplicates \
  DEDUP_REJECTED_TOPIC=$run.rejected DEDUP_LOG_LEVEL=warning
cli=.venv/bin/dedup-worker
log=.stack/$run-worker.log

$cli worker > "$log" 2>&1 &
worker=$!
cleanup() {
  kill "$worker" 2>/dev/null && wait "$worker" 2>/dev/null
  [ -z "$started" ] || bash stack/local-stack.sh down
}
trap cleanup EXIT

for _ in $(seq 300); do
  grep -q "Worker]: Ready" "$log" && break
  kill -0 "$worker" 2>/dev/null || { cat "$log"; exit 1; }
  sleep 0.2
done
echo "== worker ready (log: $log)"

echo "== publishing 6 original articles, then 8 later messages with copies and bad lines"
$cli publish examples/originals.jsonl
sleep 2  # first seen wins: let the originals be decided first
$cli publish examples/later.jsonl

echo "== alerts and dead letters (kind, id, original, Hamming distance / threshold):"
$cli alerts --from-beginning --rejected --idle-timeout 5
