"""Result.to_pandas() and Result.to_arrow(), and their behaviour without the packages."""

import sys

import pytest

import plexusdb


def test_to_pandas(social):
    frame = social.execute(
        "MATCH (p:Person) RETURN p.name AS name, p.age AS age, p AS node ORDER BY name"
    ).to_pandas()
    assert list(frame.columns) == ["name", "age", "node"]
    assert frame["name"].tolist() == ["Ada", "Bob", "Cy", "Dee", "Eve"]
    assert frame["age"].sum() == 36 + 41 + 29 + 52 + 23
    assert isinstance(frame["node"][0], plexusdb.Node)


def test_to_pandas_empty(conn):
    frame = conn.execute("MATCH (n:Nothing) RETURN n.x AS x").to_pandas()
    assert list(frame.columns) == ["x"] and len(frame) == 0


def test_to_arrow(social):
    table = social.execute(
        "MATCH (a:Person {name: 'Ada'})-[k:KNOWS]->(b) "
        "RETURN a.name AS name, a.age AS age, k, b, duration('P1M') AS d"
    ).to_arrow()
    assert table.column_names == ["name", "age", "k", "b", "d"]
    assert table.num_rows == 1
    row = table.to_pylist()[0]
    assert row["name"] == "Ada" and row["age"] == 36
    assert row["k"]["type"] == "KNOWS" and row["k"]["properties"]["since"] == 2010
    assert row["b"]["labels"] == ["Person"] and row["b"]["properties"]["name"] == "Bob"
    assert row["d"] == "P1M"
    import pyarrow

    assert table.schema.field("age").type == pyarrow.int64()


def test_missing_optional_packages_give_clear_import_errors(conn, monkeypatch):
    result = conn.execute("RETURN 1 AS one")
    monkeypatch.setitem(sys.modules, "pandas", None)
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ImportError, match="to_pandas.*pip install pandas"):
        result.to_pandas()
    with pytest.raises(ImportError, match="to_arrow.*pip install pyarrow"):
        result.to_arrow()
    assert list(result) == [(1,)]  # everything else still works
