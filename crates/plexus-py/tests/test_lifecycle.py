"""Transactions, context managers, closing, and one Database per directory."""

import pytest

import plexusdb


def count(conn, label="N"):
    return conn.execute(f"MATCH (n:{label}) RETURN count(n)")[0][0]


def test_begin_commit_rollback(db, conn):
    other = db.connect()
    conn.begin()
    assert conn.in_transaction
    conn.execute("CREATE (:N)")
    assert count(conn) == 1  # sees its own write
    assert count(other) == 0  # isolation
    conn.commit()
    assert not conn.in_transaction
    assert count(other) == 1
    conn.execute("BEGIN")
    conn.execute("CREATE (:N)")
    conn.execute("ROLLBACK")
    assert count(other) == 1


def test_transaction_context_commits(conn):
    with conn.transaction() as tx:
        assert tx is conn and conn.in_transaction
        conn.execute("CREATE (:N)")
    assert not conn.in_transaction
    assert count(conn) == 1


def test_transaction_context_rolls_back_on_exception(conn):
    with pytest.raises(RuntimeError):
        with conn.transaction():
            conn.execute("CREATE (:N)")
            raise RuntimeError("boom")
    assert not conn.in_transaction
    assert count(conn) == 0


def test_transaction_context_after_failed_statement(conn):
    # The failing statement already rolled the transaction back; exit must not fail again.
    with pytest.raises(plexusdb.CypherArgumentError, match="rolled back"):
        with conn.transaction():
            conn.execute("CREATE (:N)")
            conn.execute("RETURN 1 / 0")
    assert count(conn) == 0


def test_connection_context_commits_open_transaction_and_closes(db):
    with db.connect() as conn:
        conn.begin()
        conn.execute("CREATE (:N)")
    assert conn.closed
    with pytest.raises(plexusdb.ConnectionClosed):
        conn.execute("RETURN 1")
    with db.connect() as check:
        assert count(check) == 1


def test_connection_context_rolls_back_on_exception(db):
    with pytest.raises(KeyError):
        with db.connect() as conn:
            conn.begin()
            conn.execute("CREATE (:N)")
            raise KeyError("boom")
    with db.connect() as check:
        assert count(check) == 0


def test_write_conflict_is_retryable(db):
    setup = db.connect()
    setup.execute("CREATE (:C {v: 0})")
    first, second = db.connect(), db.connect()
    first.begin()
    second.begin()
    first.execute("MATCH (c:C) SET c.v = 1")
    second.execute("MATCH (c:C) SET c.v = 2")
    first.commit()
    with pytest.raises(plexusdb.TransactionAborted) as info:
        second.commit()  # first committer wins
    assert info.value.retryable is True
    assert "retry" in str(info.value)
    assert not second.in_transaction
    assert setup.execute("MATCH (c:C) RETURN c.v")[0] == (1,)


def test_database_context_closes_and_persists(tmp_path):
    path = tmp_path / "db"
    with plexusdb.Database(path) as db:
        conn = db.connect()
        conn.execute("CREATE (:N {x: 1})")
        snapshot = db.snapshot()
    assert db.closed
    with pytest.raises(plexusdb.DatabaseClosed):
        conn.execute("RETURN 1")
    with pytest.raises(plexusdb.DatabaseClosed):
        db.connect()
    with pytest.raises(plexusdb.DatabaseClosed):
        db.snapshot()
    with pytest.raises(plexusdb.DatabaseClosed):
        snapshot.to_pyg()
    db.close()  # closing twice is fine
    with plexusdb.Database(path) as again:
        assert count(again.connect()) == 1


def test_second_open_in_same_process_is_refused(tmp_path):
    path = tmp_path / "db"
    with plexusdb.Database(path):
        with pytest.raises(plexusdb.DatabaseAlreadyOpen) as info:
            plexusdb.Database(path)
        assert str(path) in str(info.value)
    plexusdb.Database(path).close()  # released by close


def test_closed_snapshot(db):
    snapshot = db.snapshot()
    snapshot.close()
    with pytest.raises(plexusdb.DatabaseClosed, match="snapshot is closed"):
        snapshot.wcc()
