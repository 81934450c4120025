"""A dependency-cycle checker for list-append histories (after Elle, much simplified).

HISTORIES
=========
A transaction is a list of micro-operations on keys whose values are lists:

    ("append", k, v)      append v to the list at k (the values appended to one key are unique)
    ("r", k, [v1, v2])    read the list at k

`check(committed, aborted)` takes the transactions that committed, with what their reads
returned, and those that aborted (only their appends matter), and returns the anomalies found.
Transactions are named T0, T1, ... (committed, in the order given) and A0, A1, ... (aborted).

VERSION ORDER
=============
Lists make the version order of a key visible: a read of [1, 2, 3] says that the versions of k
were [], [1], [1, 2], [1, 2, 3], in that order. The longest read of k is taken as its version
order; every other read of k must be a prefix of it (else: "incompatible-order"). A committed
append that no read saw comes after everything that was read, in an unknown order.

DEPENDENCIES (edges between committed transactions)
===================================================
    ww   T appended the value just before U's in the version order of some key
         (and T's last observed value precedes every append that no read saw);
    wr   U read a list whose last value T appended;
    rw   T read a list of k that is missing the value U appended next (an anti-dependency;
         also to the appender of every value of k no read saw).
A transaction's edges to itself are dropped.

ANOMALIES
=========
Cycles, found per strongly connected component (Tarjan), each with a witness cycle:
    G0         a cycle of ww edges only (write cycle);
    G1c        a cycle of ww and wr edges with at least one wr (circular information flow);
    G-single   a cycle with exactly one rw edge (read skew);
    G2         a cycle with two or more rw edges (write skew; reported for a component with rw
               edges in which no G-single cycle exists).
And, without cycles:
    G1a        a committed read saw a value appended by an aborted transaction;
    G1b        a read ended in a value that was not its writer's last append to that key (an
               intermediate version; a transaction's reads of its own appends excepted);
    incompatible-order, garbage (a value nobody appended), duplicate (a value twice in one
    read), internal (a read missing the transaction's own earlier appends).

Snapshot isolation allows G2 (only); SERIALIZABLE allows none of these.
"""

from collections import defaultdict
from dataclasses import dataclass

WW, WR, RW = "ww", "wr", "rw"


@dataclass(frozen=True)
class Anomaly:
    kind: str
    detail: str
    cycle: tuple = ()  # ((from, edge kind, to), ...) for the cycle kinds

    def __str__(self):
        steps = " ".join(f"{a} -{kind}-> {b}" for a, kind, b in self.cycle)
        return f"{self.kind}: {self.detail}" + (f" [{steps}]" if steps else "")


def kinds(anomalies):
    """The set of anomaly kinds in a list of anomalies."""
    return {a.kind for a in anomalies}


def check(committed, aborted=()):
    names = [f"T{i}" for i in range(len(committed))]
    anomalies = []

    # Who appended what; the order of a transaction's own appends per key.
    writer = {}  # (k, v) -> name of the committed transaction
    own_appends = defaultdict(list)  # (name, k) -> [v, ...] in append order
    for name, ops in zip(names, committed):
        for op in ops:
            if op[0] == "append":
                _, k, v = op
                writer[(k, v)] = name
                own_appends[(name, k)].append(v)
    aborted_writer = {}
    for i, ops in enumerate(aborted):
        for op in ops:
            if op[0] == "append":
                aborted_writer[(op[1], op[2])] = f"A{i}"

    reads = []  # (reader, k, values)
    for name, ops in zip(names, committed):
        appended_so_far = defaultdict(list)
        for op in ops:
            if op[0] == "append":
                appended_so_far[op[1]].append(op[2])
            elif op[0] == "r":
                _, k, values = op
                values = list(values)
                reads.append((name, k, values))
                mine = appended_so_far[k]
                if mine and values[-len(mine):] != mine:
                    anomalies.append(
                        Anomaly("internal", f"{name} appended {mine} to {k!r} but read {values}")
                    )
            else:
                raise ValueError(f"unknown micro-op {op!r}")

    # Version order per key: the longest read; every read a prefix of it.
    order = {}
    for reader, k, values in reads:
        if len(set(values)) != len(values):
            anomalies.append(Anomaly("duplicate", f"{reader} read {k!r} = {values}"))
        for v in values:
            if (k, v) in aborted_writer:
                anomalies.append(
                    Anomaly("G1a", f"{reader} read {k!r} = {values}: {v} from {aborted_writer[(k, v)]}")
                )
            elif (k, v) not in writer:
                anomalies.append(Anomaly("garbage", f"{reader} read {k!r} = {values}: nobody appended {v}"))
        if len(values) > len(order.get(k, [])):
            order[k] = values
    for reader, k, values in reads:
        if order.get(k, [])[: len(values)] != values:
            anomalies.append(
                Anomaly("incompatible-order", f"{reader} read {k!r} = {values}, another read {order[k]}")
            )

    # Edges.
    edges = defaultdict(set)  # (a, b) -> {kind}

    def edge(a, kind, b):
        if a is not None and b is not None and a != b:
            edges[(a, b)].add(kind)

    unseen = defaultdict(list)  # k -> committed appenders of values no read saw
    for (k, v), name in writer.items():
        if v not in order.get(k, ()):
            unseen[k].append(name)
    for k, values in order.items():
        appenders = [writer.get((k, v)) for v in values]
        for a, b in zip(appenders, appenders[1:]):
            edge(a, WW, b)
        for later in unseen[k]:
            edge(appenders[-1], WW, later)
    for reader, k, values in reads:
        if values:
            last = writer.get((k, values[-1]))
            edge(last, WR, reader)
            if last is not None and last != reader:
                mine = own_appends[(last, k)]
                if mine and mine[-1] != values[-1]:
                    anomalies.append(
                        Anomaly("G1b", f"{reader} read {k!r} = {values}, an intermediate state of {last}")
                    )
        full = order.get(k, [])
        if len(full) > len(values):
            edge(reader, RW, writer.get((k, full[len(values)])))
        for later in unseen[k]:
            edge(reader, RW, later)

    anomalies.extend(cycle_anomalies(names, edges))
    return anomalies


def cycle_anomalies(names, edges):
    successors = defaultdict(list)
    for (a, b) in sorted(edges):
        successors[a].append(b)
    found = []
    for component in strongly_connected(names, successors):
        if len(component) < 2:
            continue
        inside = set(component)

        def path(start, goal, allowed):
            """Shortest path start -> goal inside the component over edges with an allowed
            kind, as [(from, kind, to), ...], or None."""
            previous = {start: None}
            frontier = [start]
            while frontier:
                nxt = []
                for a in frontier:
                    for b in successors[a]:
                        usable = [k for k in (WW, WR, RW) if k in edges[(a, b)] & allowed]
                        if b in inside and usable and b not in previous:
                            previous[b] = (a, usable[0])
                            nxt.append(b)
                frontier = nxt
                if goal in previous and goal != start:
                    break
            if goal not in previous or previous[goal] is None:
                return None
            steps, node = [], goal
            while node != start:
                a, kind = previous[node]
                steps.append((a, kind, node))
                node = a
            return steps[::-1]

        def cycle_through(kind, rest):
            """A cycle made of one `kind` edge and a path over `rest` kinds back to it."""
            for (a, b), ks in sorted(edges.items()):
                if kind in ks and a in inside and b in inside:
                    back = path(b, a, rest)
                    if back is not None:
                        return ((a, kind, b), *back)
            return None

        members = ", ".join(sorted(component))
        g0 = cycle_through(WW, {WW})
        if g0:
            found.append(Anomaly("G0", f"write cycle among {members}", g0))
        g1c = cycle_through(WR, {WW, WR})
        if g1c:
            found.append(Anomaly("G1c", f"circular information flow among {members}", g1c))
        g_single = cycle_through(RW, {WW, WR})
        if g_single:
            found.append(Anomaly("G-single", f"one anti-dependency among {members}", g_single))
        else:
            g2 = cycle_through(RW, {WW, WR, RW})
            if g2:
                found.append(Anomaly("G2", f"anti-dependency cycle among {members}", g2))
    return found


def strongly_connected(nodes, successors):
    """Tarjan's algorithm, iterative; returns the components as lists of nodes."""
    index, low, on_stack = {}, {}, set()
    stack, components = [], []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(successors[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors[child])))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components
