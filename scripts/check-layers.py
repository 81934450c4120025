#!/usr/bin/env python3
"""Checks the crate layering: which workspace crate may depend on which (any dependency kind),
read from `cargo metadata` — and that inside every crate the top-level modules (the files and
directories beside lib.rs / main.rs) import each other without a cycle. Front ends (Bolt, Python, CLI, TCK, benchmarks) reach the engine
through the `plexus` facade only (they may name `plexus-value`, the values the facade hands
out); the engine's stages depend only downwards. A new crate must
be added to LAYERS, so the picture cannot drift silently.

    scripts/check-layers.py        # exit 1 and the offending edges if the layering is broken
"""

import json
import os
import re
import subprocess
import sys

# crate -> the workspace crates it may depend on (ARCHITECTURE: parser → binder/planner →
# execution → transactions → storage, with the values every stage passes on below them; the
# facade over them; front ends over the facade).
LAYERS = {
    "plexus-types": set(),
    "plexus-cypher": {"plexus-types"},
    # values, their comparison rules, temporal types and the query error: below every stage
    "plexus-value": {"plexus-types"},
    # files into the engine (import directory, CSV, import headers, Arrow columns as values):
    # no engine dependency beyond the values
    "plexus-ingest": {"plexus-types"},
    "plexus-storage": {"plexus-types"},
    "plexus-txn": {"plexus-types", "plexus-storage"},
    "plexus-algo": {"plexus-types", "plexus-txn"},
    # binder → logical plan → optimizer passes; knows statistics, not how operators run
    "plexus-plan": {
        "plexus-types", "plexus-cypher", "plexus-value", "plexus-txn", "plexus-ingest",
    },
    # filter predicates compiled with Cranelift: expressions and values in, machine code out;
    # it reads no storage and runs no operator (plexus-exec hands it typed columns)
    "plexus-jit": {"plexus-types", "plexus-cypher", "plexus-value", "plexus-plan"},
    "plexus-exec": {
        "plexus-types", "plexus-cypher", "plexus-value", "plexus-plan", "plexus-storage",
        "plexus-txn", "plexus-ingest", "plexus-jit",
    },
    "plexus": {
        "plexus-types", "plexus-storage", "plexus-txn", "plexus-algo", "plexus-cypher",
        "plexus-value", "plexus-plan", "plexus-exec", "plexus-ingest",
    },
    # front ends: the facade, and the values it hands out (plus each other where one embeds
    # another; the CLI runs the conformance crate's Graphalytics harness for `plexus algo
    # validate`)
    "plexus-bolt": {"plexus", "plexus-value"},
    "plexus-py": {"plexus", "plexus-value"},
    # the PostgreSQL mirror writes through the facade like any other client
    "plexus-mirror": {"plexus", "plexus-value"},
    # (`plexus import` reads its files with plexus-ingest, which holds no engine, and loads
    # them through the facade's BulkLoad)
    # Apache GraphAr export and import: the facade's snapshots and BulkLoad, nothing below
    "plexus-graphar": {"plexus", "plexus-value"},
    # the HTTP Query API and console: the facade, its values, and the Bolt server's users
    # and basic authentication (the same `--user` list) and status codes, reused not copied
    "plexus-http": {"plexus", "plexus-value", "plexus-bolt"},
    "plexus-cli": {
        "plexus", "plexus-value", "plexus-ingest", "plexus-bolt", "plexus-tck", "plexus-mirror",
        "plexus-graphar", "plexus-http",
    },
    "plexus-tck": {"plexus", "plexus-value"},
    "plexus-bench": {
        "plexus", "plexus-value", "plexus-bolt", "plexus-tck", "plexus-mirror", "plexus-graphar",
        "plexus-http",
    },
}


def module_files(path):
    """The Rust files of a top-level module: its file, or every file under its directory."""
    if os.path.isfile(path):
        return [path]
    return [
        os.path.join(root, name)
        for root, _, names in os.walk(path)
        for name in names
        if name.endswith(".rs")
    ]


def module_cycles(src):
    """The cycles among the top-level modules of the crate whose sources are in `src`: each as
    the sorted names of one strongly connected component of more than one module. An edge is a
    `crate::<module>` path outside comments (a `use`, or a path in code)."""
    modules = {}
    for name in os.listdir(src):
        path = os.path.join(src, name)
        if name in ("lib.rs", "main.rs"):
            continue
        if os.path.isdir(path):
            modules[name] = path
        elif name.endswith(".rs"):
            modules[name[: -len(".rs")]] = path
    edges = {m: set() for m in modules}
    for module, path in modules.items():
        for file in module_files(path):
            with open(file, encoding="utf-8") as f:
                code = re.sub(r"//.*", "", f.read())
            for target in re.findall(r"\bcrate::([a-z_0-9]+)", code):
                if target in modules and target != module:
                    edges[module].add(target)
    # Tarjan's strongly connected components.
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return cycles


def main():
    metadata = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps", "--locked"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    members = {package["name"]: package for package in metadata["packages"]}
    problems = []
    for name in sorted(members):
        if name not in LAYERS:
            problems.append(f"{name}: not in the layering table of {sys.argv[0]}")
            continue
        for dep in members[name]["dependencies"]:
            if dep["name"] in members and dep["name"] not in LAYERS[name]:
                kind = dep["kind"] or "normal"
                problems.append(f"{name} -> {dep['name']} ({kind}): not allowed by the layering")
        src = os.path.join(os.path.dirname(members[name]["manifest_path"]), "src")
        for cycle in module_cycles(src):
            problems.append(f"{name}: modules import each other in a cycle: {', '.join(cycle)}")
    for problem in problems:
        print(f"layering: {problem}", file=sys.stderr)
    print(f"layering: {len(members)} crates, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
