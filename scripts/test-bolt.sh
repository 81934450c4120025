#!/usr/bin/env bash
# Runs the Bolt server tests with the official Neo4j Python driver: builds the `plexus`
# binary (the dev profile the other tests use) and runs crates/plexus-bolt/tests/python,
# whose fixture starts `plexus serve` on a temporary database with port 0.
#
#   scripts/test-bolt.sh            # all driver tests
#   scripts/test-bolt.sh -k auth    # extra arguments go to pytest
#
# Respects CARGO_TARGET_DIR, and PLEXUS_BIN (a `plexus` binary built already: no build
# here). The virtual environment comes from scripts/python-env.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=$(scripts/python-env.sh)
if [ -z "${PLEXUS_BIN:-}" ]; then
  cargo build --locked -q -p plexus-cli
  PLEXUS_BIN="$(realpath "${CARGO_TARGET_DIR:-target}/debug/plexus")"
fi
export PLEXUS_BIN
"$VENV/bin/python" -m pytest -q -p no:cacheprovider crates/plexus-bolt/tests/python "$@"
