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

step() { printf '\n== %s\n' "$*"; }

if [ -z "${PLEXUS_QUICK:-}" ]; then
  step "cargo fmt --check"
  cargo fmt --all -- --check
  step "cargo clippy (all targets, warnings are errors)"
  cargo clippy --workspace --all-targets --locked -- -D warnings
fi

step "cargo test (workspace)"
mkdir -p target
cargo test --workspace --locked 2>&1 | tee target/test-output.txt

step "openCypher TCK (fails below the recorded floor)"
cargo run --locked -q -p plexus-tck -- ../shared/data/opencypher-tck/features \
  --floor crates/plexus-tck/PASS_FLOOR 2>&1 | tee target/tck-output.txt

step "Graphalytics validation through Plexus databases"
cargo run --locked -q -p plexus-cli -- algo validate ../shared/data/graphalytics 2>&1 \
  | tee target/graphalytics-output.txt

step "summary"
awk '/^test result:/ { p += $4; f += $6 }
     /^[0-9]+ passed, [0-9]+ failed$/ { p += $1; f += $3 }
     END { printf "%d passed, %d failed\n", p, f; exit (f > 0) }' \
  target/test-output.txt target/graphalytics-output.txt