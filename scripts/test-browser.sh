#!/usr/bin/env bash
# Runs the web console's tests in a real browser: Debian's `chromium` driven by Playwright for
# Python (tests/browser). Builds `plexus`, starts `plexus serve --http` on free ports with a
# temporary database, runs pytest against it and stops the server.
#
#   scripts/test-browser.sh              # all browser tests
#   scripts/test-browser.sh -k escape    # extra arguments go to pytest
#   scripts/test-browser.sh --bench      # the console timings instead (bench/console_bench.py)
#
# Installs `chromium` with apt when it is missing; Playwright comes from PyPI into the venv of
# scripts/python-env.sh (`browser`). `playwright install` (a browser download) is never run:
# the tests launch the system chromium. Screenshots go to target/browser-screenshots.
# Respects CARGO_TARGET_DIR, and PLEXUS_BIN (a `plexus` binary built already: no build here).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
VENV=$(scripts/python-env.sh browser)
if [ -z "${PLEXUS_BIN:-}" ]; then
  cargo build --locked -q -p plexus-cli
  PLEXUS_BIN="$(realpath "${CARGO_TARGET_DIR:-target}/debug/plexus")"
fi

WORK=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

export PLEXUS_TEST_USER=console PLEXUS_TEST_PASSWORD=console-secret
"$PLEXUS_BIN" serve "$WORK/db" --bolt 127.0.0.1:0 --http 127.0.0.1:0 \
  --user "$PLEXUS_TEST_USER:$PLEXUS_TEST_PASSWORD" >"$WORK/stdout" 2>"$WORK/stderr" &
SERVER_PID=$!
for _ in $(seq 1 100); do
  if grep -q "^HTTP server listening on " "$WORK/stdout"; then break; fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$WORK/stderr" >&2; exit 1; fi
  sleep 0.1
done
PLEXUS_HTTP_URL=$(sed -n 's/^HTTP server listening on //p' "$WORK/stdout")
if [ -z "$PLEXUS_HTTP_URL" ]; then
  echo "plexus serve did not report its HTTP address" >&2
  cat "$WORK/stderr" >&2
  exit 1
fi
export PLEXUS_HTTP_URL
mkdir -p target/browser-screenshots
export PLEXUS_SCREENSHOTS="$PWD/target/browser-screenshots"
if [ "${1:-}" = "--bench" ]; then
  "$VENV/bin/python" bench/console_bench.py
else
  "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/browser "$@"
fi
