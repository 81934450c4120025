"""The official Neo4j Python driver against `plexus serve`.

The fixtures (conftest.py) start `plexus serve` on a temporary directory with port 0 and stop
it at the end. Run through scripts/test-bolt.sh, which builds the binary first.
"""

import datetime
import re
import socket
import subprocess
import sys
import textwrap
import threading

import neo4j
import pytest
import pytz
from neo4j.exceptions import AuthError, ClientError, CypherSyntaxError, TransientError
from neo4j.time import Date, DateTime, Duration, Time

from conftest import PASSWORD, ROOT, SERVER_START_TIMEOUT_S, USER, Server, plexus_bin


def count(driver, label):
    records, _, _ = driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS c")
    return records[0]["c"]


README_URI_LINE = 'uri = "bolt://127.0.0.1:7687"\n'


def readme_bolt_example():
    """The README's ```python block that uses the neo4j driver (found by its import)."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    found = [b for b in blocks if "from neo4j import" in b]
    assert len(found) == 1, "README.md should have one Bolt example (a python block importing neo4j)"
    assert found[0].startswith(README_URI_LINE), "the README's Bolt example starts with its uri"
    return found[0]


def test_readme_example(server, capsys):
    """Runs the README's Bolt example as written, against this test's server."""
    code = readme_bolt_example().replace(README_URI_LINE, f"uri = {server.uri!r}\n", 1)
    exec(compile(code, "<README Bolt example>", "exec"), {"__name__": "__readme__"})
    assert "[{'a': 'Ada', 'since': 2020, 'b': 'Bob'}]" in capsys.readouterr().out
    from neo4j import GraphDatabase

    with GraphDatabase.driver(server.uri, auth=(USER, PASSWORD)) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (a:Person)-[k:KNOWS]->(b:Person) RETURN a.name AS a, k.since AS since, b.name AS b"
        )
        assert [r.data() for r in records] == [{"a": "Ada", "since": 2020, "b": "Bob"}]


def test_verify_connectivity_and_server_info(driver):
    driver.verify_connectivity()
    info = driver.get_server_info()
    assert info.agent.startswith("Plexus/")
    assert info.protocol_version >= (5, 0)


def test_auto_commit_and_summary_counters(driver):
    with driver.session() as session:
        summary = session.run("CREATE (:Auto {i: 1}), (:Auto {i: 2})").consume()
        assert summary.counters.nodes_created == 2
        assert summary.counters.properties_set == 2
        assert summary.counters.contains_updates
        assert session.run("MATCH (n:Auto) RETURN sum(n.i) AS s").single()["s"] == 3


def test_explicit_transactions_commit_and_rollback(driver):
    with driver.session() as session:
        tx = session.begin_transaction()
        tx.run("CREATE (:Tx {v: 'kept'})")
        # the transaction sees its own writes
        assert tx.run("MATCH (n:Tx) RETURN count(n) AS c").single()["c"] == 1
        tx.commit()

        tx = session.begin_transaction()
        tx.run("CREATE (:Tx {v: 'dropped'})")
        tx.rollback()

        with pytest.raises(ZeroDivisionError):
            with session.begin_transaction() as tx:  # leaving by an exception rolls back
                tx.run("CREATE (:Tx {v: 'also dropped'})")
                1 / 0
    assert count(driver, "Tx") == 1


def test_managed_transactions(driver):
    def add(tx, name):
        return tx.run("CREATE (n:Managed {name: $name}) RETURN n.name AS name", name=name).single()["name"]

    with driver.session() as session:
        assert session.execute_write(add, "m1") == "m1"
        names = session.execute_read(
            lambda tx: [r["name"] for r in tx.run("MATCH (n:Managed) RETURN n.name AS name")]
        )
    assert names == ["m1"]


def test_streaming_in_batches(driver):
    with driver.session(fetch_size=7) as session:
        result = session.run("UNWIND range(1, 1000) AS i RETURN i")
        assert [r["i"] for r in result] == list(range(1, 1000 + 1))
        # a partly consumed result is discarded by the next statement
        partial = session.run("UNWIND range(1, 100) AS i RETURN i")
        assert next(iter(partial))["i"] == 1
        assert session.run("RETURN 42 AS x").single()["x"] == 42
        # two results open in one transaction, pulled alternately
        with session.begin_transaction() as tx:
            a = tx.run("UNWIND range(1, 20) AS i RETURN i")
            b = tx.run("UNWIND range(101, 120) AS i RETURN i")
            assert [r["i"] for r in b] == list(range(101, 121))
            assert [r["i"] for r in a] == list(range(1, 21))



def test_large_read_streams_from_one_snapshot(driver):
    """A read result is pulled from the engine batch by batch as the client fetches, and all
    of it comes from the snapshot of its start, whatever commits meanwhile."""
    with driver.session() as setup:
        setup.run("UNWIND range(1, 5000) AS i CREATE (:Streamed {i: i})").consume()
    with driver.session(fetch_size=100) as reader, driver.session() as writer:
        result = reader.run("MATCH (n:Streamed) RETURN n.i AS i")
        head = [r["i"] for r in result.fetch(10)]
        writer.run("MATCH (n:Streamed) DELETE n").consume()
        rest = [r["i"] for r in result]
        assert sorted(head + rest) == list(range(1, 5001))
    assert count(driver, "Streamed") == 0
    # In a transaction, a later statement does not change what an earlier result returns.
    with driver.session(fetch_size=10) as session:
        with session.begin_transaction() as tx:
            tx.run("UNWIND range(1, 50) AS i CREATE (:TxStream {i: i})").consume()
            a = tx.run("MATCH (n:TxStream) RETURN n.i AS i")
            head = a.fetch(5)
            tx.run("MATCH (n:TxStream) DELETE n").consume()
            assert len(head) + len(list(a)) == 50
            assert tx.run("MATCH (n:TxStream) RETURN count(n) AS c").single()["c"] == 0
            tx.rollback()

# pytz zones: the driver converts zoneinfo zones through its own DateTime type, which gave
# wrong instants now and then in this environment; pytz is the driver's native zone type.
STOCKHOLM = pytz.timezone("Europe/Stockholm")
PARAMETERS = [
    None,
    True,
    False,
    0,
    -17,
    2**40,
    -(2**63),
    2**63 - 1,
    1.5,
    float("inf"),
    "",
    "héllo ✓",
    "x" * 70_000,
    [],
    [1, "two", 3.0, None, [True]],
    {},
    {"a": 1, "nested": {"list": [1, 2], "s": "x"}},
    datetime.date(2024, 2, 29),
    Date(1, 3, 15),
    datetime.time(13, 5, 7, 123456),
    Time(23, 59, 59, 999999999),
    Time(8, 30, 0, tzinfo=pytz.FixedOffset(-5 * 60)),
    datetime.datetime(2024, 7, 1, 12, 0, 1),
    DateTime(1969, 12, 31, 23, 59, 59, 999999999),
    datetime.datetime(2024, 7, 1, 12, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    STOCKHOLM.localize(datetime.datetime(2024, 7, 1, 12, 0)),
    STOCKHOLM.localize(datetime.datetime(2024, 1, 1, 12, 0)),
    Duration(years=1, months=2, days=3, hours=4, minutes=5, seconds=6, nanoseconds=7),
    Duration(days=-3, seconds=-1),
    datetime.timedelta(days=2, seconds=5, microseconds=3),
]


@pytest.mark.parametrize("value", PARAMETERS, ids=lambda v: type(v).__name__)
def test_parameters_round_trip(driver, value):
    records, _, _ = driver.execute_query("RETURN $p AS p", p=value)
    got = records[0]["p"]
    if isinstance(value, datetime.timedelta):
        value = Duration(days=value.days, seconds=value.seconds, microseconds=value.microseconds)
    if isinstance(value, datetime.datetime) and hasattr(value.tzinfo, "zone"):
        assert str(got.tzinfo) == str(value.tzinfo)
    assert got == value


def test_nodes_relationships_paths(driver):
    with driver.session() as session:
        record = session.run(
            "CREATE p = (a:G:Person {name: 'Ada', tags: ['x']})-[r:KNOWS {since: 2020}]->(b:G {name: 'Bob'})"
            " RETURN a, r, b, p"
        ).single()
        a, r, b, p = record["a"], record["r"], record["b"], record["p"]
        assert a.labels == {"G", "Person"} and dict(a) == {"name": "Ada", "tags": ["x"]}
        assert r.type == "KNOWS" and r["since"] == 2020
        assert r.start_node.element_id == a.element_id and r.end_node.element_id == b.element_id
        assert [n["name"] for n in p.nodes] == ["Ada", "Bob"] and p.relationships[0].type == "KNOWS"

        # walking a relationship against its direction keeps its real endpoints
        back = session.run(
            "MATCH p = (b:G {name: 'Bob'})<-[:KNOWS]-(a:G) RETURN p"
        ).single()["p"]
        assert [n["name"] for n in back.nodes] == ["Bob", "Ada"]
        rel = back.relationships[0]
        assert rel.start_node["name"] == "Ada" and rel.end_node["name"] == "Bob"

        # element ids are stable and usable to find the element again
        again = session.run(
            "MATCH (n:G) WHERE n.name = 'Ada' RETURN n"
        ).single()["n"]
        assert again.element_id == a.element_id

        # elementId() in Cypher is the driver's element_id, so an id taken from a returned
        # element finds it again (issue 25, item 2); across a server restart too, see below
        ids = session.run(
            "MATCH (a:G {name: 'Ada'})-[r:KNOWS]->() RETURN elementId(a) AS a, elementId(r) AS r"
        ).single()
        assert (ids["a"], ids["r"]) == (a.element_id, r.element_id)
        found = session.run(
            "MATCH (n) WHERE elementId(n) = $id RETURN n.name AS name", id=a.element_id
        ).single()
        assert found["name"] == "Ada"
        found = session.run(
            "MATCH ()-[s]->() WHERE elementId(s) = $id RETURN s.since AS since", id=r.element_id
        ).single()
        assert found["since"] == 2020


def test_temporal_results(driver):
    record = driver.execute_query(
        "RETURN date('2015-07-21') AS d, localtime('21:40:32.142') AS lt,"
        " time('21:40:32+01:00') AS t, localdatetime('2015-07-21T21:40:32') AS ldt,"
        " datetime('2015-07-21T21:40:32.142+01:00') AS dt,"
        " datetime('2015-07-21T21:40:32[Europe/Stockholm]') AS dtz,"
        " duration('P1Y2M10DT12H45M30.5S') AS du"
    ).records[0]
    assert record["d"] == Date(2015, 7, 21)
    assert record["lt"] == Time(21, 40, 32, 142000000)
    assert record["t"].utc_offset() == datetime.timedelta(hours=1)
    assert record["ldt"] == DateTime(2015, 7, 21, 21, 40, 32)
    assert record["dt"] == DateTime(
        2015, 7, 21, 21, 40, 32, 142000000, tzinfo=datetime.timezone(datetime.timedelta(hours=1))
    )
    dtz = record["dtz"]
    assert (dtz.hour, str(dtz.tzinfo), dtz.utcoffset()) == (21, "Europe/Stockholm", datetime.timedelta(hours=2))
    assert record["du"] == Duration(years=1, months=2, days=10, hours=12, minutes=45, seconds=30.5)


def test_errors_map_to_driver_exceptions(driver):
    with driver.session() as session:
        with pytest.raises(CypherSyntaxError):
            session.run("MATCH (n RETURN n").consume()
        with pytest.raises(ClientError) as info:
            session.run("RETURN $missing").consume()
        assert info.value.code.startswith("Neo.ClientError.Statement.")
        with pytest.raises(ClientError) as info:
            session.run("BEGIN").consume()
        # the session recovers after every failure
        assert session.run("RETURN 1 AS x").single()["x"] == 1

        tx = session.begin_transaction()
        tx.run("CREATE (:Failed)")
        with pytest.raises(CypherSyntaxError):
            tx.run("RETURN (").consume()
        tx.close()
        assert session.run("RETURN 2 AS x").single()["x"] == 2
    assert count(driver, "Failed") == 0


def test_unsupported_parameter_is_a_client_error(driver):
    with pytest.raises(ClientError):
        driver.execute_query("RETURN $b AS b", b=b"\x00\x01")
    driver.execute_query("RETURN 1")


def test_write_conflict_is_transient(driver):
    driver.execute_query("CREATE (:Conflict {v: 0})")
    with driver.session() as s1, driver.session() as s2:
        tx1, tx2 = s1.begin_transaction(), s2.begin_transaction()
        tx1.run("MATCH (n:Conflict) SET n.v = 1").consume()
        with pytest.raises(TransientError) as info:
            tx2.run("MATCH (n:Conflict) SET n.v = 2").consume()
            tx1.commit()
            tx2.commit()
        assert info.value.is_retryable()
        for tx in (tx1, tx2):
            tx.close()


def test_wrong_password_is_an_auth_error(server):
    with neo4j.GraphDatabase.driver(server.uri, auth=(USER, "wrong")) as bad:
        with pytest.raises(AuthError):
            bad.verify_connectivity()
    with neo4j.GraphDatabase.driver(server.uri, auth=("nobody", PASSWORD)) as bad:
        with pytest.raises(AuthError):
            bad.execute_query("RETURN 1")


def test_session_level_auth_uses_logon(server, driver):
    with driver.session(auth=(USER, PASSWORD)) as session:
        assert session.run("RETURN 1 AS x").single()["x"] == 1


def test_routing_driver(server):
    with neo4j.GraphDatabase.driver(f"neo4j://{server.address}", auth=(USER, PASSWORD)) as drv:
        drv.verify_connectivity()
        records, _, _ = drv.execute_query("RETURN 7 AS x", routing_=neo4j.RoutingControl.READ)
        assert records[0]["x"] == 7


def test_concurrent_sessions_from_threads(driver):
    threads_n, per_thread_n = 8, 25
    errors = []

    def work(t):
        try:
            with driver.session() as session:
                for i in range(per_thread_n):
                    session.execute_write(
                        lambda tx: tx.run("CREATE (:Conc {t: $t, i: $i})", t=t, i=i).consume()
                    )
                    got = session.run("MATCH (n:Conc {t: $t}) RETURN count(n) AS c", t=t).single()["c"]
                    assert got == i + 1
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert count(driver, "Conc") == threads_n * per_thread_n


DISCONNECTING_CLIENT = textwrap.dedent(
    """
    import sys, neo4j
    uri, user, password = sys.argv[1:]
    driver = neo4j.GraphDatabase.driver(uri, auth=(user, password))
    session = driver.session(fetch_size=10)
    tx = session.begin_transaction()
    tx.run("UNWIND range(1, 50) AS i CREATE (:Vanished {i: i})").consume()
    result = tx.run("UNWIND range(1, 100000) AS i RETURN i")
    assert [r["i"] for _, r in zip(range(15), result)] == list(range(1, 16))
    print("mid-stream", flush=True)
    sys.stdin.read()  # killed here, with the transaction open and the stream half read
    """
)


def test_client_disconnecting_mid_stream_rolls_back(server, driver):
    client = subprocess.Popen(
        [sys.executable, "-c", DISCONNECTING_CLIENT, server.uri, USER, PASSWORD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert client.stdout.readline().strip() == "mid-stream"
        # another client is served while that transaction is open
        assert driver.execute_query("RETURN 1 AS x").records[0]["x"] == 1
        assert count(driver, "Vanished") == 0
    finally:
        client.kill()
        client.wait()
    # nothing of the vanished transaction was committed, and the server still serves
    driver.execute_query("CREATE (:AfterVanish)")
    assert count(driver, "Vanished") == 0
    assert count(driver, "AfterVanish") == 1


def raw_connection(server):
    host, port = server.address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def read_until_closed(sock):
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_garbage_and_oversized_input_close_only_that_connection(server, driver):
    # not Bolt at all
    sock = raw_connection(server)
    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    assert read_until_closed(sock) == b""
    sock.close()

    # a valid handshake, then bytes that are no PackStream message
    sock = raw_connection(server)
    sock.sendall(b"\x60\x60\xb0\x17" + b"\x00\x00\x04\x05" + b"\x00" * 12)
    assert sock.recv(4) == b"\x00\x00\x04\x05"
    sock.sendall(b"\x00\x03\xc7\xc7\xc7\x00\x00")
    reply = read_until_closed(sock)
    assert b"Neo.ClientError.Request.Invalid" in reply
    sock.close()

    # an unknown message tag
    sock = raw_connection(server)
    sock.sendall(b"\x60\x60\xb0\x17" + b"\x00\x00\x04\x05" + b"\x00" * 12)
    sock.recv(4)
    sock.sendall(b"\x00\x02\xb0\x77\x00\x00")
    assert b"unknown message tag" in read_until_closed(sock)
    sock.close()

    # a message past the 16 MiB limit: the server stops reading and closes
    sock = raw_connection(server)
    sock.sendall(b"\x60\x60\xb0\x17" + b"\x00\x00\x04\x05" + b"\x00" * 12)
    sock.recv(4)
    chunk = b"\xff\xff" + b"\x00" * 0xFFFF
    try:
        for _ in range(16 * 1024 * 1024 // 0xFFFF + 2):
            sock.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError):
        pass
    try:
        assert b"exceeds the limit" in read_until_closed(sock)
    except ConnectionResetError:
        pass  # closed with unread data in flight
    sock.close()

    # everyone else is still served
    assert driver.execute_query("RETURN 1 AS x").records[0]["x"] == 1


def test_startup_errors(server, db_dir, tmp_path):
    # the database is held by the running server
    second = subprocess.run(
        [plexus_bin(), "serve", str(db_dir), "--bolt", "127.0.0.1:0", "--no-auth"],
        capture_output=True,
        text=True,
        timeout=SERVER_START_TIMEOUT_S,
    )
    assert second.returncode == 1
    assert "in use by another process" in second.stderr

    # authentication must be chosen
    no_users = subprocess.run(
        [plexus_bin(), "serve", str(tmp_path / "other")],
        capture_output=True,
        text=True,
        timeout=SERVER_START_TIMEOUT_S,
    )
    assert no_users.returncode == 2
    assert "--no-auth" in no_users.stderr


def test_no_auth_server(tmp_path):
    srv = Server(tmp_path / "open", "--no-auth")
    try:
        with neo4j.GraphDatabase.driver(srv.uri, auth=None) as drv:
            drv.verify_connectivity()
            assert drv.execute_query("RETURN 'open' AS x").records[0]["x"] == "open"
    finally:
        assert srv.stop() == 0


def test_element_ids_survive_a_restart(tmp_path):
    """An element id a client kept finds the same element after the server restarts."""
    db = tmp_path / "db"
    srv = Server(db, "--no-auth")
    try:
        with neo4j.GraphDatabase.driver(srv.uri, auth=None) as drv:
            records, _, _ = drv.execute_query(
                "CREATE (:Before), (a:Kept {name: 'kept'})-[r:LINK]->(:Other) RETURN a, r"
            )
            node, rel = records[0]["a"], records[0]["r"]
    finally:
        assert srv.stop() == 0
    srv = Server(db, "--no-auth")
    try:
        with neo4j.GraphDatabase.driver(srv.uri, auth=None) as drv:
            records, _, _ = drv.execute_query(
                "MATCH (n) WHERE elementId(n) = $n MATCH ()-[r]->() WHERE elementId(r) = $r"
                " RETURN n.name AS name, type(r) AS type",
                n=node.element_id,
                r=rel.element_id,
            )
            assert [(r["name"], r["type"]) for r in records] == [("kept", "LINK")]
    finally:
        assert srv.stop() == 0
