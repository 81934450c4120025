#!/usr/bin/env bash
# Apache GraphAr interop: a graph exported by `plexus export graphar` is validated by the
# official library's `graphar check` and read back through its Python reader, and loaded into
# PySpark (local[2], the machine's Java 17) with the Spark recipe, whose out-degrees and
# PageRank must match Plexus's (crates/plexus-graphar/tests/oracle, docs/graphar.md).
#
#   scripts/test-graphar.sh [pytest arguments]
#
# The venv comes from `scripts/python-env.sh graphar`; the `plexus` binary is the dev build in
# CARGO_TARGET_DIR (default target), built here with --locked.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=$(scripts/python-env.sh graphar)
if ! java -version >/dev/null 2>&1; then
  echo "error: java not found; the Spark test needs Java 17 (apt-get install openjdk-17-jre-headless)" >&2
  exit 1
fi
if [ -z "${PLEXUS_BIN:-}" ]; then
  cargo build --locked -q -p plexus-cli >&2
  PLEXUS_BIN="$(realpath "${CARGO_TARGET_DIR:-target}/debug/plexus")"
fi
export PLEXUS_BIN
exec "$VENV/bin/python" -m pytest crates/plexus-graphar/tests/oracle "$@"
