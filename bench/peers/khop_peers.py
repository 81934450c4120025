"""igraph baseline of the k-hop figures of `plexus-bench cypher` (issue 24).

`plexus-bench cypher --only khop` writes the seeded RMAT edge list once as `e.bin` into its
data directory (little-endian records `u32 src, u32 dst`, vertices 0 .. 2^scale - 1,
duplicates and self-loops kept; see crates/plexus-bench/src/khop.rs, DATA) and runs this
script once, with the start vertices and the hop counts:

    python khop_peers.py --edges DIR/e.bin --vertices 1048576 --starts 5,17,... --k 1,2,3 \
        --warmup 1

The script builds a directed igraph graph of all the vertices and edges (timed as the load),
then per k runs `Graph.neighborhood(vertices=starts, order=k, mode="out", mindist=1)` —
one call for all the starts — `--warmup` times unmeasured and once measured, and prints on
stdout

    {"load_seconds": 9.1, "version": "1.0.0", "edges": 16777216}
    {"k": 2, "ms": 61.7, "counts": [c_1, ..., c_20]}

(`counts[i]`: the vertices within k hops of `starts[i]`, the start itself never counted), or
`{"error": "<type>: <message>"}` when igraph cannot be imported or the load fails, or
`{"k": ..., "error": ...}` for a call that fails (exit status 0 either way: a peer that cannot
run is a finding, not a crash of the benchmark). Progress goes to stderr.
"""

import argparse
import json
import sys
import time

import numpy as np

RECORD = np.dtype([("src", "<u4"), ("dst", "<u4")])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", required=True, help="e.bin: u32 src, u32 dst records")
    parser.add_argument("--vertices", type=int, required=True)
    parser.add_argument("--starts", required=True, help="comma-separated vertex ids")
    parser.add_argument("--k", default="1,2,3", help="comma-separated hop counts")
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args()
    starts = [int(s) for s in args.starts.split(",")]
    try:
        import igraph as ig

        started = time.perf_counter()
        edges = np.fromfile(args.edges, dtype=RECORD)
        g = ig.Graph(n=args.vertices,
                     edges=list(zip(edges["src"].tolist(), edges["dst"].tolist())),
                     directed=True)
        load_seconds = time.perf_counter() - started
        del edges
    except Exception as e:  # noqa: BLE001 - reported to the bench, not raised
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        return
    print(json.dumps({"load_seconds": load_seconds, "version": ig.__version__,
                      "edges": g.ecount()}), flush=True)
    print(f"khop_peers: igraph loaded {g.ecount()} edges in {load_seconds:.1f} s",
          file=sys.stderr)
    for k in (int(k) for k in args.k.split(",")):
        try:
            for _ in range(args.warmup):
                g.neighborhood(vertices=starts, order=k, mode="out", mindist=1)
            started = time.perf_counter()
            found = g.neighborhood(vertices=starts, order=k, mode="out", mindist=1)
            elapsed_ms = (time.perf_counter() - started) * 1e3
            line = {"k": k, "ms": elapsed_ms, "counts": [len(f) for f in found]}
        except Exception as e:  # noqa: BLE001
            line = {"k": k, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(line), flush=True)
        print(f"khop_peers: k={k} {line.get('ms', float('nan')):.1f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
