"""Rows, columns, graph element classes and value conversion in both directions."""

import datetime
import zoneinfo

import pytest

import plexusdb


def test_rows_are_tuples_in_column_order(social):
    result = social.execute(
        "MATCH (p:Person) WHERE p.age > $min RETURN p.name AS name, p.age AS age ORDER BY age",
        {"min": 30},
    )
    assert result.columns == ["name", "age"]
    assert list(result) == [("Ada", 36), ("Bob", 41), ("Dee", 52)]
    assert len(result) == 3
    assert result[0] == ("Ada", 36)
    assert result[-1] == ("Dee", 52)
    assert result.rows == list(result)
    assert result.dicts()[1] == {"name": "Bob", "age": 41}


def test_empty_result_and_write_only_statement(conn):
    result = conn.execute("CREATE (:Thing)")
    assert len(result) == 0 and list(result) == []
    result = conn.execute("MATCH (n:Nothing) RETURN n")
    assert result.columns == ["n"] and len(result) == 0


def test_nodes_relationships_paths(social):
    (a, k, b, p), = social.execute(
        "MATCH p = (a:Person {name: 'Ada'})-[k:KNOWS]->(b) RETURN a, k, b, p"
    )
    assert isinstance(a, plexusdb.Node)
    assert a.labels == ("Person",)
    assert a.properties == {"name": "Ada", "age": 36, "active": True}
    assert a["name"] == "Ada" and a.get("missing") is None and a.get("missing", 7) == 7
    with pytest.raises(KeyError):
        a["missing"]
    assert isinstance(k, plexusdb.Relationship)
    assert (k.type, k.start, k.end) == ("KNOWS", a.id, b.id)
    assert k.properties == {"since": 2010, "weight": 1.0}
    assert isinstance(p, plexusdb.Path)
    assert p.nodes == (a, b) and p.relationships == (k,) and len(p) == 1
    # ids are Cypher's id()
    (node_id, rel_id), = social.execute(
        "MATCH (a:Person {name: 'Ada'})-[k:KNOWS]->() RETURN id(a), id(k)"
    )
    assert (a.id, k.id) == (node_id, rel_id)
    assert a.to_dict() == {"id": a.id, "labels": ["Person"], "properties": a.properties}
    assert {a, a} == {a} and a != b and "Node(id=" in repr(a)


def test_elements_as_parameters(social):
    (ada,), = social.execute("MATCH (a:Person {name: 'Ada'}) RETURN a")
    (name,), = social.execute("MATCH (a) WHERE a = $node RETURN a.name", {"node": ada})
    assert name == "Ada"
    (name,), = social.execute("MATCH (a) WHERE id(a) = $id RETURN a.name", {"id": ada.id})
    assert name == "Ada"
    (element_id, rel, rel_id), = social.execute(
        "MATCH (a {name: 'Ada'})-[r:KNOWS]->() RETURN elementId(a), r, elementId(r)"
    )
    assert element_id == ada.element_id and element_id.startswith("v")
    assert rel.element_id == rel_id and rel_id.startswith("e")
    (name,), = social.execute(
        "MATCH (a) WHERE elementId(a) = $e RETURN a.name", {"e": ada.element_id}
    )
    assert name == "Ada"


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -(2**63),
        2**63 - 1,
        1.5,
        float("inf"),
        "",
        "naïve ünïcode ✓",
        [],
        [1, "two", None, [3.0]],
        {"a": 1, "nested": {"b": [True]}},
        datetime.date(2024, 2, 29),
        datetime.time(23, 59, 58, 123456),
        datetime.time(8, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
        datetime.datetime(1999, 12, 31, 23, 59, 59, 999999),
        datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc),
        datetime.datetime(2024, 7, 1, 12, tzinfo=zoneinfo.ZoneInfo("Europe/Stockholm")),
        datetime.timedelta(days=3, seconds=5, microseconds=7),
        datetime.timedelta(days=-1, seconds=86399),
    ],
)
def test_parameter_round_trip(conn, value):
    (back,), = conn.execute("RETURN $v AS v", {"v": value})
    assert back == value
    assert type(back) is type(value)
    if isinstance(value, (datetime.datetime, datetime.time)) and value.tzinfo is not None:
        assert back.utcoffset() == value.utcoffset()


def test_tuples_and_numpy_integers_as_parameters(conn):
    numpy = pytest.importorskip("numpy")
    (back,), = conn.execute("RETURN $v", {"v": (numpy.int64(4), numpy.float64(0.5))})
    assert back == [4, 0.5]


def test_stored_values_round_trip(conn):
    props = {
        "i": 7,
        "f": 2.25,
        "s": "x",
        "b": True,
        "l": [1, 2, 3],
        "d": datetime.date(2020, 1, 2),
        "dt": datetime.datetime(2020, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
    }
    conn.execute("CREATE (n:T) SET n = $props", {"props": props})
    (node,), = conn.execute("MATCH (n:T) RETURN n")
    assert node.properties == props


def test_temporal_values_from_cypher(conn):
    (date, ltime, time, ldt, dt, zoned, short, long), = conn.execute(
        """
        RETURN date('2015-07-21'), localtime('12:31:14.645876'), time('12:31:14+01:00'),
               localdatetime('2015-07-21T21:40:32.142'),
               datetime('2015-07-21T21:40:32.142+01:00'),
               datetime('2015-07-21T21:40+02:00[Europe/Stockholm]'),
               duration('PT1H30M'), duration({days: 2, seconds: 1})
        """
    )
    assert date == datetime.date(2015, 7, 21)
    assert ltime == datetime.time(12, 31, 14, 645876)
    assert time == datetime.time(12, 31, 14, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert ldt == datetime.datetime(2015, 7, 21, 21, 40, 32, 142000)
    assert dt.utcoffset() == datetime.timedelta(hours=1)
    assert dt == datetime.datetime(2015, 7, 21, 20, 40, 32, 142000, tzinfo=datetime.timezone.utc)
    assert zoned.tzinfo == zoneinfo.ZoneInfo("Europe/Stockholm")
    assert zoned.utcoffset() == datetime.timedelta(hours=2)
    assert short == datetime.timedelta(hours=1, minutes=30)
    assert long == datetime.timedelta(days=2, seconds=1)


def test_temporal_values_without_an_exact_python_type(conn):
    (nanos, far, months), = conn.execute(
        "RETURN localtime('12:00:00.123456789'), date('+12345-01-01'), duration('P1Y2M3DT4S')"
    )
    assert isinstance(nanos, plexusdb.Temporal)
    assert nanos.kind == "LOCAL TIME" and str(nanos) == "12:00:00.123456789"
    assert isinstance(far, plexusdb.Temporal) and far.kind == "DATE"
    assert isinstance(months, plexusdb.Duration)
    assert (months.months, months.days, months.seconds, months.nanoseconds) == (14, 3, 4, 0)
    assert str(months) == "P1Y2M3DT4S"
    # The wrappers are exact parameters.
    (same_nanos, same_months), = conn.execute(
        "RETURN $t = localtime('12:00:00.123456789'), $d = duration('P1Y2M3DT4S')",
        {"t": nanos, "d": months},
    )
    assert same_nanos and same_months
    (built,), = conn.execute("RETURN $d", {"d": plexusdb.Duration(months=1, nanoseconds=5)})
    assert built == plexusdb.Duration(months=1, nanoseconds=5)


@pytest.mark.parametrize(
    "bad, error",
    [
        (object(), TypeError),
        ({1: "int key"}, TypeError),
        (2**64, ValueError),
        ({1, 2}, TypeError),
    ],
)
def test_unsupported_parameters(conn, bad, error):
    with pytest.raises(error):
        conn.execute("RETURN $v", {"v": bad})


def test_self_referencing_parameter_is_refused(conn):
    loop = []
    loop.append(loop)
    with pytest.raises(ValueError, match="deeper than 64"):
        conn.execute("RETURN $v", {"v": loop})


def test_stream_yields_rows_batch_by_batch_from_one_snapshot(db, conn):
    conn.execute("UNWIND range(1, 5000) AS i CREATE (:Item {i: i})")
    stream = conn.stream("MATCH (n:Item) RETURN n.i AS i, n AS node")
    assert stream.columns == ["i", "node"]
    first = next(stream)
    assert isinstance(first[1], plexusdb.Node) and first[1]["i"] == first[0]
    with db.connect() as writer:
        writer.execute("MATCH (n:Item) DELETE n")
    rest = [i for i, _ in stream]
    assert sorted([first[0]] + rest) == list(range(1, 5001)), "rows as of the stream's start"
    assert list(stream) == [], "an exhausted stream stays empty"
    assert conn.execute("MATCH (n:Item) RETURN count(n)")[0] == (0,)


def test_stream_writes_run_inside_stream_and_errors_surface_in_next(conn):
    stream = conn.stream("UNWIND range(1, 3) AS i CREATE (n:W {i: i}) RETURN n.i")
    stream.close()
    assert conn.execute("MATCH (n:W) RETURN count(n)")[0] == (3,), "committed in stream()"
    with pytest.raises(plexusdb.CypherArgumentError):
        conn.stream("UNWIND [1, 0] AS x CREATE (:W {v: 1 / x})")
    failing = conn.stream("UNWIND range(0, 5000) AS i RETURN 10 / (i - 4000)")
    with pytest.raises(plexusdb.CypherArgumentError, match="zero"):
        for _ in failing:
            pass


def test_stream_in_a_transaction_must_be_consumed_before_the_next_statement(conn):
    conn.begin()
    conn.execute("UNWIND range(1, 5000) AS i CREATE (:T {i: i})")
    stale = conn.stream("MATCH (n:T) RETURN n.i")
    next(stale)
    conn.execute("MATCH (n:T) DELETE n")
    with pytest.raises(plexusdb.TransactionError) as error:
        list(stale)
    assert error.value.code == "ResultConsumed"
    assert conn.in_transaction
    conn.rollback()
