#!/usr/bin/env bash
# Runs the differential test against Neo4j 5.26 (difftest.py; see README.md), creating (once)
# its virtual environment under target/difftest-venv with the official Neo4j Python driver.
#
#   bench/difftest/run.sh --seed 1 --queries 10000 --graphs 10
#   bench/difftest/run.sh --self-test
#
# Environment: PLEXUS_DIFFTEST_VENV overrides the virtual environment's directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

VENV="${PLEXUS_DIFFTEST_VENV:-target/difftest-venv}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV" >&2
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check "neo4j==6.4.*" >&2
exec "$VENV/bin/python" bench/difftest/difftest.py "$@"
