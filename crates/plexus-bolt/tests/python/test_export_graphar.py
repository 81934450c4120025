"""CALL db.export.graphar through the Neo4j driver, on a `plexus serve` (which registers the
procedure at start): the snapshot lands under the server's export directory only, the yielded
paths are relative to it (an absolute path names a directory under it, as in LOAD CSV), escapes
are refused as client errors (FileLocationRefused) that name no server path, bad options are
InvalidArgumentValue, and writers keep committing while it runs.

The files themselves are checked against the official GraphAr library in
crates/plexus-graphar/tests/oracle; here the point is the server side: registration, the
export directory, options from a Bolt client, and errors as the driver sees them."""

import os
import struct
import threading

import neo4j
import pytest
from neo4j.exceptions import ClientError

from conftest import PASSWORD, USER, Server


@pytest.fixture(scope="module")
def serving(tmp_path_factory):
    base = tmp_path_factory.mktemp("graphar-bolt")
    exports = base / "exports"
    exports.mkdir()
    outside = base / "outside"
    outside.mkdir()
    os.symlink(outside, exports / "escape")
    srv = Server(
        base / "db", "--user", f"{USER}:{PASSWORD}", "--set", f"export_directory={exports}"
    )
    with neo4j.GraphDatabase.driver(srv.uri, auth=(USER, PASSWORD)) as driver:
        driver.execute_query(
            "UNWIND range(0, 99) AS i CREATE (:Person {id: i})-[:OWNS]->(:Thing {n: i * 2})"
        )
        yield driver, exports, outside
    assert srv.stop() == 0


def test_export_writes_under_the_export_directory(serving):
    driver, exports, _ = serving
    records, _, _ = driver.execute_query(
        "CALL db.export.graphar('snaps/one', {chunkSize: 16, keepIds: true}) "
        "YIELD directory, graphFile, vertices, edges, vertexTypes, edgeTypes "
        "RETURN directory, graphFile, vertices, edges, vertexTypes, edgeTypes"
    )
    assert [tuple(r.values()) for r in records] == [
        ("snaps/one", "snaps/one/one.graph.yml", 200, 100, 2, 1)
    ]
    root = exports / "snaps" / "one"
    assert (root / "one.graph.yml").is_file()
    count = (root / "vertex" / "Person" / "vertex_count").read_bytes()
    assert struct.unpack("<q", count)[0] == 100
    assert "plexus_id" in (root / "Person.vertex.yml").read_text()


def test_the_options_map_may_be_left_out(serving):
    driver, exports, _ = serving
    records, _, _ = driver.execute_query(
        "CALL db.export.graphar('plain') YIELD graphFile RETURN graphFile"
    )
    assert records[0]["graphFile"] == "plain/plain.graph.yml"
    records, _, _ = driver.execute_query(
        "CALL db.export.graphar('as-csv', {format: 'csv'}) YIELD vertices RETURN vertices"
    )
    assert records[0]["vertices"] == 200
    assert "file_type: csv" in (exports / "as-csv" / "Person.vertex.yml").read_text()


@pytest.mark.parametrize(
    "target", ["../out", "escape/x", "file:///../x", "snaps/../../x", "."]
)
def test_escapes_are_refused_without_naming_server_paths(serving, target):
    driver, exports, outside = serving
    with pytest.raises(ClientError) as caught:
        driver.execute_query("CALL db.export.graphar($t, {})", t=target)
    message = caught.value.message or ""
    assert "FileLocationRefused" in (caught.value.code or "") + message, caught.value
    assert str(exports) not in message and str(outside) not in message
    assert list(outside.iterdir()) == []


def test_an_absolute_path_names_a_directory_under_the_export_directory(serving):
    driver, exports, _ = serving
    records, _, _ = driver.execute_query(
        "CALL db.export.graphar('/abs/snap') YIELD directory RETURN directory"
    )
    assert records[0]["directory"] == "abs/snap"
    assert (exports / "abs" / "snap" / "snap.graph.yml").is_file()


def test_bad_options_are_client_errors(serving):
    driver, _, _ = serving
    for options in ("{chunkSize: 0}", "{format: 'orc'}", "{nope: 1}", "{keepIds: 3}"):
        with pytest.raises(ClientError) as caught:
            driver.execute_query(f"CALL db.export.graphar('bad', {options})")
        assert "InvalidArgumentValue" in (caught.value.code or "") + (
            caught.value.message or ""
        ), options


def test_writers_keep_committing_during_an_export(serving):
    driver, exports, _ = serving
    stop = threading.Event()
    written = []

    def writer():
        with driver.session() as session:
            while not stop.is_set():
                session.run("CREATE (:Person {id: -1})").consume()
                written.append(1)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        records, _, _ = driver.execute_query(
            "CALL db.export.graphar('during') YIELD vertices RETURN vertices"
        )
    finally:
        stop.set()
        thread.join()
    # One snapshot: at least the 200 vertices from the start, and every vertex it counted
    # is in the files (the count file agrees with the yielded number).
    persons = struct.unpack(
        "<q", (exports / "during" / "vertex" / "Person" / "vertex_count").read_bytes()
    )[0]
    assert records[0]["vertices"] == persons + 100
    assert persons >= 100 and written
