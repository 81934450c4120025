"""The Spark recipe (crates/plexus-graphar/python/plexus_graphar_spark.py) on a Plexus export.

A small graph — 200 pages (the last 50 without out-links: dangling), 20 users who like pages,
two vertex types, an extra label, edge properties, a few hundred edges — is created with
`plexus shell`, which also runs `CALL algo.pagerank` and `CALL algo.degree` with
`writeProperty`, so every vertex carries Plexus's rank and out-degree. `plexus export graphar`
writes the snapshot; PySpark in `local[2]` loads it with the recipe, checks vertices, labels
and edge properties, computes out-degrees and PageRank (Graphalytics: damping 0.85, 20
iterations, dangling rank shared by all) as DataFrame iterations, and compares them with the
exported Plexus values (relative 1e-4).

Run by scripts/test-graphar.sh (PLEXUS_BIN, the graphar venv with pyspark, Java 17).
"""

import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

RECIPE = Path(__file__).resolve().parents[2] / "python" / "plexus_graphar_spark.py"
PAGES = 200
LINKING_PAGES = 150
USERS = 20
ITERATIONS = 20
DAMPING = 0.85

SCRIPT = f"""
UNWIND range(0, {PAGES - 1}) AS i CREATE (:Page {{id: i, title: 'page ' + toString(i)}});
MATCH (p:Page) WHERE p.id % 10 = 0 SET p:Hub;
UNWIND range(0, {USERS - 1}) AS i CREATE (:User {{id: 1000 + i}});
MATCH (a:Page), (b:Page)
  WHERE a.id < {LINKING_PAGES} AND a.id <> b.id AND (a.id * 7 + b.id * 13) % 41 = 0
  CREATE (a)-[:LINKS {{weight: a.id + b.id}}]->(b);
MATCH (u:User), (p:Page) WHERE p.id < 60 AND p.id % {USERS} = u.id - 1000
  CREATE (u)-[:LIKES]->(p);
CALL algo.pagerank({{iterations: {ITERATIONS}, damping: {DAMPING}, writeProperty: 'plexusRank'}})
  YIELD node RETURN count(node);
CALL algo.degree({{writeProperty: 'plexusOutDegree'}}) YIELD node RETURN count(node);
"""


def recipe():
    spec = importlib.util.spec_from_file_location("plexus_graphar_spark", RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plexus(*args, stdin=None):
    binary = os.environ.get("PLEXUS_BIN")
    if not binary:
        pytest.fail("PLEXUS_BIN is not set: run scripts/test-graphar.sh")
    done = subprocess.run([binary, *map(str, args)], input=stdin, capture_output=True, text=True)
    assert done.returncode == 0, f"plexus {args}: {done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def spark():
    if shutil.which("java") is None:
        pytest.fail("java not found: PySpark needs Java 17")
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("plexus-graphar-spark-test")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def graph(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("spark")
    db = root / "db"
    plexus("shell", db, stdin=SCRIPT)
    out = root / "snapshot"
    plexus("export", "graphar", db, out, "--chunk-size", 64, "--name", "web")
    return recipe().load(spark, str(out / "web.graph.yml"))


def test_vertices_labels_and_edges(graph):
    assert sorted(graph.vertices) == ["Page", "User"]
    assert sorted(graph.edges) == [("Page", "LINKS", "Page"), ("User", "LIKES", "Page")]
    pages = {r["id"]: r for r in graph.vertices["Page"].collect()}
    assert sorted(pages) == list(range(PAGES))
    assert sorted(r["_graphArVertexIndex"] for r in pages.values()) == list(range(PAGES))
    assert pages[7]["title"] == "page 7"
    assert sorted(i for i, r in pages.items() if r["Hub"]) == list(range(0, PAGES, 10))
    assert graph.vertices["User"].count() == USERS

    index_to_id = {r["_graphArVertexIndex"]: i for i, r in pages.items()}
    links = sorted(
        (index_to_id[r["_graphArSrcIndex"]], index_to_id[r["_graphArDstIndex"]], r["weight"])
        for r in graph.edges[("Page", "LINKS", "Page")].collect()
    )
    expected = sorted(
        (a, b, a + b)
        for a in range(LINKING_PAGES)
        for b in range(PAGES)
        if a != b and (a * 7 + b * 13) % 41 == 0
    )
    assert links == expected
    assert 300 <= len(links) <= 1000
    assert graph.edges[("User", "LIKES", "Page")].count() == 60


def plexus_values(graph, column):
    """{(type, index): the value Plexus wrote as `column`} over every vertex."""
    return {
        (vtype, r["_graphArVertexIndex"]): r[column]
        for vtype, frame in graph.vertices.items()
        for r in frame.select("_graphArVertexIndex", column).collect()
    }


def test_out_degrees_match_plexus(graph):
    spark_degrees = {
        (r["type"], r["index"]): r["out_degree"]
        for r in recipe().out_degrees(graph).collect()
    }
    assert spark_degrees == plexus_values(graph, "plexusOutDegree")
    assert sum(1 for d in spark_degrees.values() if d == 0) >= PAGES - LINKING_PAGES


def test_pagerank_matches_plexus(graph):
    ranks = recipe().pagerank(graph, damping=DAMPING, iterations=ITERATIONS).collect()
    spark_ranks = {(r["type"], r["index"]): r["rank"] for r in ranks}
    plexus_ranks = plexus_values(graph, "plexusRank")
    assert spark_ranks.keys() == plexus_ranks.keys()
    assert abs(sum(spark_ranks.values()) - 1.0) < 1e-9
    for vertex, rank in plexus_ranks.items():
        assert spark_ranks[vertex] == pytest.approx(rank, rel=1e-4), vertex
