"""Tables and LOAD CSV from Python through `execute`: Kùzu-style table DDL, a CSV file from the
import directory (a keyword argument like every setting), and escapes refused."""

import pytest

import plexusdb


def test_declared_table_and_load_csv(tmp_path):
    imports = tmp_path / "imports"
    imports.mkdir()
    (imports / "people.csv").write_text("id|name|born\n1|Ann|1990\n2|Bo|\n")
    (tmp_path / "secret.csv").write_text("x\n")
    with plexusdb.Database(tmp_path / "db", import_directory=str(imports)) as db:
        with db.connect() as conn:
            conn.execute("CREATE NODE TABLE Person(id INT64, name STRING, born INT64, PRIMARY KEY (id))")
            tables = conn.execute("SHOW TABLES").dicts()
            assert [(t["name"], t["type"], t["primaryKey"]) for t in tables] == [
                ("Person", "NODE", "id")
            ]
            conn.execute(
                "LOAD CSV WITH HEADERS FROM 'file:///people.csv' AS r FIELDTERMINATOR '|' "
                "CREATE (:Person {id: toInteger(r.id), name: r.name, born: toInteger(r.born)})"
            )
            rows = conn.execute("MATCH (p:Person) RETURN p.id, p.name, p.born ORDER BY p.id").rows
            assert rows == [(1, "Ann", 1990), (2, "Bo", None)]
            # The primary key holds for loaded rows too; the failing load leaves nothing.
            with pytest.raises(plexusdb.ClientError):
                conn.execute(
                    "LOAD CSV WITH HEADERS FROM 'people.csv' AS r FIELDTERMINATOR '|' "
                    "CREATE (:Person {id: toInteger(r.id), name: r.name})"
                )
            assert conn.execute("MATCH (p:Person) RETURN count(*)").rows == [(2,)]
            with pytest.raises(plexusdb.CypherArgumentError) as caught:
                conn.execute("LOAD CSV FROM '../secret.csv' AS r RETURN r")
            assert "import directory" in str(caught.value)
            assert str(tmp_path) not in str(caught.value)
