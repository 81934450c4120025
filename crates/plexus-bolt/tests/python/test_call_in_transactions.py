"""CALL { ... } IN TRANSACTIONS through the Neo4j driver: an auto-commit `session.run` loads a
file in batches that commit one by one (a failing batch leaves the earlier ones), and an
explicit transaction — `begin_transaction()`, or the managed one `execute_query` opens — is
refused with Neo4j's Neo.DatabaseError.Transaction.TransactionStartFailed."""

import neo4j
import pytest
from neo4j.exceptions import ClientError, DatabaseError

from conftest import PASSWORD, USER, Server

LOAD = (
    "LOAD CSV WITH HEADERS FROM 'file:///lines.csv' AS r "
    "CALL { WITH r CREATE (:Line {i: toInteger(r.i), v: 100 / toInteger(r.d)}) } "
    "IN TRANSACTIONS OF 100 ROWS"
)
REFUSED = (
    "A query with 'CALL { ... } IN TRANSACTIONS' can only be executed in an implicit "
    "transaction, but tried to execute in an explicit transaction."
)


@pytest.fixture(scope="module")
def batched(tmp_path_factory):
    base = tmp_path_factory.mktemp("cit")
    imports = base / "imports"
    imports.mkdir()
    # 1,000 records; record 450 divides by zero (the fifth batch of 100).
    rows = "".join(f"{i},{0 if i == 450 else 1}\n" for i in range(1, 1001))
    (imports / "lines.csv").write_text("i,d\n" + rows)
    srv = Server(base / "db", "--user", f"{USER}:{PASSWORD}", "--set", f"import_directory={imports}")
    with neo4j.GraphDatabase.driver(srv.uri, auth=(USER, PASSWORD)) as driver:
        yield driver
    assert srv.stop() == 0


def count(driver):
    records, _, _ = driver.execute_query("MATCH (l:Line) RETURN count(l) AS n, max(l.i) AS top")
    return records[0]["n"], records[0]["top"]


def test_an_implicit_transaction_loads_in_batches(batched):
    driver = batched
    with driver.session() as session:
        # ON ERROR FAIL: the fifth batch fails; the four before it stay committed.
        with pytest.raises(ClientError) as caught:
            session.run(LOAD).consume()
        assert caught.value.code == "Neo.ClientError.Statement.ArithmeticError"
        assert caught.value.message.endswith("(Transactions committed: 4)"), caught.value.message
    assert count(driver) == (400, 400)
    driver.execute_query("MATCH (l:Line) DELETE l")
    with driver.session() as session:
        summary = session.run(LOAD + " ON ERROR CONTINUE").consume()
        assert summary.counters.nodes_created == 900
        records = session.run(
            "UNWIND range(1, 7) AS i "
            "CALL { WITH i CREATE (:Batch {i: i}) } IN TRANSACTIONS OF 3 ROWS "
            "ON ERROR BREAK REPORT STATUS AS s "
            "RETURN i, s.committed AS ok, s.transactionId AS tx"
        ).data()
    assert count(driver) == (900, 1000)
    assert [r["i"] for r in records] == list(range(1, 8))
    assert all(r["ok"] for r in records)
    assert len({r["tx"] for r in records}) == 3  # rows 1-3, 4-6 and 7


def test_an_explicit_transaction_is_refused(batched):
    driver = batched
    query = "UNWIND range(1, 5) AS i CALL { WITH i CREATE (:Refused) } IN TRANSACTIONS"
    with driver.session() as session:
        tx = session.begin_transaction()
        with pytest.raises(DatabaseError) as caught:
            tx.run(query).consume()
        tx.close()  # the failure ended it; nothing to commit
    assert caught.value.code == "Neo.DatabaseError.Transaction.TransactionStartFailed"
    assert REFUSED in caught.value.message, caught.value.message
    # execute_query runs a managed (explicit) transaction: refused too, as by Neo4j.
    with pytest.raises(DatabaseError) as caught:
        driver.execute_query(query)
    assert caught.value.code == "Neo.DatabaseError.Transaction.TransactionStartFailed"
    records, _, _ = driver.execute_query("MATCH (r:Refused) RETURN count(r) AS n")
    assert records[0]["n"] == 0
