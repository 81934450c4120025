"""ATTACH GRAPHAR … AS name and USE name … through the Neo4j driver, on a `plexus serve`
(which registers the GRAPHAR format at start): a graph exported into the server's directory is
attached from under the import directory only, read with USE (also in a driver session), and
refused for writes; escapes are client errors that name no server path.

The equality of answers with the database the graph came from is tested in Rust
(crates/plexus-graphar/tests/attach_cypher.rs); here the point is the server side."""

import os

import neo4j
import pytest
from neo4j.exceptions import ClientError

from conftest import PASSWORD, USER, Server


@pytest.fixture(scope="module")
def serving(tmp_path_factory):
    base = tmp_path_factory.mktemp("attach-bolt")
    files = base / "files"
    files.mkdir()
    outside = base / "outside"
    outside.mkdir()
    os.symlink(outside, files / "escape")
    srv = Server(
        base / "db",
        "--user",
        f"{USER}:{PASSWORD}",
        "--set",
        f"export_directory={files}",
        "--set",
        f"import_directory={files}",
    )
    with neo4j.GraphDatabase.driver(srv.uri, auth=(USER, PASSWORD)) as driver:
        driver.execute_query(
            "UNWIND range(0, 49) AS i CREATE (:Person {id: i})-[:OWNS {w: i}]->(:Thing {n: i * 2})"
        )
        driver.execute_query("CALL db.export.graphar('lake', {chunkSize: 16})")
        # The same files outside the import directory, reachable only by escaping it.
        os.rename(files / "lake", outside / "lake")
        driver.execute_query("CALL db.export.graphar('lake', {chunkSize: 16})")
        yield driver, files, outside
    assert srv.stop() == 0


def test_attach_use_and_detach(serving):
    driver, _, _ = serving
    records, _, _ = driver.execute_query(
        "ATTACH GRAPHAR 'lake/lake.graph.yml' AS lake"
    )
    assert [tuple(r.values()) for r in records] == [
        ("lake", "GRAPHAR", "lake/lake.graph.yml", 100, 50)
    ]
    try:
        records, _, _ = driver.execute_query(
            "USE lake MATCH (p:Person)-[o:OWNS]->(t:Thing) WHERE p.id < 3 "
            "RETURN p.id AS id, o.w AS w, t.n AS n ORDER BY id"
        )
        assert [tuple(r.values()) for r in records] == [(0, 0, 0), (1, 1, 2), (2, 2, 4)]
        with driver.session() as session:
            got = session.run(
                "USE lake MATCH (t:Thing)<-[:OWNS]-(p) RETURN count(*) AS c"
            ).single()["c"]
            assert got == 50
            shown = [r["name"] for r in session.run("SHOW GRAPHS")]
            assert shown == ["lake"]
        with pytest.raises(ClientError) as caught:
            driver.execute_query("USE lake CREATE (:Person {id: 99})")
        assert "GraphIsReadOnly" in (caught.value.code or "") + (caught.value.message or "")
        # The database itself is what statements without USE read.
        records, _, _ = driver.execute_query("MATCH (p:Person) RETURN count(p) AS c")
        assert records[0]["c"] == 50
    finally:
        driver.execute_query("DETACH GRAPH lake")
    with pytest.raises(ClientError) as caught:
        driver.execute_query("USE lake MATCH (n) RETURN n")
    assert "GraphNotFound" in (caught.value.code or "") + (caught.value.message or "")


@pytest.mark.parametrize(
    "target",
    ["../outside/lake/lake.graph.yml", "escape/lake/lake.graph.yml", "file:///../x.graph.yml"],
)
def test_escapes_are_refused_without_naming_server_paths(serving, target):
    driver, files, outside = serving
    with pytest.raises(ClientError) as caught:
        driver.execute_query(f"ATTACH GRAPHAR '{target}' AS out")
    message = caught.value.message or ""
    assert "FileLocationRefused" in (caught.value.code or "") + message, caught.value
    assert str(files) not in message and str(outside) not in message


def test_an_unreadable_graph_names_only_the_relative_file(serving):
    driver, files, _ = serving
    (files / "broken.graph.yml").write_text("name: broken\nvertices: [nope.vertex.yml]\n")
    with pytest.raises(ClientError) as caught:
        driver.execute_query("ATTACH GRAPHAR 'broken.graph.yml' AS broken")
    message = caught.value.message or ""
    assert "nope.vertex.yml" in message, message
    assert str(files) not in message, message
