"""Settings and isolation levels from Python: keyword arguments, plexus.toml, SHOW SETTINGS,
`connect(isolation=…)`, `begin(isolation=…)` and the write skew SERIALIZABLE prevents."""

import pytest

import plexusdb


def settings(conn):
    """SHOW SETTINGS as {name: (value, scope, source)}."""
    rows = conn.execute("SHOW SETTINGS").dicts()
    return {r["name"]: (r["value"], r["scope"], r["source"]) for r in rows}


def test_keyword_arguments_are_settings(tmp_path):
    path = tmp_path / "db"
    with plexusdb.Database(
        path,
        durability="periodic",
        memtable_budget_bytes=64 * 2**20,
        row_cache_bytes="512MiB",
        background_maintenance=False,
        elastic_bound=0.5,
        default_isolation="serializable",
    ) as db:
        with db.connect() as conn:
            listed = settings(conn)
            assert listed["durability"] == ("periodic", "server", "argument")
            assert listed["memtable_budget_bytes"] == ("64MiB", "server", "argument")
            assert listed["row_cache_bytes"] == ("512MiB", "server", "argument")
            assert listed["background_maintenance"] == ("false", "server", "argument")
            assert listed["elastic_bound"] == ("0.5", "server", "argument")
            assert listed["index_cache_bytes"] == ("256MiB", "server", "default")
            # sessions start at the server-wide default
            assert listed["transaction_isolation"][0] == "serializable"
            assert conn.isolation == "serializable"


def test_plexus_toml_is_read_and_keywords_override_it(tmp_path):
    path = tmp_path / "db"
    path.mkdir()
    (path / "plexus.toml").write_text(
        '# operator settings\ndurability = "none"\nindex_cache_bytes = "128MiB"\n'
    )
    with plexusdb.Database(path, durability="periodic") as db:
        with db.connect() as conn:
            listed = settings(conn)
    assert listed["durability"] == ("periodic", "server", "argument")
    value, scope, source = listed["index_cache_bytes"]
    assert (value, scope) == ("128MiB", "server")
    assert source.endswith("plexus.toml")


@pytest.mark.parametrize(
    "keywords, message",
    [
        ({"memtable_budget": "1GiB"}, "did you mean 'memtable_budget_bytes'"),
        ({"durability": "sometimes"}, "setting 'durability'"),
        ({"row_cache_bytes": "lots"}, "not a size"),
        ({"query_threads": 2}, "per session"),
    ],
)
def test_bad_settings_raise_value_error_naming_the_key(tmp_path, keywords, message):
    with pytest.raises(ValueError, match=message):
        plexusdb.Database(tmp_path / "db", **keywords)
    # nothing was left open: the directory can be opened now
    plexusdb.Database(tmp_path / "db").close()


def test_bad_plexus_toml_names_file_and_line(tmp_path):
    path = tmp_path / "db"
    path.mkdir()
    (path / "plexus.toml").write_text("durability = 'fsync'\nrow_cache = '1GiB'\n")
    with pytest.raises(ValueError, match=r"plexus.toml:2: unknown setting 'row_cache'"):
        plexusdb.Database(path)


def test_a_setting_of_another_type_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="takes a str, int, float or bool"):
        plexusdb.Database(tmp_path / "db", durability=["fsync"])


def test_server_settings_are_fixed_at_run_time(conn):
    with pytest.raises(plexusdb.CypherArgumentError, match="server-wide"):
        conn.execute("SET SESSION durability = 'none'")
    conn.execute("SET SESSION query_threads = 1")
    assert settings(conn)["query_threads"] == ("1", "session", "session")


def test_isolation_per_connection_and_per_transaction(db):
    with db.connect(isolation="serializable") as conn:
        assert conn.isolation == "serializable"
        conn.begin(isolation="snapshot")
        assert conn.execute("SHOW TRANSACTION ISOLATION LEVEL").rows == [("snapshot",)]
        conn.commit()
        assert conn.execute("SHOW TRANSACTION ISOLATION LEVEL").rows == [("serializable",)]
        conn.isolation = "SNAPSHOT"
        assert conn.isolation == "snapshot"
        with conn.transaction(isolation="serializable"):
            assert conn.execute("SHOW TRANSACTION ISOLATION LEVEL").rows == [
                ("serializable",)
            ]
    with db.connect() as other:
        assert other.isolation == "snapshot", "a session's level never leaks to another"
    with pytest.raises(ValueError, match="unknown isolation level 'read committed'"):
        db.connect(isolation="read committed")
    with db.connect() as conn, pytest.raises(ValueError):
        conn.begin(isolation="chaos")


def write_skew(db, level):
    """Two doctors on call; each transaction reads both and takes one off call. Returns
    (outcome of the first commit, outcome of the second, doctors still on call)."""
    setup = db.connect()
    setup.execute("MATCH (d:Doctor) DETACH DELETE d")
    setup.execute("CREATE (:Doctor {name: 'Alice', on_call: true}), (:Doctor {name: 'Bob', on_call: true})")
    a, b = db.connect(), db.connect()
    a.begin(isolation=level)
    b.begin(isolation=level)
    count = "MATCH (d:Doctor) WHERE d.on_call RETURN count(d)"
    assert a.execute(count).rows == [(2,)]
    assert b.execute(count).rows == [(2,)]
    a.execute("MATCH (d:Doctor {name: 'Alice'}) SET d.on_call = false")
    b.execute("MATCH (d:Doctor {name: 'Bob'}) SET d.on_call = false")
    outcomes = []
    for conn in (a, b):
        try:
            conn.commit()
            outcomes.append("committed")
        except plexusdb.TransactionAborted as e:
            assert e.retryable
            outcomes.append("aborted")
    on_call = setup.execute(count).rows[0][0]
    for conn in (a, b, setup):
        conn.close()
    return outcomes[0], outcomes[1], on_call


def test_write_skew_commits_under_snapshot_and_aborts_under_serializable(db):
    assert write_skew(db, "snapshot") == ("committed", "committed", 0)
    assert write_skew(db, "serializable") == ("committed", "aborted", 1)


def test_retry_loop_after_a_serialization_failure(db):
    """The retry loop docs/isolation.md shows for the embedded API."""
    db.connect().execute("CREATE (:Counter {n: 0})")
    intruder = db.connect()
    attempts = 0
    with db.connect(isolation="serializable") as conn:
        while True:
            attempts += 1
            try:
                with conn.transaction():
                    n = conn.execute("MATCH (c:Counter) RETURN c.n").rows[0][0]
                    if attempts == 1:  # a concurrent commit invalidates what we read
                        intruder.execute("MATCH (c:Counter) SET c.n = c.n + 100")
                    conn.execute("MATCH (c:Counter) SET c.n = $n", {"n": n + 1})
                break
            except plexusdb.TransactionAborted:
                continue
    assert attempts == 2
    assert db.connect().execute("MATCH (c:Counter) RETURN c.n").rows == [(101,)]
