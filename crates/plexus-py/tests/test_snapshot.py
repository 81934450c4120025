"""Snapshots: algorithms as DataFrames, networkx and PyG export, all checked against Cypher."""

import math

import pytest

import plexusdb


def ids(conn, query, params=None):
    return {row[0] for row in conn.execute(query, params)}


def node_id(conn, name):
    return conn.execute("MATCH (p {name: $n}) RETURN id(p)", {"n": name})[0][0]


def test_pagerank_sums_to_one(social, db):
    with db.snapshot() as snap:
        ranks = snap.pagerank(iterations=30, damping=0.85)
        assert list(ranks.columns) == ["node", "score"]
        assert len(ranks) == 6
        assert math.isclose(ranks["score"].sum(), 1.0, rel_tol=1e-9)
        people = snap.pagerank(vertex_labels=["Person"], edge_types=["KNOWS"])
        assert set(people["node"]) == ids(social, "MATCH (p:Person) RETURN id(p)")
        assert math.isclose(people["score"].sum(), 1.0, rel_tol=1e-9)
        # Same numbers as the Cypher procedure.
        cypher = {
            row[0]: row[1]
            for row in social.execute(
                "CALL algo.pagerank({vertexLabels: ['Person'], edgeTypes: ['KNOWS']}) "
                "YIELD node, score RETURN id(node), score"
            )
        }
        assert dict(zip(people["node"], people["score"])) == pytest.approx(cypher)


def test_wcc_matches_cypher_reachability(social, db):
    with db.snapshot() as snap:
        frame = snap.wcc(vertex_labels=["Person"])
    components = dict(zip(frame["node"], frame["component"]))
    # Expected: two nodes share a component iff an undirected path joins them.
    for a in components:
        reachable = ids(
            social,
            "MATCH (a:Person)-[*0..]-(b:Person) WHERE id(a) = $a RETURN DISTINCT id(b)",
            {"a": a},
        )
        assert {b for b in components if components[b] == components[a]} == reachable
        assert components[a] == min(reachable)
    assert len(set(components.values())) == 2


def test_cdlp_lcc_bfs_sssp(social, db):
    ada = node_id(social, "Ada")
    bob, cy = node_id(social, "Bob"), node_id(social, "Cy")
    with db.snapshot() as snap:
        assert list(snap.cdlp(iterations=5).columns) == ["node", "community"]
        lcc = snap.lcc(direction="both")
        assert list(lcc.columns) == ["node", "coefficient"]
        assert lcc["coefficient"].between(0, 1).all()
        depth = snap.bfs(ada, edge_types=["KNOWS"])
        assert dict(zip(depth["node"], depth["depth"])) == {ada: 0, bob: 1, cy: 2}
        (ada_node,), = social.execute("MATCH (a {name: 'Ada'}) RETURN a")
        distance = snap.sssp(ada_node, "weight")
        assert dict(zip(distance["node"], distance["distance"])) == {ada: 0.0, bob: 1.0, cy: 3.5}


def test_bad_options_are_argument_errors(social, db):
    with db.snapshot() as snap:
        with pytest.raises(plexusdb.CypherArgumentError, match="NoSuchLabel"):
            snap.pagerank(vertex_labels=["NoSuchLabel"])
        with pytest.raises(plexusdb.CypherArgumentError, match="direction"):
            snap.lcc(direction="sideways")
        with pytest.raises(plexusdb.CypherArgumentError):
            snap.pagerank(damping=2.0)
        with pytest.raises(ValueError):
            snap.bfs(-1)


def test_snapshot_is_pinned(social, db):
    with db.snapshot() as snap:
        social.execute("CREATE (:Person {name: 'Late'})")
        assert len(snap.wcc(vertex_labels=["Person"])) == 5
        assert snap.to_networkx(vertex_labels=["Person"]).number_of_nodes() == 5
    with db.snapshot() as fresh:
        assert len(fresh.wcc(vertex_labels=["Person"])) == 6


def test_to_networkx_matches_cypher(social, db):
    with db.snapshot() as snap:
        graph = snap.to_networkx()
        knows = snap.to_networkx(vertex_labels=["Person"], edge_types=["KNOWS"], properties=False)
        undirected = snap.to_networkx(directed=False, properties=["name"])
    nodes = social.execute("MATCH (n) RETURN count(n)")[0][0]
    rels = social.execute("MATCH ()-[r]->() RETURN count(r)")[0][0]
    assert graph.is_directed() and graph.is_multigraph()
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (nodes, rels)
    (k,), = social.execute("MATCH ({name: 'Ada'})-[k:KNOWS]->() RETURN k")
    assert graph.edges[k.start, k.end, k.id] == {"type": "KNOWS", "since": 2010, "weight": 1.0}
    ada = node_id(social, "Ada")
    assert graph.nodes[ada] == {"labels": ["Person"], "name": "Ada", "age": 36, "active": True}
    assert knows.number_of_edges() == social.execute(
        "MATCH (:Person)-[r:KNOWS]->(:Person) RETURN count(r)"
    )[0][0]
    assert knows.nodes[ada] == {"labels": ["Person"]}
    assert not undirected.is_directed()
    assert undirected.nodes[ada] == {"labels": ["Person"], "name": "Ada"}


def test_to_pyg_numpy_arrays(social, db):
    numpy = pytest.importorskip("numpy")
    with db.snapshot() as snap:
        pyg = snap.to_pyg(vertex_labels=["Person"], edge_types=["KNOWS"], features=["age", "active"])
    edge_index, x, node_ids = pyg["edge_index"], pyg["x"], pyg["node_ids"]
    assert edge_index.dtype == numpy.int64 and edge_index.shape == (2, 4)
    assert x.dtype == numpy.float64 and x.shape == (5, 2)
    assert node_ids.dtype == numpy.int64 and node_ids.shape == (5,)
    people = dict(social.execute("MATCH (p:Person) RETURN id(p), p.name"))
    name_of = {i: people[int(v)] for i, v in enumerate(node_ids)}
    edges = {(name_of[int(s)], name_of[int(t)]) for s, t in edge_index.T}
    expected = set(social.execute("MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.name, b.name"))
    assert edges == expected
    row = {name_of[i]: x[i] for i in range(5)}
    assert row["Ada"].tolist() == [36.0, 1.0]
    assert row["Bob"].tolist() == [41.0, 0.0]
    assert row["Cy"][0] == 29.0 and numpy.isnan(row["Cy"][1])  # no 'active' property


def test_to_pyg_refuses_non_numeric_features(social, db):
    with db.snapshot() as snap:
        with pytest.raises(plexusdb.CypherTypeError, match="feature 'name'"):
            snap.to_pyg(features=["name"])


def test_sssp_needs_weights_on_every_edge(social, db):
    ada = node_id(social, "Ada")
    with db.snapshot() as snap:
        with pytest.raises(plexusdb.CypherArgumentError, match="since"):
            snap.sssp(ada, "since")  # LIKES has no 'since'
        assert len(snap.sssp(ada, "since", edge_types=["KNOWS"])) == 3
