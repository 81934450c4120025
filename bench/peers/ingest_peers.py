"""Bulk-ingest baselines for `plexus-bench ingest`: Kùzu's and LadybugDB's COPY of its files.

`plexus-bench ingest` writes the seeded RMAT graph as `v.csv` (header `id`), `e.csv` (header
`src,dst`) and `v.parquet` / `e.parquet` (int64 columns of the same names) into one directory,
then runs this script once per system and format, each run in its own process so that its
peak resident memory is its own:

    python ingest_peers.py --system kuzu --format csv --data DIR --db PATH

Each run creates an empty database at PATH, declares the tables Plexus's `copy_*` figures use

    CREATE NODE TABLE V(id INT64, PRIMARY KEY(id))
    CREATE REL TABLE E(FROM V TO V)

and times `COPY V FROM '<dir>/v.csv' (HEADER=true)` followed by `COPY E FROM '<dir>/e.csv'
(HEADER=true)` (for Parquet the `.parquet` files, no options), from the first COPY to the end
of the second, on a connection with one thread per core (the system's default). It then closes
the database and prints one line on stdout:

    {"system": "kuzu", "format": "csv", "seconds": 1.23, "nodes": N, "edges": M,
     "peak_rss_bytes": ..., "db_bytes": ...}

or, when the system cannot be imported or a statement fails,
`{"system": ..., "format": ..., "error": "<type>: <message>"}` (exit status 0: a peer that
cannot run is a finding, not a crash of the benchmark). `peak_rss_bytes` is this process's
`ru_maxrss` (KiB on Linux) times 1024, the interpreter included (about 10-20 MiB);
`db_bytes` is the size on disk of the closed database (the file, its WAL, or the directory).

`--system ladybug` runs LadybugDB, the maintained fork of Kùzu (`import ladybug`), with the
same statements.

`--system plexus --format arrow` is Plexus's own `load_arrow` figure: the Python module
`plexusdb` (built into the interpreter running this script) declares the same tables and
loads `v.parquet` then `e.parquet` with `conn.load_arrow`, each file streamed batch by batch
(a `pyarrow.RecordBatchReader` over the Parquet file: the whole table is never in memory).
"""

import argparse
import json
import os
import resource
import shutil
import sys
import time

# Module name per system; Kùzu and Ladybug expose the Kùzu Python API (Database,
# Connection.execute); plexus is plexusdb (see run_plexus).
MODULES = {"kuzu": "kuzu", "ladybug": "ladybug", "plexus": "plexusdb"}


def remove_database(path):
    """A database is one file plus a WAL (Kùzu 0.11, Ladybug) or a directory (older
    versions): remove whichever is there."""
    for item in (path, path + ".wal"):
        if os.path.isdir(item):
            shutil.rmtree(item)
        elif os.path.exists(item):
            os.remove(item)


def size_on_disk(path):
    total = 0
    for item in (path, path + ".wal"):
        if os.path.isdir(item):
            for root, _dirs, files in os.walk(item):
                total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
        elif os.path.exists(item):
            total += os.path.getsize(item)
    return total


def count(conn, query):
    result = conn.execute(query)
    return result.get_next()[0]


def run(system, fmt, data, path):
    module = __import__(MODULES[system])
    remove_database(path)
    suffix = "csv" if fmt == "csv" else "parquet"
    options = " (HEADER=true)" if fmt == "csv" else ""
    db = module.Database(path)
    conn = module.Connection(db, num_threads=os.cpu_count() or 1)
    conn.execute("CREATE NODE TABLE V(id INT64, PRIMARY KEY(id))")
    conn.execute("CREATE REL TABLE E(FROM V TO V)")
    started = time.perf_counter()
    conn.execute(f"COPY V FROM '{os.path.join(data, 'v.' + suffix)}'{options}")
    conn.execute(f"COPY E FROM '{os.path.join(data, 'e.' + suffix)}'{options}")
    seconds = time.perf_counter() - started
    nodes = count(conn, "MATCH (v:V) RETURN count(*)")
    edges = count(conn, "MATCH ()-[e:E]->() RETURN count(*)")
    conn.close()
    db.close()
    db_bytes = size_on_disk(path)
    peak_rss_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    remove_database(path)
    version = getattr(module, "__version__", None)
    return {"seconds": seconds, "nodes": nodes, "edges": edges,
            "peak_rss_bytes": peak_rss_bytes, "db_bytes": db_bytes, "version": version}


def run_plexus(data, path):
    import plexusdb
    import pyarrow as pa
    import pyarrow.parquet as pq

    def stream(name):
        parquet = pq.ParquetFile(os.path.join(data, name))
        return pa.RecordBatchReader.from_batches(parquet.schema_arrow, parquet.iter_batches())

    remove_database(path)
    with plexusdb.Database(path) as db, db.connect() as conn:
        conn.execute("CREATE NODE TABLE V(id INT64, PRIMARY KEY(id))")
        conn.execute("CREATE REL TABLE E(FROM V TO V)")
        started = time.perf_counter()
        conn.load_arrow(stream("v.parquet"), label="V", key="id")
        conn.load_arrow(stream("e.parquet"), rel_type="E", src=("V", "src"), dst=("V", "dst"))
        seconds = time.perf_counter() - started
        [(nodes,)] = list(conn.execute("MATCH (v:V) RETURN count(*)"))
        [(edges,)] = list(conn.execute("MATCH ()-[e:E]->() RETURN count(*)"))
    db_bytes = size_on_disk(path)
    peak_rss_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    remove_database(path)
    return {"seconds": seconds, "nodes": nodes, "edges": edges,
            "peak_rss_bytes": peak_rss_bytes, "db_bytes": db_bytes,
            "version": getattr(plexusdb, "__version__", None)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--system", choices=sorted(MODULES), required=True)
    parser.add_argument("--format", choices=["csv", "parquet", "arrow"], default="csv")
    parser.add_argument("--data", required=True, help="directory with v.csv, e.csv, *.parquet")
    parser.add_argument("--db", required=True, help="where to create the database")
    args = parser.parse_args()
    line = {"system": args.system, "format": args.format}
    try:
        data = os.path.abspath(args.data)
        if args.system == "plexus":
            line.update(run_plexus(data, args.db))
        else:
            line.update(run(args.system, args.format, data, args.db))
    except Exception as error:  # a peer that cannot run is reported, not fatal
        line["error"] = f"{type(error).__name__}: {error}"
        remove_database(args.db)
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    sys.exit(main())
