"""DuckDB baseline of the scan figures of `plexus-bench cypher` (issue 18).

`plexus-bench cypher` writes the generated rows as `p.parquet` and `q.parquet` into one
directory (see crates/plexus-bench/src/scan.rs, DATA) and runs this script once, with the
SQL text of every query and the parameters:

    python scan_peers.py --data DIR --param c=800000 --warmup 1 --repeats 5 \
        --query 'groupby=SELECT z % 100 AS g, count(*) AS n, avg(w) AS w FROM p WHERE ...' ...

The script loads both files into tables of an in-memory DuckDB database (`CREATE TABLE p AS
SELECT * FROM read_parquet(...)`, timed as the load), then per query runs it `--warmup` times
unmeasured and `--repeats` times measured (`execute(sql, params).fetchall()`: every row
fetched into Python, as Plexus materialises its rows) with DuckDB's default of one thread per
core. It prints on stdout

    {"load_seconds": 1.2, "version": "2.0.1"}
    {"query": "groupby", "median_ms": 12.3, "samples_ms": [...], "rows": [[g, n, w], ...]}

one line per query (the rows of the last run, for the bench's check), or
`{"error": "<type>: <message>"}` when duckdb cannot be imported or the load fails, or
`{"query": ..., "error": ...}` for a query that fails (exit status 0 either way: a peer that
cannot run is a finding, not a crash of the benchmark).
"""

import argparse
import json
import os
import sys
import time


def plain(value):
    """A fetched value as JSON can hold it (DuckDB's HUGEINT sums are Python ints already)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def time_query(conn, sql, params, warmup, repeats):
    samples_ms = []
    rows = []
    for run in range(warmup + repeats):
        started = time.perf_counter()
        rows = conn.execute(sql, params).fetchall()
        elapsed_ms = (time.perf_counter() - started) * 1e3
        if run >= warmup:
            samples_ms.append(elapsed_ms)
    # The upper median, as the Rust side takes it (the middle one for an odd count).
    return sorted(samples_ms)[len(samples_ms) // 2], samples_ms, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="directory with p.parquet, q.parquet")
    parser.add_argument("--query", action="append", default=[], help="NAME=SQL (repeatable)")
    parser.add_argument("--param", action="append", default=[], help="NAME=INTEGER")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    params = {}
    for item in args.param:
        name, _, value = item.partition("=")
        params[name] = int(value)
    try:
        import duckdb

        conn = duckdb.connect(":memory:")
        started = time.perf_counter()
        for table in ("p", "q"):
            path = os.path.join(os.path.abspath(args.data), table + ".parquet")
            conn.execute(f"CREATE TABLE {table} AS SELECT * FROM read_parquet('{path}')")
        load_seconds = time.perf_counter() - started
    except Exception as e:  # noqa: BLE001 - reported to the bench, not raised
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        return
    print(json.dumps({"load_seconds": load_seconds, "version": duckdb.__version__}), flush=True)
    for item in args.query:
        name, _, sql = item.partition("=")
        # Only the parameters the text names: DuckDB refuses unused named parameters.
        used = {k: v for k, v in params.items() if f"${k}" in sql}
        try:
            median_ms, samples_ms, rows = time_query(conn, sql, used, args.warmup, args.repeats)
            line = {"query": name, "median_ms": median_ms, "samples_ms": samples_ms,
                    "rows": [[plain(v) for v in row] for row in rows]}
        except Exception as e:  # noqa: BLE001
            line = {"query": name, "error": f"{type(e).__name__}: {e}"}
        print(json.dumps(line), flush=True)
        print(f"scan_peers: {name} {line.get('median_ms', float('nan')):.1f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
