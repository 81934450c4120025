#!/usr/bin/env bash
# Apache GraphAr interop: a graph exported by `plexus export graphar` is validated by the
# official library's `graphar check` and read back through its Python reader
# (crates/plexus-graphar/tests/oracle, docs/graphar.md).
#
#   scripts/test-graphar.sh [pytest arguments]
#
# The venv comes from `scripts/python-env.sh graphar`; the `plexus` binary is the dev build in
# CARGO_TARGET_DIR (default target), built here with --locked.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=$(scripts/python-env.sh graphar)
cargo build --locked -q -p plexus-cli >&2
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
PLEXUS_BIN="$(realpath "$TARGET_DIR/debug/plexus")"
export PLEXUS_BIN
exec "$VENV/bin/python" -m pytest crates/plexus-graphar/tests/oracle "$@"
