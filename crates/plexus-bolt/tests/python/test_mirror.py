"""`plexus serve --mirror-source URL --mirror-mapping FILE`: Bolt clients query a graph that
follows a PostgreSQL database, through the official driver.

A throwaway PostgreSQL 15 cluster (the Debian package's server binaries, as the Rust tests'
`plexus_mirror::cluster` uses them) runs on a free loopback port with `wal_level=logical` and
password (SCRAM) authentication; the server follows it while the test writes rows there and
reads them back over Bolt, checks `CALL db.mirror.status()` and that the mirrored labels are
read-only to clients.
"""

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import neo4j
import pytest

from conftest import Server

PG_BIN = os.environ.get("PLEXUS_PG_BIN", "/usr/lib/postgresql/15/bin")
PASSWORD = "mirror-secret-pw"
# How long a mirrored row may take to appear before the test fails, in seconds.
VISIBLE_TIMEOUT_S = 30

MAPPING = """CREATE PROPERTY GRAPH bank
  VERTEX TABLES (account LABEL Account PROPERTIES (id, owner))
  EDGE TABLES (
    transfer SOURCE KEY (src) REFERENCES account (id)
             DESTINATION KEY (dst) REFERENCES account (id)
             LABEL TRANSFER PROPERTIES (id, amount)
  );
"""


class Postgres:
    """A private PostgreSQL cluster; `url` holds the password (SCRAM over TCP)."""

    def __init__(self):
        # its own directory under the system temp dir: pytest's are private to this user,
        # and the server runs as `postgres` when the tests run as root
        self.root = root = Path(tempfile.mkdtemp(prefix="plexus-pg-"))
        self.as_postgres = os.geteuid() == 0
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        pwfile = root / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_postgres:
            shutil.chown(root, "postgres", "postgres")
            shutil.chown(pwfile, "postgres", "postgres")
        self.run("initdb", "-D", str(root / "data"), "-U", "postgres", "--auth-local=trust",
                 "--auth-host=scram-sha-256", f"--pwfile={pwfile}", "-E", "UTF8", "--no-sync")
        options = (f"-p {self.port} -k {root} -c listen_addresses=127.0.0.1 "
                   "-c wal_level=logical -c fsync=off")
        self.run("pg_ctl", "-D", str(root / "data"), "-l", str(root / "log"), "-w", "start",
                 "-o", options)
        self.url = f"postgres://postgres:{PASSWORD}@127.0.0.1:{self.port}/postgres"

    def run(self, program, *args):
        command = [os.path.join(PG_BIN, program), *args]
        if self.as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=True, capture_output=True, text=True).stdout

    def sql(self, statement):
        return self.run("psql", "-h", str(self.root), "-p", str(self.port), "-U", "postgres",
                        "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", statement)

    def stop(self):
        self.run("pg_ctl", "-D", str(self.root / "data"), "-w", "-m", "immediate", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres():
    if not os.path.exists(os.path.join(PG_BIN, "initdb")):
        pytest.fail(f"PostgreSQL server binaries missing in {PG_BIN}: scripts/test.sh installs them")
    pg = Postgres()
    pg.sql("CREATE TABLE account (id bigint PRIMARY KEY, owner text NOT NULL)")
    pg.sql("CREATE TABLE transfer (id bigint PRIMARY KEY, src bigint REFERENCES account, "
           "dst bigint REFERENCES account, amount float8)")
    pg.sql("INSERT INTO account SELECT g, 'owner ' || g FROM generate_series(1, 10) g")
    yield pg
    pg.stop()


@pytest.fixture(scope="module")
def mirrored(postgres, tmp_path_factory):
    work = tmp_path_factory.mktemp("mirror")
    mapping = work / "bank.sql"
    mapping.write_text(MAPPING)
    srv = Server(work / "db", "--no-auth", "--mirror-source", postgres.url,
                 "--mirror-mapping", str(mapping))
    yield srv
    assert srv.stop() == 0, "the server exits cleanly on SIGTERM"
    output = srv.proc.stdout.read() + srv.proc.stderr.read()
    assert PASSWORD not in output


def wait_for(session, query, expected):
    deadline = time.monotonic() + VISIBLE_TIMEOUT_S
    while True:
        value = session.run(query).single()[0]
        if value == expected or time.monotonic() > deadline:
            return value
        time.sleep(0.02)


def test_bolt_clients_read_the_followed_rows_as_they_commit(postgres, mirrored):
    with neo4j.GraphDatabase.driver(mirrored.uri, auth=None) as driver, driver.session() as s:
        assert wait_for(s, "MATCH (a:Account) RETURN count(a)", 10) == 10
        postgres.sql("INSERT INTO transfer VALUES (1, 1, 2, 10.5), (2, 2, 3, 7.25)")
        query = "MATCH (:Account)-[t:TRANSFER]->(:Account) RETURN sum(t.amount)"
        assert wait_for(s, query, 17.75) == 17.75
        postgres.sql("UPDATE transfer SET dst = 4 WHERE id = 2; DELETE FROM transfer WHERE id = 1")
        query = ("MATCH (a:Account)-[t:TRANSFER]->(b:Account) "
                 "RETURN collect([a.id, b.id, t.amount])")
        assert wait_for(s, query, [[2, 4, 7.25]]) == [[2, 4, 7.25]]
        status = s.run("CALL db.mirror.status() YIELD name, state, pending "
                       "RETURN name, state, pending").single()
        assert (status["name"], status["state"], status["pending"]) == (
            "plexus_mirror", "streaming", 0)


def test_mirrored_labels_are_read_only_to_clients(mirrored):
    with neo4j.GraphDatabase.driver(mirrored.uri, auth=None) as driver, driver.session() as s:
        with pytest.raises(neo4j.exceptions.Neo4jError, match="read-only here"):
            s.run("MATCH (a:Account {id: 1}) SET a.owner = 'me'").consume()
        s.run("CREATE (:Note {text: 'other labels stay writable'})").consume()
        assert s.run("MATCH (n:Note) RETURN count(n)").single()[0] == 1
