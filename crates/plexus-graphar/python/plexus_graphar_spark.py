"""A GraphAr graph (such as a Plexus export) as PySpark DataFrames, read with Spark's own
Parquet reader; and out-degrees and PageRank (the Graphalytics definition) on them.

Why: there is no GraphAr jar for Spark in Maven Central, and GraphFrames/GraphX normalise
PageRank and treat dangling vertices differently from Plexus's `algo.pagerank`. A GraphAr
graph is YAML metadata over plain Parquet chunks, so this module reads the YAML with PyYAML on
the driver and hands the chunk directories to `spark.read.parquet` (docs/graphar.md, "Spark").

    from pyspark.sql import SparkSession
    import plexus_graphar_spark as gs

    spark = SparkSession.builder.master("local[2]").getOrCreate()
    graph = gs.load(spark, "/data/snap/snap.graph.yml")
    graph.vertices["Person"]          # _graphArVertexIndex, properties…, one boolean per label
    graph.edges[("Person", "KNOWS", "Person")]   # _graphArSrcIndex, _graphArDstIndex, properties…
    gs.pagerank(graph, damping=0.85, iterations=20)   # type, index, rank

What it reads, and how:
- `vertices[type]`: every property group's directory (`chunk<i>` files) joined on
  `_graphArVertexIndex`; label chunks (no index column) are numbered from the chunk's number
  and Spark's `_metadata.row_index` (Spark 3.5+). A type without property groups is
  `spark.range(vertex_count)`.
- `edges[(src, edge, dst)]`: one adjacency list — ordered by source when there is one — read
  with `recursiveFileLookup` over its `part<v>/chunk<k>` files; edge property chunks are
  aligned row for row with the adjacency chunks, so they are joined on (part, chunk,
  `_metadata.row_index`). Indices are per vertex type: a vertex is (type, index).
- Only Parquet payloads (what Plexus writes); other file types raise `ValueError` naming the
  file. `directed: false` edges are returned as stored (once); the analytics treat every edge
  as directed, as Plexus's export writes them.
- The metadata files, and each type's `vertex_count` when it has no property group, are read
  on the driver with plain file I/O: on a cluster the graph lives on storage mounted at the
  same path on the driver and every executor.
"""

import os
import struct
from dataclasses import dataclass, field

import yaml
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

VERTEX_INDEX = "_graphArVertexIndex"
SRC_INDEX = "_graphArSrcIndex"
DST_INDEX = "_graphArDstIndex"

_ADJ_PREFIXES = {
    (True, "src"): "ordered_by_source/",
    (True, "dst"): "ordered_by_dest/",
    (False, "src"): "unordered_by_source/",
    (False, "dst"): "unordered_by_dest/",
}


@dataclass
class SparkGraph:
    """A loaded graph: its name, vertices by type, edges by (source, edge, destination)."""

    name: str
    vertices: dict = field(default_factory=dict)
    edges: dict = field(default_factory=dict)


def _yaml(path):
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a GraphAr metadata file (expected a mapping)")
    return doc


def _group_prefix(group):
    names = [p["name"] for p in group.get("properties") or []]
    return group.get("prefix") or "_".join(names) + "/"


def _parquet_only(group, path):
    file_type = group.get("file_type", "parquet")
    if file_type != "parquet":
        raise ValueError(f"{path}: {file_type} payloads are not read by this recipe (Parquet only)")


def _read_count(path):
    with open(path, "rb") as f:
        raw = f.read(8)
    if len(raw) != 8:
        raise ValueError(f"{path}: a count is 8 bytes, little-endian int64")
    return struct.unpack("<q", raw)[0]


def _chunk_number(column):
    return F.regexp_extract(column, r"chunk(\d+)$", 1).cast("long")


def load_vertices(spark: SparkSession, root: str, vertex_yml: str) -> tuple:
    """(type, DataFrame) of one vertex YAML file (see the module docs)."""
    info = _yaml(vertex_yml)
    vtype = info.get("type", info.get("label"))
    prefix = os.path.join(root, info.get("prefix") or f"{vtype}/")
    frame = None
    for group in info.get("property_groups") or []:
        directory = os.path.join(prefix, _group_prefix(group))
        _parquet_only(group, directory)
        columns = [VERTEX_INDEX] + [p["name"] for p in group.get("properties") or []]
        part = spark.read.parquet(directory).select(*columns)
        frame = part if frame is None else frame.join(part, VERTEX_INDEX)
    if frame is None:
        count = _read_count(os.path.join(prefix, "vertex_count"))
        frame = spark.range(count).withColumnRenamed("id", VERTEX_INDEX)
    labels = info.get("labels") or []
    if labels:
        chunk_size = int(info["chunk_size"])
        flags = spark.read.parquet(os.path.join(prefix, "labels")).select(
            (
                _chunk_number(F.col("_metadata.file_name")) * chunk_size
                + F.col("_metadata.row_index")
            ).alias(VERTEX_INDEX),
            *labels,
        )
        frame = frame.join(flags, VERTEX_INDEX, "left")
    return vtype, frame


def load_edges(spark: SparkSession, root: str, edge_yml: str) -> tuple:
    """((source type, edge type, destination type), DataFrame) of one edge YAML file."""
    info = _yaml(edge_yml)
    src = info.get("src_type", info.get("src_label"))
    edge = info.get("edge_type", info.get("edge_label"))
    dst = info.get("dst_type", info.get("dst_label"))
    prefix = os.path.join(root, info.get("prefix") or f"{src}_{edge}_{dst}/")
    adj_lists = info.get("adj_lists") or []
    if not adj_lists:
        raise ValueError(f"{edge_yml}: no adjacency list")
    by_source = [a for a in adj_lists if a.get("aligned_by", "src") == "src"]
    adj = (by_source or adj_lists)[0]
    key = (bool(adj.get("ordered", False)), adj.get("aligned_by", "src"))
    adj_dir = os.path.join(prefix, adj.get("prefix") or _ADJ_PREFIXES[key])
    _parquet_only(adj, adj_dir)

    def chunks(directory, columns):
        # Row r of chunk k of part v: the key that aligns adjacency and property chunks.
        path = F.col("_metadata.file_path")
        return (
            spark.read.option("recursiveFileLookup", "true")
            .parquet(directory)
            .select(
                F.regexp_extract(path, r"part(\d+)/chunk\d+$", 1).cast("long").alias("_part"),
                _chunk_number(path).alias("_chunk"),
                F.col("_metadata.row_index").alias("_row"),
                *columns,
            )
        )

    frame = chunks(os.path.join(adj_dir, "adj_list"), [SRC_INDEX, DST_INDEX])
    for group in info.get("property_groups") or []:
        directory = os.path.join(adj_dir, _group_prefix(group))
        _parquet_only(group, directory)
        names = [p["name"] for p in group.get("properties") or []]
        frame = frame.join(chunks(directory, names), ["_part", "_chunk", "_row"], "left")
    return (src, edge, dst), frame.drop("_part", "_chunk", "_row")


def load(spark: SparkSession, graph_yml: str) -> SparkGraph:
    """Every vertex type and edge triple of the graph whose `NAME.graph.yml` is `graph_yml`."""
    graph_yml = os.path.abspath(graph_yml)
    folder = os.path.dirname(graph_yml)
    info = _yaml(graph_yml)
    root = os.path.join(folder, info.get("prefix") or "")
    graph = SparkGraph(name=info.get("name", ""))
    for name in info.get("vertices") or []:
        vtype, frame = load_vertices(spark, root, os.path.join(folder, name))
        graph.vertices[vtype] = frame
    for name in info.get("edges") or []:
        triple, frame = load_edges(spark, root, os.path.join(folder, name))
        graph.edges[triple] = frame
    return graph


def vertex_ids(graph: SparkGraph) -> DataFrame:
    """Every vertex as (type, index)."""
    frames = [
        frame.select(F.lit(vtype).alias("type"), F.col(VERTEX_INDEX).alias("index"))
        for vtype, frame in graph.vertices.items()
    ]
    if not frames:
        raise ValueError(f"the graph {graph.name!r} has no vertex types")
    return _union(frames)


def edge_ids(graph: SparkGraph) -> DataFrame:
    """Every edge as (src_type, src, dst_type, dst), parallel edges kept."""
    frames = [
        frame.select(
            F.lit(src).alias("src_type"),
            F.col(SRC_INDEX).alias("src"),
            F.lit(dst).alias("dst_type"),
            F.col(DST_INDEX).alias("dst"),
        )
        for (src, _, dst), frame in graph.edges.items()
    ]
    if not frames:
        spark = vertex_ids(graph).sparkSession
        schema = "src_type string, src long, dst_type string, dst long"
        return spark.createDataFrame([], schema)
    return _union(frames)


def _union(frames):
    result = frames[0]
    for frame in frames[1:]:
        result = result.unionByName(frame)
    return result


def out_degrees(graph: SparkGraph) -> DataFrame:
    """(type, index, out_degree) of every vertex; 0 for vertices without out-edges."""
    counts = (
        edge_ids(graph)
        .groupBy(F.col("src_type").alias("type"), F.col("src").alias("index"))
        .agg(F.count(F.lit(1)).alias("out_degree"))
    )
    return (
        vertex_ids(graph)
        .join(counts, ["type", "index"], "left")
        .select("type", "index", F.coalesce("out_degree", F.lit(0)).alias("out_degree"))
    )


def pagerank(graph: SparkGraph, damping: float = 0.85, iterations: int = 20) -> DataFrame:
    """(type, index, rank): PageRank as Graphalytics defines it, in exactly `iterations`
    DataFrame iterations. PR0 = 1/n; each iteration

        PR(v) = (1 - d)/n + d * sum over u->v of PR(u)/outdeg(u) + d/n * sum of PR(w), outdeg(w) = 0

    so the rank of dangling vertices goes to every vertex and ranks keep summing to 1.
    """
    vertices = vertex_ids(graph).cache()
    n = vertices.count()
    degrees = out_degrees(graph).cache()
    edges = edge_ids(graph).cache()
    ranks = vertices.withColumn("rank", F.lit(1.0 / n))
    for _ in range(iterations):
        with_degree = ranks.join(degrees, ["type", "index"])
        dangling = (
            with_degree.where(F.col("out_degree") == 0).agg(F.sum("rank")).first()[0] or 0.0
        )
        shares = with_degree.where(F.col("out_degree") > 0).select(
            F.col("type").alias("src_type"),
            F.col("index").alias("src"),
            (F.col("rank") / F.col("out_degree")).alias("share"),
        )
        incoming = (
            edges.join(shares, ["src_type", "src"])
            .groupBy(F.col("dst_type").alias("type"), F.col("dst").alias("index"))
            .agg(F.sum("share").alias("incoming"))
        )
        base = (1.0 - damping) / n + damping * dangling / n
        ranks = (
            vertices.join(incoming, ["type", "index"], "left")
            .select(
                "type",
                "index",
                (F.lit(base) + damping * F.coalesce("incoming", F.lit(0.0))).alias("rank"),
            )
            # Cut the lineage: each iteration's plan stays one iteration deep.
            .localCheckpoint()
        )
    return ranks
