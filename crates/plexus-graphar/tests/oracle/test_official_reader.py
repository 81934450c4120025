"""Plexus's GraphAr export read back by the official GraphAr library (PyPI `graphar`).

A small graph — two vertex types, an extra label, int64 and string properties, a deleted
vertex (an id hole), two edge types with a property — is created with `plexus shell`, exported
with `plexus export graphar` (once with Parquet payloads, once with CSV ones, both keeping
the Plexus ids as a property), validated with `graphar check` and read back through
`graphar.high_level` (VerticesCollection, EdgesCollection ordered by source and by
destination), and compared with the graph the script created. The official reader looks for one chunk too many when a part's
edge count is a multiple of the chunk size (and for a chunk of an empty part), so the edge
chunk size is chosen so that no part is exactly full or empty.

Run by scripts/test-graphar.sh, which builds the binary and passes it in PLEXUS_BIN.
"""

import os
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import graphar
import pytest
from graphar import high_level

try:
    from graphar._core import AdjListType
except ImportError:  # pragma: no cover - other layouts of the package
    AdjListType = graphar.AdjListType

PEOPLE = 11
VERTEX_CHUNK = 4
DELETED = "p5"


def people():
    """(name, age, is_admin) of every person created, in creation order."""
    return [(f"p{i}", 20 + i, i % 3 == 0) for i in range(PEOPLE)]


def cities():
    return [(f"c{i}", 1000 * (i + 1)) for i in range(3)]


def knows():
    """(src, dst, since) of every KNOWS edge created."""
    edges = []
    for i in range(PEOPLE):
        for step in (1, 2, 4):
            if (i + step) % 3 != 0 or step == 1:
                edges.append((f"p{i}", f"p{(i + step) % PEOPLE}", 2000 + i * 10 + step))
    return edges


def lives_in():
    return [(f"p{i}", f"c{i % 3}", i) for i in range(PEOPLE)]


def cypher_script():
    lines = []
    for name, age, admin in people():
        labels = ":Person:Admin" if admin else ":Person"
        lines.append(f"CREATE ({labels} {{name: '{name}', age: {age}}});")
    for name, population in cities():
        lines.append(f"CREATE (:City {{name: '{name}', population: {population}}});")
    for src, dst, since in knows():
        lines.append(
            f"MATCH (a:Person {{name: '{src}'}}), (b:Person {{name: '{dst}'}}) "
            f"CREATE (a)-[:KNOWS {{since: {since}}}]->(b);"
        )
    for src, dst, years in lives_in():
        lines.append(
            f"MATCH (a:Person {{name: '{src}'}}), (b:City {{name: '{dst}'}}) "
            f"CREATE (a)-[:LIVES_IN {{years: {years}}}]->(b);"
        )
    lines.append(f"MATCH (p:Person {{name: '{DELETED}'}}) DETACH DELETE p;")
    return "\n".join(lines) + "\n"


def plexus(*args, stdin=None):
    binary = os.environ.get("PLEXUS_BIN")
    if not binary:
        pytest.fail("PLEXUS_BIN is not set: run scripts/test-graphar.sh")
    done = subprocess.run(
        [binary, *map(str, args)], input=stdin, capture_output=True, text=True
    )
    assert done.returncode == 0, f"plexus {args}: {done.stdout}\n{done.stderr}"
    return done.stdout


def part_counts(adj_dir: Path):
    counts = []
    for path in sorted(adj_dir.glob("edge_count*")):
        counts.append(struct.unpack("<q", path.read_bytes())[0])
    return counts


def parts_fit_the_official_reader(out: Path, edge_chunk: int):
    for adj_dir in out.glob("edge/*/ordered_by_*"):
        for count in part_counts(adj_dir):
            if count == 0 or count % edge_chunk == 0:
                return False
    return True


@pytest.fixture(scope="module", params=["parquet", "csv"])
def exported(request, tmp_path_factory):
    """The graph file of the export, in each payload format."""
    root = tmp_path_factory.mktemp(f"graphar-{request.param}")
    db = root / "db"
    plexus("shell", db, stdin=cypher_script())
    for edge_chunk in (3, 5, 7, 11, 13):
        out = root / f"out-{edge_chunk}"
        plexus(
            "export", "graphar", db, out,
            "--chunk-size", VERTEX_CHUNK, "--edge-chunk-size", edge_chunk, "--name", "social",
            "--format", request.param, "--keep-ids",
        )
        if parts_fit_the_official_reader(out, edge_chunk):
            return (out / "social.graph.yml").resolve()
    pytest.fail("no edge chunk size avoids full or empty parts for this graph")


def test_graphar_check_says_the_graph_is_valid(exported):
    done = subprocess.run(
        [str(Path(sys.executable).parent / "graphar"), "check", "-p", str(exported)],
        capture_output=True,
        text=True,
    )
    assert "Graph is valid" in done.stdout + done.stderr, done.stdout + done.stderr


def surviving_people():
    return [p for p in people() if p[0] != DELETED]


def test_vertices_read_back_identical(exported):
    graph = graphar.GraphInfo.load(str(exported))
    persons = high_level.VerticesCollection.Make(graph, "Person")
    # Ids are dense, in creation order, the deleted vertex's hole closed.
    got = [(v.id(), v.property("name"), v.property("age")) for v in persons]
    want = [(i, name, age) for i, (name, age, _) in enumerate(surviving_people())]
    assert got == want
    # The kept ids are Plexus's: the offset (low 32 bits) is the creation order, hole included.
    offsets = [v.property("plexus_id") & 0xFFFFFFFF for v in persons]
    assert offsets == [i for i, p in enumerate(people()) if p[0] != DELETED]
    places = high_level.VerticesCollection.Make(graph, "City")
    got = [(v.property("name"), v.property("population")) for v in places]
    assert got == cities()
    assert graph.get_vertex_info("Person").get_labels() == ["Admin"]


def test_edges_read_back_identical(exported):
    graph = graphar.GraphInfo.load(str(exported))
    names = {i: p[0] for i, p in enumerate(surviving_people())}
    city_names = {i: c[0] for i, c in enumerate(cities())}
    alive = set(names.values())

    want = Counter(e for e in knows() if e[0] in alive and e[1] in alive)
    for order in (AdjListType.ordered_by_source, AdjListType.ordered_by_dest):
        collection = high_level.EdgesCollection.Make(graph, "Person", "KNOWS", "Person", order)
        got = Counter(
            (names[e.source()], names[e.destination()], e.property("since")) for e in collection
        )
        assert got == want, order

    collection = high_level.EdgesCollection.Make(
        graph, "Person", "LIVES_IN", "City", AdjListType.ordered_by_source
    )
    got = Counter(
        (names[e.source()], city_names[e.destination()], e.property("years")) for e in collection
    )
    want = Counter(e for e in lives_in() if e[0] in alive)
    assert got == want
