#!/usr/bin/env python3
"""Differential testing of Plexus against Neo4j 5.26 (issue 25).

THE LOOP
========
Two peers answer the same queries over the same graph:

    Plexus  `plexus serve` on a temporary directory and a free port, through the official
            Python driver (what Neo4j users run);
    Neo4j   Neo4j Community embedded (neo4j/, a Maven project) in a Java process that reads
            JSON-lines requests on stdin and answers on stdout.

For each of --graphs seeded random graphs (grammar.py) both peers run one CREATE statement,
then --queries random read queries split over the graphs. Each query goes to the Java process
first and to Plexus while Neo4j works, so the two run side by side on separate cores.

VALUES
======
Both answers are brought to one JSON-like encoding (the Java side's; see Neo4jPeer.java):
integers and floats stay distinct, NaN and the infinities are tagged, nodes become their labels
and properties, relationships their type and properties, paths alternate the two with the
direction of each step. `canon` then turns a value into a tuple tree for comparison.

COMPARISON
==========
    agree          same columns and rows: multisets of rows, or sequences when the generator
                   knows the ORDER BY is total; floats equal within REL_TOLERANCE (and 0.0 =
                   -0.0); columns tagged `bag` compare their lists as multisets
    both_error     both failed with the same error class (the last part of the status code:
                   SyntaxError, TypeError, ArgumentError, ArithmeticError, SemanticError ...)
    error_class    both failed, with different classes
    plexus_error   only Plexus failed
    neo4j_error    only Neo4j failed
    rows           both answered, differently (columns, row count or values)
    plexus_crash   the Plexus connection died (the server is restarted and the graph reloaded)

SHRINKING
=========
A mismatch is shrunk greedily: every one-step edit of the query tree (delete an optional clause
or a list item, replace an expression by a subexpression or by a small literal) is tried in
turn, and the first that still gives a mismatch with the same signature (category and error
classes) is kept; then the graph is shrunk the same way by deleting halves, quarters, ... of its
nodes and relationships. The result is printed as a self-contained repro (the CREATE statement
and the query). Before shrinking a new mismatch the harness checks whether an already shrunk
class explains it (same signature and its query uses every feature of the class's repro); if so
it is counted in that class unshrunk, which keeps a run's time spent on new differences.

SELF-TEST
=========
`--self-test` runs a few hundred queries, then plants wrong answers on the Plexus side
(a perturbed value, a dropped row, a duplicated row, an int turned float, a reordered ordered
result, a swapped error class, a lost error) and checks the comparison reports every plant and
accepts a float perturbation within the tolerance. It then plants a fault in Plexus's answers
to every query that uses toUpper and checks the shrinker ends with a small query that still
uses toUpper. It exits 1 if any check fails.
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import neo4j
from neo4j.exceptions import Neo4jError

import grammar

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
REL_TOLERANCE = 1e-9
ABS_TOLERANCE = 1e-12
SERVER_START_TIMEOUT_S = 60
# A shrink tries at most this many candidate queries and this many graph reloads.
SHRINK_MAX_QUERY_TRIES = 250
SHRINK_MAX_GRAPH_TRIES = 24
# Shrinking stops for the rest of a run after this many shrunk mismatches.
SHRINK_MAX_PER_RUN = 80
# Rows printed per side in a report entry.
REPORT_MAX_ROWS = 6


# --------------------------------------------------------------------------------------------
# Answers


class Answer:
    """Rows (columns, rows) or an error (code, message)."""

    def __init__(self, columns=None, rows=None, code=None, message=None):
        self.columns = columns
        self.rows = rows
        self.code = code
        self.message = message

    @property
    def ok(self):
        return self.code is None

    def error_class(self):
        return self.code.rsplit(".", 1)[-1] if self.code else None

    def error_kind(self):
        """The error class, with Neo4j's compile-time type checks (a SyntaxError whose message
        starts "Type mismatch") told apart from other syntax errors, for grouping mismatches."""
        kind = self.error_class()
        if kind == "SyntaxError" and (self.message or "").startswith("Type mismatch"):
            return "SyntaxError(type mismatch)"
        return kind

    def to_json(self):
        if self.ok:
            return {"columns": self.columns, "rows": self.rows[:REPORT_MAX_ROWS], "row_count": len(self.rows)}
        return {"code": self.code, "message": (self.message or "")[:300]}


def encode(v):
    """A driver value in the Java side's encoding (see the module doc)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return {"$float": "NaN"}
        if math.isinf(v):
            return {"$float": "Infinity" if v > 0 else "-Infinity"}
        return v
    if isinstance(v, list):
        return [encode(x) for x in v]
    if isinstance(v, dict):
        return {k: encode(x) for k, x in v.items()}
    if isinstance(v, neo4j.graph.Node):
        return {"$node": node_content(v)}
    if isinstance(v, neo4j.graph.Relationship):
        return {"$rel": rel_content(v)}
    if isinstance(v, neo4j.graph.Path):
        parts = [{"$node": node_content(v.start_node)}]
        at = v.start_node
        for r in v.relationships:
            fwd = r.start_node.element_id == at.element_id
            parts.append({"$rel": rel_content(r), "fwd": fwd})
            at = r.end_node if fwd else r.start_node
            parts.append({"$node": node_content(at)})
        return {"$path": parts}
    kind = type(v).__name__
    if hasattr(v, "iso_format"):
        return {"$temporal": kind, "iso": v.iso_format()}
    return {"$unknown": f"{kind}:{v!r}"}


def node_content(n):
    return {"labels": sorted(n.labels), "props": {k: encode(x) for k, x in sorted(n.items())}}


def rel_content(r):
    return {"type": r.type, "props": {k: encode(x) for k, x in sorted(r.items())}}


# --------------------------------------------------------------------------------------------
# Peers


class PlexusPeer:
    """`plexus serve` on a temporary directory, reached through the Python driver."""

    def __init__(self, binary):
        self.binary = binary
        self.proc = None
        self.driver = None
        self.dir = None
        self.start()

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="difftest-plexus-")
        self.proc = subprocess.Popen(
            [self.binary, "serve", os.path.join(self.dir, "db"), "--bolt", "127.0.0.1:0", "--no-auth"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        timer = threading.Timer(SERVER_START_TIMEOUT_S, self.proc.kill)
        timer.start()
        line = self.proc.stdout.readline().strip()
        timer.cancel()
        if "listening on" not in line:
            raise RuntimeError(f"plexus serve did not start: {line!r}")
        self.driver = neo4j.GraphDatabase.driver(line.rsplit(" ", 1)[1], auth=None)
        self.driver.verify_connectivity()

    def stop(self):
        if self.driver:
            self.driver.close()
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def alive(self):
        return self.proc.poll() is None

    def run(self, query):
        try:
            with self.driver.session() as s:
                result = s.run(query)
                rows = [[encode(v) for v in rec.values()] for rec in result]
                return Answer(columns=list(result.keys()), rows=rows)
        except Neo4jError as e:
            return Answer(code=e.code or "Neo.Unknown", message=e.message)
        except Exception as e:  # the connection died: a crash or a protocol failure
            return Answer(code="Harness.Crash", message=f"{type(e).__name__}: {e}")


class Neo4jPeer:
    """Neo4j embedded in a Java process (neo4j/), one JSON line per request and answer."""

    def __init__(self, classpath):
        self.proc = subprocess.Popen(
            ["java", "-Xmx2g", "-cp", classpath, "plexus.difftest.Neo4jPeer"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            encoding="utf-8")
        ready = json.loads(self.proc.stdout.readline())
        if not ready.get("ready"):
            raise RuntimeError(f"the Neo4j peer did not start: {ready}")
        self.send({"op": "version"})
        self.version = self.receive().get("version")

    def send(self, request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()

    def receive(self):
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the Neo4j peer exited")
        return json.loads(line)

    @staticmethod
    def answer(reply):
        if reply.get("ok"):
            return Answer(columns=reply["columns"], rows=reply["rows"])
        return Answer(code=reply.get("code"), message=reply.get("message"))

    def run(self, query):
        self.send({"op": "run", "query": query, "params": {}})
        return self.answer(self.receive())

    def stop(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Pair:
    """Both peers; `plant` (self-test only) rewrites Plexus's answers."""

    def __init__(self, plexus, neo):
        self.plexus = plexus
        self.neo = neo
        self.plant = None
        self.graph = None

    def run(self, query):
        self.neo.send({"op": "run", "query": query, "params": {}})
        px = self.plexus.run(query)
        ne = Neo4jPeer.answer(self.neo.receive())
        if px.code == "Harness.Crash" or not self.plexus.alive():
            px = Answer(code="Harness.Crash", message=px.message)
            self.restart_plexus()
        if self.plant:
            px = self.plant(query, px)
        return px, ne

    def restart_plexus(self):
        self.plexus.stop()
        self.plexus.start()
        if self.graph is not None:
            self.load_on(self.plexus.run, self.graph)

    @staticmethod
    def load_on(run, graph):
        for q in ("MATCH (n) DETACH DELETE n", graph.create_statement()):
            if q is None:
                continue
            a = run(q)
            if not a.ok:
                raise RuntimeError(f"loading the graph failed: {a.code} {a.message}")

    def load(self, graph):
        self.graph = graph
        self.load_on(self.plexus.run, graph)
        self.load_on(self.neo.run, graph)


# --------------------------------------------------------------------------------------------
# Comparison


def canon(v, bag=False):
    """A comparable tuple tree; floats as ('f', x). With bag=True a list's elements are sorted."""
    if v is None:
        return ("null",)
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, float):
        return ("f", 0.0 if v == 0 else v)
    if isinstance(v, str):
        return ("s", v)
    if isinstance(v, list):
        items = [canon(x) for x in v]
        if bag:
            items.sort(key=repr)
        return ("l", tuple(items))
    if isinstance(v, dict):
        if "$float" in v:
            return ("f", float(v["$float"]))
        return ("m", tuple(sorted((k, canon(x)) for k, x in v.items())))
    return ("?", repr(v))


def value_eq(a, b):
    """Equality of two canon values, floats within the tolerance (NaN equals NaN here)."""
    if a[0] != b[0]:
        return False
    if a[0] == "f":
        x, y = a[1], b[1]
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        if math.isinf(x) or math.isinf(y):
            return x == y
        return abs(x - y) <= max(ABS_TOLERANCE, REL_TOLERANCE * max(abs(x), abs(y)))
    if a[0] == "l":
        return len(a[1]) == len(b[1]) and all(value_eq(x, y) for x, y in zip(a[1], b[1]))
    if a[0] == "m":
        return len(a[1]) == len(b[1]) and all(
            ka == kb and value_eq(va, vb) for (ka, va), (kb, vb) in zip(a[1], b[1]))
    return a == b


def sort_key(v):
    """A sort key that puts values equal within the tolerance next to each other."""
    if v[0] == "f":
        x = v[1]
        return ("f", "nan" if math.isnan(x) else float(f"{x:.6g}"))
    if v[0] in ("l",):
        return ("l", tuple(sort_key(x) for x in v[1]))
    if v[0] == "m":
        return ("m", tuple((k, sort_key(x)) for k, x in v[1]))
    return v


def compare(query, px, ne):
    """The category of one query's pair of answers (see the module doc) and a short reason."""
    if px.code == "Harness.Crash":
        return "plexus_crash", px.message
    if not px.ok and not ne.ok:
        if px.error_class() == ne.error_class():
            return "both_error", None
        return "error_class", f"Plexus {px.error_class()}, Neo4j {ne.error_class()}"
    if not px.ok:
        return "plexus_error", px.error_class()
    if not ne.ok:
        return "neo4j_error", ne.error_class()
    if px.columns != ne.columns:
        return "rows", f"columns {px.columns} vs {ne.columns}"
    bags = query.bag_columns()
    bag_index = [c in bags for c in px.columns]

    def rows_of(a):
        return [tuple(canon(v, bag) for v, bag in zip(r, bag_index)) for r in a.rows]

    pr, nr = rows_of(px), rows_of(ne)
    if len(pr) != len(nr):
        return "rows", f"{len(pr)} rows vs {len(nr)}"
    if not query.ordered():
        key = lambda row: repr(tuple(sort_key(v) for v in row))
        pr.sort(key=key)
        nr.sort(key=key)
    for a, b in zip(pr, nr):
        if not all(value_eq(x, y) for x, y in zip(a, b)):
            return "rows", "values differ" + (" (ordered)" if query.ordered() else "")
    return "agree", None


NOISE_RE = re.compile(r"\(line \d+, column \d+ \(offset: \d+\)\)|at line \d+, column \d+|'[^']*'|\"[^\"]*\"|-?\d+(\.\d+)?")


def message_key(a):
    """An error message without positions, literals and numbers: errors that differ only in
    those belong to one class."""
    if a.ok:
        return None
    if a.error_kind() == "SyntaxError(type mismatch)":
        return "Type mismatch"
    first = (a.message or "").split("\n", 1)[0]
    return NOISE_RE.sub("_", first).strip()


def class_key(category, px, ne):
    """How mismatches are grouped. Errors: by signature and message keys, except that every
    Neo4j compile-time type check is one class per category (Plexus types at run time, so it
    fails later or, when the ill-typed expression is never evaluated, answers). Rows: None,
    grouped by the features of their shrunk repros instead."""
    if category == "rows":
        return None
    if ne.error_kind() == "SyntaxError(type mismatch)":
        return [category, px.error_class(), "Neo4j compile-time type check"]
    return [category, message_key(px), message_key(ne)]


def signature(category, px, ne):
    """What a shrunk query must keep to count as the same mismatch."""
    return (category, px.error_kind(), ne.error_kind())


FEATURE_RE = re.compile(r"[A-Za-z_]+(?=\()|STARTS WITH|ENDS WITH|CONTAINS|=~|IS NOT NULL|IS NULL|"
                        r"\bIN\b|\bXOR\b|\bUNION ALL\b|\bUNION\b|OPTIONAL MATCH|\bUNWIND\b|\bWITH\b|"
                        r"DISTINCT|ORDER BY|SKIP|LIMIT|COUNT \{|EXISTS \{|\*\d|[%^/*+\-]|\[")


def features(text):
    return set(FEATURE_RE.findall(text))


# --------------------------------------------------------------------------------------------
# Shrinking


def variants(node):
    """Every tree one edit away from `node`, larger edits first."""
    if isinstance(node, grammar.Seq):
        if not node.fixed and len(node.items) > node.min_items:
            for i, it in enumerate(node.items):
                if getattr(it, "kind", None) != "return":
                    yield node.replace_items(node.items[:i] + node.items[i + 1:])
        for i, it in enumerate(node.items):
            for v in variants(it):
                yield node.replace_items(node.items[:i] + [v] + node.items[i + 1:])
        return
    if node.optional:
        yield grammar.EMPTY
    if node.kind == "expr":
        for sub in node.walk():
            if sub is not node and isinstance(sub, grammar.T) and sub.kind == "expr":
                yield sub
        text = node.render()
        for literal in ("null", "1", "0", "'a'", "true", "1.5", "[]"):
            if text != literal:
                yield grammar.T("expr", literal)
    for i, p in enumerate(node.parts):
        if isinstance(p, str):
            continue
        for v in variants(p):
            yield node.replace_parts(node.parts[:i] + [v] + node.parts[i + 1:])


def still_differs(pair, query, sig):
    """Whether `query` still gives the mismatch `sig` = (signature, class key)."""
    px, ne = pair.run(query.text())
    category, _ = compare(query, px, ne)
    same = category not in ("agree", "both_error") and \
        (signature(category, px, ne), class_key(category, px, ne)) == sig
    return same, (px, ne)


def shrink(pair, query, graph, sig):
    """The smallest query and graph found that keep the mismatch `sig` (signature and class
    key, so an error keeps its message), with their answers."""
    tries = 0
    best = query
    # After an accepted edit the next pass starts at the same position in the list of edits
    # (the earlier ones failed a moment ago and mostly still would), wrapping around once.
    start = 0
    improved = True
    while improved and tries < SHRINK_MAX_QUERY_TRIES:
        improved = False
        candidates = [grammar.Query(t) for t in variants(best.tree)]
        order = list(range(start, len(candidates))) + list(range(0, min(start, len(candidates))))
        for k in order:
            candidate = candidates[k]
            if len(candidate.text()) >= len(best.text()):
                continue
            tries += 1
            if still_differs(pair, candidate, sig)[0]:
                best, improved, start = candidate, True, k
                break
            if tries >= SHRINK_MAX_QUERY_TRIES:
                break
    small = graph
    graph_tries = 0
    for what in ("rels", "nodes"):
        chunk = max(1, len(small.rels if what == "rels" else small.nodes) // 2)
        while chunk >= 1 and graph_tries < SHRINK_MAX_GRAPH_TRIES:
            size = len(small.rels if what == "rels" else small.nodes)
            start = 0
            reduced = False
            while start < size and graph_tries < SHRINK_MAX_GRAPH_TRIES:
                drop = set(range(start, min(size, start + chunk)))
                cand = small.without_rels(drop) if what == "rels" else small.without_nodes(drop)
                graph_tries += 1
                pair.load(cand)
                if still_differs(pair, best, sig)[0]:
                    small, reduced = cand, True
                    size = len(small.rels if what == "rels" else small.nodes)
                else:
                    start += chunk
            if not reduced:
                chunk //= 2
    pair.load(small)
    ok, ans = still_differs(pair, best, sig)
    if not ok:  # a flaky mismatch: keep the original graph
        small = graph
        pair.load(graph)
        ok, ans = still_differs(pair, best, sig)
    if small is not graph:
        pair.load(graph)
    return best, small, ans


# --------------------------------------------------------------------------------------------
# The run


class Report:
    def __init__(self):
        self.counts = {}
        self.classes = []  # dicts: signature, features, count, repro

    def explained_by(self, sig, key, text, either_way=False):
        """The class of a mismatch: the one with its class key (errors), or else one with its
        signature whose repro's features all occur in `text` (or, with either_way, whose
        features `text` uses all of: a shrunk repro of the same class)."""
        if key is not None:
            return next((c for c in self.classes if c["key"] == key), None)
        f = features(text)
        for c in self.classes:
            cf = set(c["features"])
            if c["key"] is None and c["signature"] == list(sig) and (cf <= f or (either_way and f <= cf)):
                return c
        return None


def run_graph(pair, rng, graph, n_queries, report, shrink_budget, log):
    gen = grammar.Gen(rng)
    for _ in range(n_queries):
        query = gen.query()
        text = query.text()
        px, ne = pair.run(text)
        category, reason = compare(query, px, ne)
        report.counts[category] = report.counts.get(category, 0) + 1
        if category in ("agree", "both_error"):
            continue
        sig = signature(category, px, ne)
        key = class_key(category, px, ne)
        known = report.explained_by(sig, key, text)
        if known:
            known["count"] += 1
            continue
        if shrink_budget[0] <= 0:
            report.classes.append(new_class(sig, key, query, graph, px, ne, reason, shrunk=False))
            continue
        shrink_budget[0] -= 1
        small_q, small_g, (spx, sne) = shrink(pair, query, graph, (sig, key))
        _, small_reason = compare(small_q, spx, sne)
        same = report.explained_by(sig, key, small_q.text(), either_way=True)
        if same:
            same["count"] += 1
            if len(small_q.text()) < len(same["repro"]["query"]):
                same.update(new_class(sig, key, small_q, small_g, spx, sne, small_reason, True, same["count"]))
            continue
        cls = new_class(sig, key, small_q, small_g, spx, sne, small_reason, shrunk=True)
        cls["original"] = text
        report.classes.append(cls)
        log(f"  new class {sig}: {small_q.text()}")


def new_class(sig, key, query, graph, px, ne, reason, shrunk, count=1):
    text = query.text()
    create = graph.create_statement()
    return {
        "signature": list(sig),
        "key": key,
        "features": sorted(features(text)),
        "count": count,
        "shrunk": shrunk,
        "reason": reason,
        "repro": {"graph": "(empty graph)" if create is None else create if len(graph.nodes) <= 40
                  else f"(the seeded graph of {len(graph.nodes)} nodes)", "query": text},
        "plexus": px.to_json(),
        "neo4j": ne.to_json(),
    }


def plexus_binary(arg):
    if arg:
        return arg
    path = ROOT / "target" / "release" / "plexus"
    if not path.exists():
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "plexus-cli"], cwd=ROOT, check=True)
    return str(path)


def neo4j_classpath():
    project = HERE / "neo4j"
    jar = project / "target" / "difftest-neo4j-1.jar"
    if not jar.exists():
        subprocess.run(["mvn", "-q", "package"], cwd=project, check=True)
    return f"{jar}{os.pathsep}{project / 'target' / 'lib' / '*'}"


def print_summary(report, out):
    total = sum(report.counts.values())
    print(f"queries: {total}", file=out)
    for k in ("agree", "both_error", "rows", "error_class", "plexus_error", "neo4j_error", "plexus_crash"):
        print(f"  {k:13} {report.counts.get(k, 0)}", file=out)
    print(f"difference classes: {len(report.classes)}", file=out)
    for i, c in enumerate(sorted(report.classes, key=lambda c: -c["count"])):
        sig = c["signature"]
        print(f"\n[{i + 1}] {sig[0]} (Plexus {sig[1]}, Neo4j {sig[2]}) x{c['count']}"
              f"{'' if c['shrunk'] else ' (not shrunk)'}: {c['reason']}", file=out)
        if c["key"]:
            print(f"  key: {c['key'][1:]}", file=out)
        print(f"  graph: {c['repro']['graph']}", file=out)
        print(f"  query: {c['repro']['query']}", file=out)
        print(f"  plexus: {json.dumps(c['plexus'])[:400]}", file=out)
        print(f"  neo4j:  {json.dumps(c['neo4j'])[:400]}", file=out)


def main_run(args):
    rng = random.Random(args.seed)
    log = lambda m: print(m, file=sys.stderr, flush=True)
    plexus = PlexusPeer(plexus_binary(args.plexus))
    neo = Neo4jPeer(neo4j_classpath())
    pair = Pair(plexus, neo)
    report = Report()
    budget = [args.shrink_max]
    started = time.time()
    try:
        per_graph = [args.queries // args.graphs + (1 if g < args.queries % args.graphs else 0)
                     for g in range(args.graphs)]
        for g, n in enumerate(per_graph):
            graph_rng = random.Random(rng.getrandbits(64))
            graph = grammar.random_graph(graph_rng, args.min_nodes, args.max_nodes)
            pair.load(graph)
            log(f"graph {g + 1}/{args.graphs}: {len(graph.nodes)} nodes, {len(graph.rels)} rels, {n} queries")
            run_graph(pair, graph_rng, graph, n, report, budget, log)
            log(f"  so far: {report.counts}")
    finally:
        plexus.stop()
        neo.stop()
    print_summary(report, sys.stdout)
    out_dir = ROOT / "target" / "difftest"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"report-seed{args.seed}-q{args.queries}.json"
    path.write_text(json.dumps({
        "seed": args.seed, "queries": args.queries, "graphs": args.graphs,
        "neo4j_version": neo.version, "seconds": round(time.time() - started, 1),
        "counts": report.counts, "classes": report.classes}, indent=1))
    print(f"\nreport: {path}")
    return 0


# --------------------------------------------------------------------------------------------
# Self-test


def plants(query, px):
    """Wrong versions of a correct Plexus answer, each named."""
    out = []
    if not px.ok:
        other = "TypeError" if px.error_class() != "TypeError" else "SyntaxError"
        out.append(("swap error class", Answer(code=f"Neo.ClientError.Statement.{other}", message="planted")))
        out.append(("lose the error", Answer(columns=["x"], rows=[])))
        return out
    rows = [list(r) for r in px.rows]
    if rows:
        out.append(("drop a row", Answer(px.columns, rows[1:])))
        out.append(("duplicate a row", Answer(px.columns, rows + [rows[0]])))
        out.append(("an error instead", Answer(code="Neo.ClientError.Statement.ArithmeticError", message="planted")))
    for i, r in enumerate(rows):
        for j, v in enumerate(r):
            if isinstance(v, bool) or v is None:
                continue
            if isinstance(v, int):
                bad = [list(x) for x in rows]
                bad[i][j] = v + 1
                out.append(("perturb an integer", Answer(px.columns, bad)))
                bad = [list(x) for x in rows]
                bad[i][j] = float(v)
                out.append(("integer turned float", Answer(px.columns, bad)))
                return finish_plants(query, px, rows, out)
            if isinstance(v, float) and math.isfinite(v):
                bad = [list(x) for x in rows]
                # Always away from v (`v * (1 + d) + d` is v again for v = -1).
                bad[i][j] = v + (abs(v) + 1) * 1e-6
                out.append(("perturb a float", Answer(px.columns, bad)))
                return finish_plants(query, px, rows, out)
    return finish_plants(query, px, rows, out)


def finish_plants(query, px, rows, out):
    if query.ordered() and len(rows) >= 2 and rows[0] != rows[-1]:
        out.append(("reorder an ordered result", Answer(px.columns, rows[::-1])))
    return out


def within_tolerance(px):
    """px with every finite float nudged by far less than the tolerance (must still agree)."""
    def nudge(v):
        if isinstance(v, float) and math.isfinite(v) and not isinstance(v, bool):
            return v * (1 + REL_TOLERANCE / 100)
        if isinstance(v, list):
            return [nudge(x) for x in v]
        return v
    return Answer(px.columns, [[nudge(v) for v in r] for r in px.rows])


def self_test(args):
    log = lambda m: print(m, file=sys.stderr, flush=True)
    rng = random.Random(args.seed)
    plexus = PlexusPeer(plexus_binary(args.plexus))
    neo = Neo4jPeer(neo4j_classpath())
    pair = Pair(plexus, neo)
    failures = []
    checked = {}
    try:
        graph = grammar.random_graph(rng, 15, 30)
        pair.load(graph)
        gen = grammar.Gen(rng)
        n = 0
        while n < 300:
            query = gen.query()
            px, ne = pair.run(query.text())
            if compare(query, px, ne)[0] not in ("agree", "both_error"):
                continue
            n += 1
            for name, bad in plants(query, px):
                category, _ = compare(query, bad, ne)
                checked[name] = checked.get(name, 0) + 1
                if category in ("agree", "both_error"):
                    failures.append(f"plant '{name}' not caught: {query.text()}")
            if px.ok:
                category, reason = compare(query, within_tolerance(px), ne)
                checked["within tolerance accepted"] = checked.get("within tolerance accepted", 0) + 1
                if category != "agree":
                    failures.append(f"a float change within tolerance was reported ({reason}): {query.text()}")
        for name in ("drop a row", "perturb an integer", "perturb a float", "reorder an ordered result",
                     "swap error class", "integer turned float"):
            if not checked.get(name):
                failures.append(f"plant '{name}' was never exercised")
        # A planted fault in Plexus: every answer to a query using toUpper loses its first row.
        def fault(text, px):
            if "toUpper(" in text and px.ok and px.rows:
                return Answer(px.columns, px.rows[1:])
            return px
        pair.plant = fault
        found = None
        for _ in range(2000):
            query = gen.query()
            if "toUpper(" not in query.text():
                continue
            px, ne = pair.run(query.text())
            category, _ = compare(query, px, ne)
            if category == "rows":
                sig = (signature(category, px, ne), class_key(category, px, ne))
                small_q, small_g, _ = shrink(pair, query, graph, sig)
                found = (query.text(), small_q.text(), len(small_g.nodes))
                break
        pair.plant = None
        if not found:
            failures.append("the planted toUpper fault was never triggered")
        else:
            original, small, nodes = found
            log(f"planted fault shrunk from\n  {original}\nto\n  {small}  (graph of {nodes} nodes)")
            if "toUpper(" not in small or len(small) >= len(original):
                failures.append(f"the shrunk repro lost the fault or did not shrink: {small}")
            checked["planted fault shrunk"] = 1
    finally:
        plexus.stop()
        neo.stop()
    for name, k in sorted(checked.items()):
        print(f"  {name}: {k} checks")
    if failures:
        print(f"SELF-TEST FAILED ({len(failures)}):")
        for f in failures[:30]:
            print("  " + f)
        return 1
    print("self-test passed")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--graphs", type=int, default=4)
    p.add_argument("--min-nodes", type=int, default=20)
    p.add_argument("--max-nodes", type=int, default=120)
    p.add_argument("--shrink-max", type=int, default=SHRINK_MAX_PER_RUN,
                   help="shrink at most this many new mismatches per run")
    p.add_argument("--plexus", help="the plexus binary (default target/release/plexus, built if missing)")
    p.add_argument("--self-test", action="store_true")
    args = p.parse_args()
    # SIGTERM unwinds like ctrl-c, so both peers are stopped and the temp directory removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    sys.exit(self_test(args) if args.self_test else main_run(args))


if __name__ == "__main__":
    main()
