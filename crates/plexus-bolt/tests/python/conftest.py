"""Fixtures shared by the driver tests: a `plexus serve` process per test module.

`Server` starts `plexus serve` on a directory with port 0, reads the bound address from its
first stdout line and stops it with SIGTERM. The binary is $PLEXUS_BIN, or target/debug/plexus
under $CARGO_TARGET_DIR (default: the workspace's target/). Run the tests through
scripts/test-bolt.sh, which builds the binary first.

The fixtures `server` and `driver` are module-scoped: each test file gets its own server on a
fresh database, with the user USER:PASSWORD.
"""

import os
import signal
import subprocess
import threading
from pathlib import Path

import neo4j
import pytest

ROOT = Path(__file__).resolve().parents[4]
USER, PASSWORD = "neo4j", "test-password"
# How long to wait for the server to print its address or to exit, in seconds.
SERVER_START_TIMEOUT_S = 60


def plexus_bin():
    if "PLEXUS_BIN" in os.environ:
        return os.environ["PLEXUS_BIN"]
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return str(target / "debug" / "plexus")


class Server:
    """A running `plexus serve`; `uri` is its bolt:// address."""

    def __init__(self, db_dir, *args):
        self.proc = subprocess.Popen(
            [plexus_bin(), "serve", str(db_dir), "--bolt", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self._first_line()
        if "listening on" not in line:
            self.stop()
            raise RuntimeError(f"server did not start: {line!r} {self.proc.stderr.read()}")
        self.uri = line.rsplit(" ", 1)[1]
        self.address = self.uri.removeprefix("bolt://")

    def _first_line(self):
        timer = threading.Timer(SERVER_START_TIMEOUT_S, self.proc.kill)
        timer.start()
        try:
            return self.proc.stdout.readline().strip()
        finally:
            timer.cancel()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=SERVER_START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


@pytest.fixture(scope="module")
def db_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("bolt") / "db"


@pytest.fixture(scope="module")
def server(db_dir):
    srv = Server(db_dir, "--user", f"{USER}:{PASSWORD}")
    yield srv
    assert srv.stop() == 0, "the server exits cleanly on SIGTERM"


@pytest.fixture(scope="module")
def driver(server):
    with neo4j.GraphDatabase.driver(server.uri, auth=(USER, PASSWORD)) as drv:
        yield drv
