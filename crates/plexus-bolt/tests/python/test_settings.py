"""Settings of `plexus serve`: plexus.toml, `--set` and named flags reach the engine, SHOW
SETTINGS lists them with their sources and never shows a password, server settings cannot be
changed by a client, bad settings stop the server before it listens."""

import subprocess

import neo4j
import pytest
from neo4j.exceptions import ClientError

from conftest import PASSWORD, USER, Server, plexus_bin


def settings(driver):
    records, _, _ = driver.execute_query("SHOW SETTINGS")
    return {r["name"]: (r["value"], r["scope"], r["source"]) for r in records}


def test_serve_settings_from_file_and_flags(tmp_path):
    db = tmp_path / "db"
    db.mkdir()
    (db / "plexus.toml").write_text('durability = "periodic"\nindex_cache_bytes = "64MiB"\n')
    srv = Server(
        db,
        "--user", f"{USER}:{PASSWORD}",
        "--set", "sync_interval_ms=20",
        "--set", "index_cache_bytes=32MiB",
        "--memtable-budget", "128MiB",
    )
    try:
        with neo4j.GraphDatabase.driver(srv.uri, auth=(USER, PASSWORD)) as drv:
            listed = settings(drv)
            assert listed["durability"][0:2] == ("periodic", "server")
            assert listed["durability"][2].endswith("plexus.toml")
            assert listed["sync_interval_ms"] == ("20", "server", "command line")
            assert listed["index_cache_bytes"] == ("32MiB", "server", "command line")
            assert listed["memtable_budget_bytes"] == ("128MiB", "server", "command line")
            assert listed["row_cache_bytes"] == ("1GiB", "server", "default")
            assert listed["bolt_users"] == (f"{USER}:********", "server", "command line")
            assert listed["transaction_isolation"][1] == "session"
            everything = repr(listed)
            assert PASSWORD not in everything, "a password is never listed"

            # A client changes only its own session settings.
            with pytest.raises(ClientError, match="server-wide"):
                drv.execute_query("SET SESSION durability = 'none'")
            with pytest.raises(ClientError, match="fixed at start-up"):
                drv.execute_query("SET GLOBAL TRANSACTION ISOLATION LEVEL SERIALIZABLE")
            with pytest.raises(ClientError, match="did you mean 'query_threads'"):
                drv.execute_query("SET SESSION query_thread = 1")
            assert settings(drv)["durability"][0] == "periodic"
    finally:
        assert srv.stop() == 0
    # Nothing the server wrote or logged holds the password.
    assert PASSWORD not in srv.proc.stderr.read()


@pytest.mark.parametrize(
    "args, message",
    [
        (["--set", "memtable_budget=1GiB"], "did you mean 'memtable_budget_bytes'"),
        (["--durability", "sometimes"], "setting 'durability'"),
        (["--set", "query_threads=2"], "per session"),
    ],
)
def test_bad_settings_stop_the_server(tmp_path, args, message):
    proc = subprocess.run(
        [plexus_bin(), "serve", str(tmp_path / "db"), "--bolt", "127.0.0.1:0", "--no-auth", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stdout
    assert message in proc.stderr
    assert "listening" not in proc.stdout
