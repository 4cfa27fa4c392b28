#!/usr/bin/env bash
# The package as a user installs it: build the wheel, install it into a fresh virtualenv
# (runtime dependencies only), and run the command there: --version, -h, and `scan` on the
# examples; when Kafka and Redis answer (stack/local-stack.sh up), also the worker on the
# examples, read back through `alerts`. Then all of it again with every runtime dependency at
# the lowest version pyproject.toml allows, which proves the lower bounds true. pip's
# downloads are cached (~/.cache/pip).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python=${PYTHON:-python3}

.venv/bin/pip wheel --quiet --no-deps --wheel-dir "$work/dist" . > "$work/build.log" 2>&1 \
  || { cat "$work/build.log"; exit 1; }
wheel=$(ls "$work"/dist/dedup_worker-*.whl)
echo "check_package: built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KB)"

# The lowest versions allowed: each `name>=X` of [project.dependencies] as `name==X`.
.venv/bin/python - "$work/lowest.txt" <<'EOF'
import re, sys, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
pins = [re.sub(r"\s*>=\s*", "==", d.split(";")[0]) for d in deps if ">=" in d]
open(sys.argv[1], "w").write("\n".join(pins) + "\n")
EOF

check() {  # $1: a name for the venv; $2...: extra pip arguments
  local name=$1 venv="$work/$1"
  shift
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --upgrade pip > "$work/$name.log" 2>&1
  "$venv/bin/pip" install "$wheel" "$@" >> "$work/$name.log" 2>&1 \
    || { tail -30 "$work/$name.log"; echo "check_package: $name: install failed" >&2; exit 1; }
  (
    cd "$work"  # not the checkout: only what the wheel installed is importable
    version=$("$venv/bin/dedup-worker" --version)
    "$venv/bin/dedup-worker" -h | grep -q "scan" || { echo "no scan in -h" >&2; exit 1; }
    out=$(cat "$OLDPWD/examples/originals.jsonl" "$OLDPWD/examples/later.jsonl" \
      | "$venv/bin/dedup-worker" scan -)
    verdicts=$(grep -c '"verdict"' <<< "$out")
    duplicates=$(grep -c '"verdict": "duplicate"' <<< "$out")
    lines=$(cat "$OLDPWD"/examples/*.jsonl | wc -l)
    [ "$verdicts" -eq "$lines" ] && [ "$duplicates" -gt 0 ] \
      || { echo "$out"; echo "check_package: $name: scan gave $verdicts verdicts, $duplicates duplicates" >&2; exit 1; }
    echo "check_package: $name: $version; scan: $verdicts verdicts, $duplicates duplicates"
    if (exec 3<>/dev/tcp/127.0.0.1/9092) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then
      stream "$venv" "$name" "$duplicates"
    fi
  )
  "$venv/bin/pip" freeze > "$work/$name.freeze"
}

stream() {  # the worker from venv $1 on the local services: the examples in, the alerts out
  local venv=$1 name=$2 expected=$3 tag
  tag="pkg$RANDOM$RANDOM"
  export DEDUP_NAMESPACE=$tag DEDUP_APP_ID=$tag DEDUP_INPUT_TOPIC=$tag.in \
    DEDUP_UNIQUE_TOPIC=$tag.unique DEDUP_DUPLICATES_TOPIC=$tag.duplicates \
    DEDUP_REJECTED_TOPIC=$tag.rejected DEDUP_HTTP_PORT=0 DEDUP_REDIS_URL=redis://127.0.0.1:6379/14
  "$venv/bin/dedup-worker" worker > "$work/$name-worker.log" 2>&1 &
  local pid=$!
  "$venv/bin/dedup-worker" publish "$OLDPWD/examples/originals.jsonl" 2> /dev/null
  "$venv/bin/dedup-worker" publish "$OLDPWD/examples/later.jsonl" 2> /dev/null
  local alerts
  alerts=$(timeout 120 "$venv/bin/dedup-worker" alerts --from-beginning --max "$expected" --json) \
    || { kill "$pid" 2>/dev/null || true; tail -30 "$work/$name-worker.log"; echo "check_package: $name: no alerts" >&2; exit 1; }
  kill -TERM "$pid"
  wait "$pid" || { tail -30 "$work/$name-worker.log"; echo "check_package: $name: the worker did not stop cleanly" >&2; exit 1; }
  echo "check_package: $name: worker: $(grep -c duplicate_of <<< "$alerts") alerts from the examples"
}

check latest
check lowest -c "$work/lowest.txt"  # pip fails if a pin cannot be installed
echo "check_package: lowest versions: $(paste -sd" " "$work/lowest.txt")"
