#!/usr/bin/env bash
# Creates (once) and prints the path of a Python virtual environment the tests use:
# maturin builds `plexusdb` into it, pytest runs the Python suite, and the official `neo4j`
# driver exercises the Bolt server. Packages come from PyPI with pinned minor versions.
#
#   VENV=$(scripts/python-env.sh)          # then "$VENV/bin/python" ...
#   VENV=$(scripts/python-env.sh graphar)  # the official GraphAr library (scripts/test-graphar.sh)
#   VENV=$(scripts/python-env.sh browser)  # Playwright driving Debian's chromium (scripts/test-browser.sh)
#
# `graphar` (0.13.0.dev1, a pre-release, pinned exactly) lives in a venv of its own: it
# requires pytest 7, the Python suite pins pytest 8. PySpark 3.5 and PyYAML (the Spark recipe
# and its test, run in local mode on the machine's Java 17) share that venv.
#
# Environment: PLEXUS_PY_VENV overrides the directory (default target/py-venv),
# PLEXUS_GRAPHAR_VENV the graphar one (default target/graphar-venv), PLEXUS_BROWSER_VENV the
# browser one (default target/browser-venv; Playwright only, never its browser download).
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-}" in
  "")
    VENV="${PLEXUS_PY_VENV:-target/py-venv}"
    REQUIREMENTS=(
      "maturin==1.16.*" "pytest==8.*" "neo4j==6.4.*"
      "numpy==2.*" "pandas==2.*" "pyarrow==26.*" "networkx==3.6.*"
    )
    ;;
  graphar)
    VENV="${PLEXUS_GRAPHAR_VENV:-target/graphar-venv}"
    REQUIREMENTS=("graphar==0.13.0.dev1" "pyspark==3.5.*" "pyyaml==6.*")
    ;;
  browser)
    VENV="${PLEXUS_BROWSER_VENV:-target/browser-venv}"
    REQUIREMENTS=("playwright==1.65.*" "pytest==8.*")
    ;;
  *)
    echo "usage: $0 [graphar|browser]" >&2
    exit 2
    ;;
esac
STAMP="$VENV/.plexus-requirements"

if ! command -v python3 >/dev/null 2>&1; then
  echo "error: python3 not found; the Python and Bolt tests need Python >= 3.10 with venv" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV" >&2
  if ! python3 -m venv "$VENV" >&2; then
    # Debian ships venv separately.
    rm -rf "$VENV"
    (apt-get update -qq && apt-get install -y -qq python3-venv) >&2
    python3 -m venv "$VENV" >&2
  fi
fi
# Installing is skipped when the same requirement list was installed before.
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "${REQUIREMENTS[*]}" ]; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "${REQUIREMENTS[@]}" >&2
  echo "${REQUIREMENTS[*]}" > "$STAMP"
fi
realpath "$VENV"
