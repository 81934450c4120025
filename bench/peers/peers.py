"""Time igraph, NetworkX and Kùzu on the RMAT graph that `plexus-bench algo` uses.

Reads `rmat-<scale>.bin` (little-endian records: u32 src, u32 dst, f64 weight; vertices are
0 .. 2^scale - 1) written by `plexus-bench algo --scale <scale> --write-edges <dir>`, and
`rmat-<scale>.csv` (the same edges as `src,dst,weight` with a header) for Kùzu's COPY.

Prints one JSON object per figure on stdout, in the shape the Rust benchmarks use:
    {"name": "pagerank", "value": 1.23, "unit": "s", "system": "igraph", "scale": 20, ...}
`value` is the median wall-clock time of --repeats runs of the kernel alone (the graph is
loaded first and timed separately as `load`). Progress goes to stderr.

What each system runs (the same kernels as far as each offers them; differences noted in
the `note` field and in docs/benchmarks.md):
- BFS and SSSP start at the vertex with the most out-edges (smallest id on ties), as in Rust.
- PageRank: igraph uses PRPACK (solves to convergence; no iteration count), NetworkX its
  scipy power iteration capped at 20 iterations, Kùzu `page_rank` with 20 iterations.
- WCC everywhere; CDLP as each system's label propagation on the undirected view of the graph
  (built before timing; igraph's and NetworkX's directed variants have no iteration bound and
  igraph's did not finish within 10 minutes at scale 20); LCC as igraph's undirected local
  transitivity and NetworkX's directed clustering (not the Graphalytics directed LCC).
- Every kernel run is bounded by --timeout seconds (SIGALRM; a C routine is interrupted only
  when it returns); a run over the bound is reported with `"error": "TimeoutError ..."`.
- NetworkX collapses parallel edges (DiGraph); igraph and Kùzu keep them, like Plexus.
"""

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import time

import numpy as np

RECORD = np.dtype([("src", "<u4"), ("dst", "<u4"), ("w", "<f8")])
DAMPING = 0.85
PAGERANK_ITERATIONS = 20


def log(message):
    print(message, file=sys.stderr, flush=True)


class Reporter:
    def __init__(self, system, scale, repeats, timeout):
        self.system, self.scale, self.repeats, self.timeout = system, scale, repeats, timeout

    def emit(self, name, seconds, **extra):
        figure = {"name": name, "value": seconds, "unit": "s", "system": self.system,
                  "scale": self.scale}
        figure.update(extra)
        print(json.dumps(figure), flush=True)

    def time(self, name, run, note=None):
        """Median of `repeats` runs of `run()`; a failure is reported, not fatal."""
        log(f"{self.system} {name}")
        times = []
        try:
            for _ in range(self.repeats):
                signal.alarm(self.timeout)
                started = time.perf_counter()
                run()
                times.append(time.perf_counter() - started)
                signal.alarm(0)
        except Exception as error:  # a peer lacking or rejecting a kernel is a finding
            signal.alarm(0)
            self.emit(name, None, error=f"{type(error).__name__}: {error}")
            return
        extra = {"note": note} if note else {}
        self.emit(name, statistics.median(times), **extra)


def on_alarm(_signum, _frame):
    raise TimeoutError("kernel run exceeded --timeout")


def load_edges(data, scale):
    edges = np.fromfile(os.path.join(data, f"rmat-{scale}.bin"), dtype=RECORD)
    n = 1 << scale
    source = int(np.argmax(np.bincount(edges["src"], minlength=n)))
    return n, edges, source


def run_igraph(report, n, edges, source):
    import igraph as ig

    started = time.perf_counter()
    g = ig.Graph(n=n, edges=list(zip(edges["src"].tolist(), edges["dst"].tolist())),
                 directed=True)
    g.es["weight"] = edges["w"].tolist()
    report.emit("load", time.perf_counter() - started)
    report.time("pagerank", lambda: g.pagerank(damping=DAMPING, directed=True),
                note="PRPACK, solved to convergence")
    report.time("wcc", lambda: g.connected_components(mode="weak"))
    report.time("bfs", lambda: g.bfs(source, mode="out"))
    undirected = g.as_undirected(mode="each")
    report.time("cdlp", lambda: undirected.community_label_propagation(),
                note="igraph label propagation on the undirected view, not Graphalytics CDLP")
    report.time("lcc", lambda: g.transitivity_local_undirected(mode="zero"),
                note="undirected local transitivity")
    report.time("sssp", lambda: g.distances(source, weights="weight", mode="out"))


def run_networkx(report, n, edges, source):
    import networkx as nx

    started = time.perf_counter()
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(
        zip(edges["src"].tolist(), edges["dst"].tolist(), edges["w"].tolist()))
    report.emit("load", time.perf_counter() - started, edges=g.number_of_edges())

    def pagerank():
        try:
            nx.pagerank(g, alpha=DAMPING, max_iter=PAGERANK_ITERATIONS, tol=1e-300)
        except nx.PowerIterationFailedConvergence:
            pass  # ran exactly PAGERANK_ITERATIONS iterations, as intended

    report.time("pagerank", pagerank, note="scipy power iteration, 20 iterations")
    report.time("wcc", lambda: list(nx.weakly_connected_components(g)))
    report.time("bfs", lambda: nx.single_source_shortest_path_length(g, source))
    undirected = g.to_undirected()
    report.time("cdlp", lambda: list(nx.community.label_propagation_communities(undirected)),
                note="semi-synchronous label propagation on the undirected view")
    report.time("lcc", lambda: nx.clustering(g), note="directed clustering (Fagiolo)")
    report.time("sssp", lambda: nx.single_source_dijkstra_path_length(g, source))


def remove_kuzu_database(path):
    """Kùzu 0.11 keeps a database in one file (plus a WAL beside it), older versions in a
    directory: remove whichever is there, so a rerun starts from an empty database."""
    for item in (path, path + ".wal"):
        if os.path.isdir(item):
            shutil.rmtree(item)
        elif os.path.exists(item):
            os.remove(item)


def run_kuzu(report, n, data, scale):
    import kuzu

    path = os.path.join(data, f"kuzu-{scale}")
    remove_kuzu_database(path)
    nodes = os.path.join(data, f"rmat-{scale}-nodes.csv")
    np.savetxt(nodes, np.arange(n), fmt="%d", header="id", comments="")
    started = time.perf_counter()
    db = kuzu.Database(path)
    conn = kuzu.Connection(db, num_threads=os.cpu_count() or 1)
    conn.execute("CREATE NODE TABLE V(id INT64, PRIMARY KEY (id))")
    conn.execute("CREATE REL TABLE E(FROM V TO V, weight DOUBLE)")
    conn.execute(f"COPY V FROM '{nodes}' (HEADER=true)")
    conn.execute(f"COPY E FROM '{os.path.join(data, f'rmat-{scale}.csv')}' (HEADER=true)")
    conn.execute("CALL project_graph('G', ['V'], ['E'])")
    report.emit("load", time.perf_counter() - started)

    def query(text):
        return lambda: conn.execute(text).get_all()

    report.time("pagerank", query(
        f"CALL page_rank('G', dampingFactor := {DAMPING}, maxIterations := {PAGERANK_ITERATIONS},"
        " tolerance := 0.0) RETURN count(*)"),
        note="page_rank, 20 iterations; dangling vertices handled differently")
    report.time("wcc", query("CALL weakly_connected_components('G') RETURN count(*)"))
    del conn, db
    remove_kuzu_database(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="directory with rmat-<scale>.bin/.csv")
    parser.add_argument("--scale", type=int, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--systems", default="igraph,networkx,kuzu")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per kernel run")
    args = parser.parse_args()
    if not 1 <= args.repeats <= 100:
        parser.error("--repeats must be in 1..100")
    if not 1 <= args.timeout <= 86400:
        parser.error("--timeout must be in 1..86400")
    signal.signal(signal.SIGALRM, on_alarm)
    n, edges, source = load_edges(args.data, args.scale)
    log(f"scale {args.scale}: {n} vertices, {len(edges)} edges, source {source}")
    for system in args.systems.split(","):
        report = Reporter(system, args.scale, args.repeats, args.timeout)
        if system == "igraph":
            run_igraph(report, n, edges, source)
        elif system == "networkx":
            run_networkx(report, n, edges, source)
        elif system == "kuzu":
            run_kuzu(report, n, args.data, args.scale)
        else:
            parser.error(f"unknown system {system!r}")


if __name__ == "__main__":
    main()
