#!/usr/bin/env bash
# Times igraph, NetworkX and Kùzu on the same seeded RMAT graph that
# `plexus-bench algo` loads into Plexus, printing JSON lines in the bench's shape
# (`name`, `value`, `unit`, `system`, `scale`) on stdout; progress goes to stderr.
#
#   bench/peers/run.sh [SCALE]      # default 20; NetworkX runs at scale 17 only
#
# Creates (once) a virtual environment under target/peers-venv with igraph (also the baseline
# of the k-hop figures of `plexus-bench cypher`, through khop_peers.py), networkx
# (+ scipy), kuzu, ladybug (LadybugDB, the maintained fork of Kùzu; used by
# `plexus-bench ingest` through ingest_peers.py), duckdb (the baseline of the scan figures of
# `plexus-bench cypher`, through scan_peers.py) and numpy from the Python package index,
# and writes the edge lists under target/peers.
# Environment: PLEXUS_PEERS_VENV, PLEXUS_PEERS_DATA override those two directories;
# PLEXUS_PEERS_REPEATS the runs per kernel (default 3, the median is printed) and
# PLEXUS_PEERS_NETWORKX_REPEATS NetworkX's (default 1: its kernels take minutes).
set -euo pipefail
cd "$(dirname "$0")/../.."

SCALE="${1:-20}"
NETWORKX_SCALE=17
VENV="${PLEXUS_PEERS_VENV:-target/peers-venv}"
DATA="${PLEXUS_PEERS_DATA:-target/peers}"
REPEATS="${PLEXUS_PEERS_REPEATS:-3}"
NETWORKX_REPEATS="${PLEXUS_PEERS_NETWORKX_REPEATS:-1}"

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV" >&2
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check \
  "igraph==1.0.*" "networkx==3.6.*" scipy numpy "kuzu==0.11.3" "ladybug==0.22.0" \
  "duckdb==2.0.1" >&2

for scale in "$SCALE" "$NETWORKX_SCALE"; do
  if [ ! -f "$DATA/rmat-$scale.bin" ]; then
    cargo run --quiet --release -p plexus-bench -- algo --scale "$scale" --write-edges "$DATA" >&2
  fi
done

"$VENV/bin/python" bench/peers/peers.py --data "$DATA" --scale "$SCALE" --repeats "$REPEATS" \
  --systems igraph,kuzu
"$VENV/bin/python" bench/peers/peers.py --data "$DATA" --scale "$NETWORKX_SCALE" \
  --repeats "$NETWORKX_REPEATS" --systems networkx
