#!/usr/bin/env bash
# Runs every Plexus test. Installs what it needs on a fresh machine of this project's kind
# (the Rust toolchain itself comes with the machine; crates come from the registry).
#
#   scripts/test.sh            # everything: format, lints, all tests
#   PLEXUS_QUICK=1 scripts/test.sh   # skip fmt/clippy
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found. Plexus needs Rust >= 1.95 (rustup); see README.md." >&2
  exit 1
fi
for component in rustfmt clippy; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
    rustup component add "$component" >/dev/null 2>&1 || true
  fi
done

# A clean CI checkout builds everything once: incremental caches would only cost disk. CI
# machines share their disk, so a CI run also keeps its own footprint small: binaries without
# debug info (~55 test binaries of ~80 MB each, half of it line tables; a failing test still
# names its file and line, only RUST_BACKTRACE output loses them), no pip wheel cache, and
# the test binaries are deleted once they have run (below).
if [ -n "${CI:-}" ]; then
  export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
  export CARGO_PROFILE_DEV_STRIP="${CARGO_PROFILE_DEV_STRIP:-debuginfo}"
  export PIP_NO_CACHE_DIR="${PIP_NO_CACHE_DIR:-1}"
fi

# Each step's header carries the minutes:seconds since the start (CI keeps the run < 30 min).
step() { printf '\n== %s  [%d:%02d]\n' "$*" $((SECONDS / 60)) $((SECONDS % 60)); }

if [ -z "${PLEXUS_QUICK:-}" ]; then
  step "cargo fmt --check"
  cargo fmt --all -- --check
  step "cargo clippy (all targets, warnings are errors)"
  cargo clippy --workspace --all-targets --locked -- -D warnings
fi

step "crate layering (front ends through the plexus facade)"
python3 scripts/check-layers.py

step "PostgreSQL 15 server (the mirror's tests start throwaway clusters of their own)"
if [ -z "${PLEXUS_PG_BIN:-}" ] && [ ! -x /usr/lib/postgresql/15/bin/initdb ]; then
  SUDO=
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
fi
ls "${PLEXUS_PG_BIN:-/usr/lib/postgresql/15/bin}/initdb"

step "cargo test (workspace)"
mkdir -p target
cargo test --workspace --locked 2>&1 | tee target/test-output.txt

# `cargo test --workspace` has just built the binaries and examples the steps below run
# (every package with integration tests gets its binaries built, examples are built too),
# with the features of the whole workspace. They are run from there: `cargo run -p …`
# resolves features for that one package, which differ, and so would compile the engine
# again for each package (minutes per step on a 2-core CI machine).
BIN="${CARGO_TARGET_DIR:-target}/debug"
if [ -n "${CI:-}" ]; then
  # The test harness binaries cargo ran ("Running … (path)"); the binaries and examples the
  # steps below start are other files and stay.
  sed -n 's/^ *Running .* (\(.*\))$/\1/p' target/test-output.txt | sort -u | xargs -r rm -f
  echo "target/ after the test binaries are deleted: $(du -sh "${CARGO_TARGET_DIR:-target}" | cut -f1)"
fi
PLEXUS_BIN="$(realpath "$BIN/plexus")"
export PLEXUS_BIN

step "openCypher TCK (fails below the recorded floor)"
"$BIN/plexus-tck" ../shared/data/opencypher-tck/features \
  --floor crates/plexus-tck/PASS_FLOOR 2>&1 | tee target/tck-output.txt

step "openCypher TCK with everything compiled that the JIT covers (jit = on; ~5 s)"
"$BIN/plexus-tck" ../shared/data/opencypher-tck/features \
  --floor crates/plexus-tck/PASS_FLOOR --set default_jit=on 2>&1 | tee target/tck-jit-output.txt

step "openCypher TCK with the JIT off (the interpreter everywhere; ~5 s)"
"$BIN/plexus-tck" ../shared/data/opencypher-tck/features \
  --floor crates/plexus-tck/PASS_FLOOR --set default_jit=off 2>&1 | tee target/tck-jit-off-output.txt

step "Graphalytics validation through Plexus databases"
"$PLEXUS_BIN" algo validate ../shared/data/graphalytics 2>&1 \
  | tee target/graphalytics-output.txt

step "the README's first command, the fraud demo (short run, dev build)"
"$BIN/examples/fraud" --seconds 2 --accounts 5000 2>&1 | tee target/demo-output.txt

step "Python package plexusdb (maturin + pytest)"
scripts/test-py.sh 2>&1 | tee target/python-output.txt

step "Bolt server with the official neo4j driver (pytest)"
scripts/test-bolt.sh 2>&1 | tee target/bolt-output.txt

step "web console in headless chromium (Playwright, pytest)"
scripts/test-browser.sh 2>&1 | tee target/browser-output.txt

step "Apache GraphAr export read by the official library (graphar check + pytest)"
scripts/test-graphar.sh 2>&1 | tee target/graphar-output.txt

step "summary"
echo "disk: $(du -shc target ${CARGO_TARGET_DIR:+"$CARGO_TARGET_DIR"} | tail -1 | cut -f1) in target/ (and CARGO_TARGET_DIR)"
# cargo's "test result:" lines, the conformance runners' "N passed, M failed" and pytest's
# closing "[== ]N passed, M failed in Ts[ ==]" lines.
awk '/^test result:/ { p += $4; f += $6 }
     /^[0-9]+ passed, [0-9]+ failed$/ { p += $1; f += $3 }
     /^(=+ )?[0-9]+ (passed|failed|errors?)/ && / in [0-9.]+s( =+)?$/ {
       for (i = 2; i <= NF; i++) {
         if ($i ~ /^passed/) p += $(i - 1)
         if ($i ~ /^(failed|error)/) f += $(i - 1)
       }
     }
     END { printf "%d passed, %d failed\n", p, f; exit (f > 0) }' \
  target/test-output.txt target/graphalytics-output.txt target/python-output.txt \
  target/bolt-output.txt target/browser-output.txt target/graphar-output.txt