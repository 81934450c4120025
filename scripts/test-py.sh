#!/usr/bin/env bash
# Builds the Python package `plexusdb` (crates/plexus-py) into the test virtual environment and
# runs its pytest suite.
#
#   scripts/test-py.sh [pytest arguments]      e.g. scripts/test-py.sh -k pandas -x
#
# The venv comes from scripts/python-env.sh (PLEXUS_PY_VENV overrides its place). maturin
# builds with the dev profile (the workspace's optimised debug build) into CARGO_TARGET_DIR
# when set, and with --locked, so Cargo.lock is never rewritten.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=$(scripts/python-env.sh)
export VIRTUAL_ENV="$VENV"
export PATH="$VENV/bin:$PATH"

echo "building plexusdb into $VENV" >&2
maturin develop --locked --manifest-path crates/plexus-py/Cargo.toml >&2

exec python -m pytest crates/plexus-py/tests "$@"
