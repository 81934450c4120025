"""LOAD CSV through the Neo4j driver: files come from the server's import directory only.
A client's `..`, absolute paths, symbolic links out of the directory and other URL schemes are
refused with Neo.ClientError.Statement.ExternalResourceFailed, and no message names a path
of the server's file system."""

import gzip
import os

import neo4j
import pytest
from neo4j.exceptions import ClientError

from conftest import PASSWORD, USER, Server


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    base = tmp_path_factory.mktemp("loadcsv")
    secret = base / "secret.csv"
    secret.write_text("password\nhunter2\n")
    db = base / "db"
    imports = base / "imports"
    imports.mkdir()
    (imports / "people.csv").write_text('id,name\n1,Ann\n2,"Bo, Jr."\n3,\n')
    with gzip.open(imports / "people.csv.gz", "wt") as f:
        f.write("id,name\n4,Cy\n")
    os.symlink(secret, imports / "link.csv")
    srv = Server(db, "--user", f"{USER}:{PASSWORD}", "--set", f"import_directory={imports}")
    with neo4j.GraphDatabase.driver(srv.uri, auth=(USER, PASSWORD)) as driver:
        yield driver, str(base)
    assert srv.stop() == 0


def test_rows_load_into_the_graph(loaded):
    driver, _ = loaded
    driver.execute_query(
        "LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS r "
        "CREATE (:P {id: toInteger(r.id), name: r.name, line: linenumber(), file: file()})"
    )
    driver.execute_query(
        "LOAD CSV WITH HEADERS FROM $f AS r CREATE (:P {id: toInteger(r.id), name: r.name})",
        f="people.csv.gz",
    )
    records, _, _ = driver.execute_query(
        "MATCH (p:P) RETURN p.id AS id, p.name AS name, p.line AS line, p.file AS file ORDER BY id"
    )
    assert [tuple(r.values()) for r in records] == [
        (1, "Ann", 2, "people.csv"),
        (2, "Bo, Jr.", 3, "people.csv"),
        (3, None, 4, "people.csv"),
        (4, "Cy", None, None),
    ]


@pytest.mark.parametrize(
    "source",
    [
        "file:///../secret.csv",
        "../secret.csv",
        "file:///link.csv",
        "sub/../../secret.csv",
        "http://localhost/secret.csv",
        "file:///missing.csv",
    ],
)
def test_files_outside_the_import_directory_are_refused(loaded, source):
    driver, base = loaded
    with pytest.raises(ClientError) as caught:
        driver.execute_query("LOAD CSV FROM $f AS r RETURN r", f=source)
    assert caught.value.code == "Neo.ClientError.Statement.ExternalResourceFailed"
    assert base not in caught.value.message, caught.value.message
    assert "hunter2" not in caught.value.message
