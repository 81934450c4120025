"""Runs every ```python block of docs/python.md (and of the top-level README.md, if it has any),
so the documented examples cannot drift from the package. Blocks that use the neo4j driver need
a Bolt server; the Bolt suite (crates/plexus-bolt/tests/python) runs those."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
DOCS = [ROOT / "docs" / "python.md", ROOT / "README.md"]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks():
    for doc in DOCS:
        if doc.exists():
            for i, match in enumerate(BLOCK.finditer(doc.read_text())):
                if "from neo4j import" not in match.group(1):
                    yield pytest.param(match.group(1), id=f"{doc.name}-{i}")


def test_docs_have_examples():
    assert any(True for _ in blocks()), "docs/python.md lost its examples"


@pytest.mark.parametrize("code", blocks())
def test_example_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<doc example>", "exec"), {"__name__": "__doc_example__"})
