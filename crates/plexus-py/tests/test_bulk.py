"""Bulk loading from Arrow and pandas: `conn.load_arrow` / `conn.load_pandas` for nodes and
relationships, read through the Arrow C stream interface and committed at once."""

import datetime

import pandas as pd
import pyarrow as pa
import pytest

import plexusdb


def test_nodes_and_relationships_from_pyarrow_tables(conn):
    conn.execute("CREATE NODE TABLE Person(id INT64, name STRING, born DATE, PRIMARY KEY (id))")
    people = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "name": ["Ada", None, "Cy"],
            "born": pa.array([datetime.date(1815, 12, 10), None, datetime.date(2000, 1, 1)]),
        }
    )
    summary = conn.load_arrow(people, label="Person")
    assert summary["nodes"] == 3 and summary["relationships"] == 0
    assert summary["commit_ts"] > 0
    knows = pa.table({"a": [1, 2], "b": [2, 3], "weight": [0.5, None]})
    summary = conn.load_arrow(knows, rel_type="KNOWS", src=("Person", "a"), dst=("Person", "b"))
    assert (summary["nodes"], summary["relationships"]) == (0, 2)
    rows = conn.execute(
        "MATCH (a:Person)-[k:KNOWS]->(b:Person) RETURN a.id, b.id, k.weight ORDER BY a.id"
    ).rows
    assert rows == [(1, 2, 0.5), (2, 3, None)]
    rows = conn.execute("MATCH (p:Person) RETURN p.id, p.name, p.born ORDER BY p.id").rows
    assert rows == [
        (1, "Ada", datetime.date(1815, 12, 10)),
        (2, None, None),
        (3, "Cy", datetime.date(2000, 1, 1)),
    ]


def test_pandas_frames_with_a_key_on_an_undeclared_label(conn):
    cities = pd.DataFrame({"code": ["OSL", "BER"], "population": [700_000, 3_600_000]})
    assert conn.load_pandas(cities, label="City", key="code")["nodes"] == 2
    # The key was declared as a constraint, so relationships can find the nodes by it.
    assert conn.execute("SHOW CONSTRAINTS").dicts()[0]["labelsOrTypes"] == ["City"]
    routes = pd.DataFrame({"from": ["OSL"], "to": ["BER"], "km": [840]})
    conn.load_pandas(routes, rel_type="ROUTE", src=("City", "from"), dst=("City", "to"))
    rows = conn.execute("MATCH (a:City)-[r:ROUTE]->(b:City) RETURN a.code, r.km, b.code").rows
    assert rows == [("OSL", 840, "BER")]


def test_a_stream_from_a_record_batch_reader(conn):
    schema = pa.schema([("n", pa.int64())])
    batches = (pa.record_batch([pa.array(range(i * 100, i * 100 + 100))], schema=schema) for i in range(5))
    reader = pa.RecordBatchReader.from_batches(schema, batches)
    assert conn.load_arrow(reader, label=["Num", "Tagged"])["nodes"] == 500
    assert conn.execute("MATCH (n:Num:Tagged) RETURN count(n), sum(n.n)").rows == [
        (500, sum(range(500)))
    ]


def test_bad_rows_raise_and_leave_nothing(conn):
    conn.execute("CREATE NODE TABLE P(id INT64, age INT64, PRIMARY KEY (id))")
    wrong_type = pa.table({"id": [1, 2], "age": ["old", "young"]})
    with pytest.raises(plexusdb.Error) as caught:
        conn.load_arrow(wrong_type, label="P")
    assert "row 1" in str(caught.value)
    assert conn.execute("MATCH (p:P) RETURN count(p)").rows == [(0,)]
    conn.load_arrow(pa.table({"id": [1, 2], "age": [30, 40]}), label="P")
    missing = pa.table({"s": [1, 2], "d": [2, 99]})
    with pytest.raises(plexusdb.Error) as caught:
        conn.load_arrow(missing, rel_type="R", src=("P", "s"), dst=("P", "d"))
    assert "row 2" in str(caught.value) and "99" in str(caught.value)
    assert conn.execute("MATCH ()-[r:R]->() RETURN count(r)").rows == [(0,)]
    duplicate = pa.table({"id": [3, 1], "age": [1, 1]})
    with pytest.raises(plexusdb.Error):
        conn.load_arrow(duplicate, label="P")
    assert conn.execute("MATCH (p:P) RETURN count(p)").rows == [(2,)]


def test_arguments_and_transactions_are_checked(conn):
    table = pa.table({"id": [1]})
    with pytest.raises(plexusdb.Error):
        conn.load_arrow(table)
    with pytest.raises(plexusdb.Error):
        conn.load_arrow(table, label="A", rel_type="R")
    with pytest.raises(plexusdb.Error):
        conn.load_arrow([1, 2, 3], label="A")
    conn.begin()
    with pytest.raises(plexusdb.Error) as caught:
        conn.load_arrow(table, label="A")
    assert "transaction" in str(caught.value)
    conn.rollback()
