"""Engine errors arrive as the plexusdb exception of their kind, with code and position."""

import pytest

import plexusdb


def test_hierarchy():
    for name in [
        "DatabaseAlreadyOpen",
        "DatabaseClosed",
        "ConnectionClosed",
        "StorageError",
        "InternalError",
        "TransactionError",
        "ClientError",
    ]:
        assert issubclass(getattr(plexusdb, name), plexusdb.Error)
    assert issubclass(plexusdb.TransactionAborted, plexusdb.TransactionError)
    for name in [
        "CypherSyntaxError",
        "CypherSemanticError",
        "CypherTypeError",
        "CypherArgumentError",
        "ConstraintViolation",
        "EntityNotFound",
    ]:
        assert issubclass(getattr(plexusdb, name), plexusdb.ClientError)
    assert issubclass(plexusdb.Error, Exception)


def test_syntax_error_carries_position(conn):
    with pytest.raises(plexusdb.CypherSyntaxError) as info:
        conn.execute("MATCH (n)\nRETURN n +")
    error = info.value
    assert error.classification == "SyntaxError"
    assert error.line == 2 and error.column is not None
    assert "line 2" in str(error)
    assert error.retryable is False


def test_undefined_variable_is_a_syntax_error_as_in_the_tck(conn):
    with pytest.raises(plexusdb.CypherSyntaxError) as info:
        conn.execute("RETURN missing")
    assert info.value.code == "UndefinedVariable"
    assert (info.value.line, info.value.column) == (1, 8)


def test_semantic_error(conn):
    with pytest.raises(plexusdb.CypherSemanticError) as info:
        conn.execute("MERGE (n:X {k: $v})", {"v": None})
    assert info.value.classification == "SemanticError"
    assert info.value.line is None


def test_type_error(conn):
    # Known only at run time: a TypeError.
    with pytest.raises(plexusdb.CypherTypeError):
        conn.execute("UNWIND [true] AS b RETURN 1 + b")
    # Both operand types known when the query is compiled: a SyntaxError, as in Neo4j 5.
    with pytest.raises(plexusdb.CypherSyntaxError) as info:
        conn.execute("RETURN 1 + true")
    assert info.value.code == "InvalidArgumentType"


def test_argument_and_parameter_errors(conn):
    with pytest.raises(plexusdb.CypherArgumentError):
        conn.execute("RETURN $nope")
    with pytest.raises(plexusdb.CypherArgumentError):
        conn.execute("RETURN 1 / 0")


def test_transaction_command_errors(conn):
    with pytest.raises(plexusdb.TransactionError):
        conn.commit()
    conn.begin()
    with pytest.raises(plexusdb.TransactionError):
        conn.begin()


def test_failed_auto_commit_statement_leaves_no_trace(conn):
    with pytest.raises(plexusdb.Error):
        conn.execute("CREATE (:A) WITH 1 AS x RETURN x / 0")
    assert conn.execute("MATCH (a:A) RETURN count(a)")[0] == (0,)
