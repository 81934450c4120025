"""Shared fixtures: a fresh database directory per test, opened, and a connection to it."""

import pytest

import plexusdb


@pytest.fixture
def db(tmp_path):
    database = plexusdb.Database(tmp_path / "db")
    yield database
    database.close()


@pytest.fixture
def conn(db):
    connection = db.connect()
    yield connection
    connection.close()


@pytest.fixture
def social(conn):
    """Five people in two groups: Ada -> Bob -> Cy (a chain), Dee <-> Eve, plus a City."""
    conn.execute(
        """
        CREATE (ada:Person {name: 'Ada', age: 36, active: true}),
               (bob:Person {name: 'Bob', age: 41, active: false}),
               (cy:Person {name: 'Cy', age: 29}),
               (dee:Person {name: 'Dee', age: 52, active: true}),
               (eve:Person {name: 'Eve', age: 23, active: true}),
               (:City {name: 'Oslo'}),
               (ada)-[:KNOWS {since: 2010, weight: 1.0}]->(bob),
               (bob)-[:KNOWS {since: 2015, weight: 2.5}]->(cy),
               (dee)-[:KNOWS {since: 2001, weight: 1.0}]->(eve),
               (eve)-[:KNOWS {since: 2002, weight: 1.0}]->(dee),
               (ada)-[:LIKES {weight: 4.0}]->(cy)
        """
    )
    return conn
