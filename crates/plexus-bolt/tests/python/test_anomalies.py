"""Isolation anomalies (Hermitage's list) through the Neo4j driver, at each isolation level.

Each scenario drives two or three explicit transactions, each on its own driver session and
begun with `metadata={"isolation": level}`, one step at a time in a fixed order. Plexus takes no
locks — nothing blocks, conflicts abort — so the steps need no threads. A scenario records how
each transaction ended ("committed", "rolled back", "aborted at commit", "aborted at a
statement"), what each read returned and the final state, and the test compares that with the
one table below, EXPECTED. Its `shows` column (does the anomaly happen at this level?) is
what docs/isolation.md tabulates; `test_docs_table_matches` keeps the two equal.

The scenarios follow Hermitage (github.com/ept/hermitage) on a graph: items are `(:K {id, v})`
nodes, predicates are label scans (`MATCH (n:K) WHERE ...`), index seeks on `(:L {p})` (an
index on L.p) and adjacency reads (`(:Shift)-[:ON_CALL]->(:Doctor)`).
"""

from dataclasses import dataclass, field

import neo4j
import pytest
from neo4j.exceptions import ClientError, TransientError

from conftest import PASSWORD, ROOT, USER, Server

LEVELS = ("snapshot", "serializable")

COMMITTED = "committed"
ROLLED_BACK = "rolled back"
ABORTED = "aborted at commit"
ABORTED_AT_STATEMENT = "aborted at a statement"


@dataclass
class Observation:
    outcome: dict  # transaction name -> how it ended
    reads: dict = field(default_factory=dict)  # "T2 x" -> what that read returned
    final: dict = field(default_factory=dict)  # the scenario's final-state query, as a dict


class Interleaving:
    """Named transactions on separate sessions of one driver, run step by step.

    A transaction that has ended (commit, rollback or abort) skips its later steps, so its
    later reads are absent from `reads`; the expected observation says which reads happen.
    """

    def __init__(self, driver, level):
        self.driver, self.level = driver, level
        self.sessions, self.txs = {}, {}
        self.outcome, self.reads, self.final = {}, {}, {}

    def begin(self, *names):
        for name in names:
            session = self.driver.session()
            self.sessions[name] = session
            self.txs[name] = session.begin_transaction(metadata={"isolation": self.level})

    def _run(self, name, query, params):
        if name in self.outcome:
            return None
        try:
            return list(self.txs[name].run(query, params))
        except TransientError:
            self.outcome[name] = ABORTED_AT_STATEMENT
            return None

    def write(self, name, query, **params):
        self._run(name, query, params)

    def read(self, name, what, query, **params):
        """Records the single value of a one-row, one-column query as reads[f"{name} {what}"]."""
        records = self._run(name, query, params)
        if records is not None:
            assert len(records) == 1 and len(records[0]) == 1, f"{query!r} gave {records}"
            self.reads[f"{name} {what}"] = records[0][0]

    def read_all(self, name, what, query, **params):
        """Records the first column of every row, sorted, as reads[f"{name} {what}"]."""
        records = self._run(name, query, params)
        if records is not None:
            self.reads[f"{name} {what}"] = sorted(r[0] for r in records)

    def commit(self, name):
        if name in self.outcome:
            return
        try:
            self.txs[name].commit()
            self.outcome[name] = COMMITTED
        except TransientError:
            self.outcome[name] = ABORTED

    def rollback(self, name):
        if name not in self.outcome:
            self.txs[name].rollback()
            self.outcome[name] = ROLLED_BACK

    def final_state(self, query):
        """The final state: a query of (key, value) rows, run after every transaction ended."""
        records, _, _ = self.driver.execute_query(query)
        self.final = {r[0]: r[1] for r in records}

    def close(self):
        for tx in self.txs.values():
            tx.close()
        for session in self.sessions.values():
            session.close()

    def observation(self):
        return Observation(dict(sorted(self.outcome.items())), self.reads, self.final)


# ---------------------------------------------------------------------------------------------
# Scenarios. Each gets a wiped database and an Interleaving; x is (:K {id: 1}), y (:K {id: 2}).

ITEMS = "CREATE (:K {id: 1, v: 10}), (:K {id: 2, v: 20})"
ITEMS_FINAL = "MATCH (n:K) RETURN n.id, n.v"
INDEXED = "CREATE (:L {id: 1, p: 10}), (:L {id: 2, p: 20})"
INDEXED_FINAL = "MATCH (n:L) RETURN n.id, n.p"
DOCTORS = "CREATE (:Doctor {name: 'alice', on_call: true}), (:Doctor {name: 'bob', on_call: true})"
SHIFT = (
    "CREATE (s:Shift), (a:Doctor {name: 'alice'}), (b:Doctor {name: 'bob'}),"
    " (c:Doctor {name: 'carol'}), (d:Doctor {name: 'dave'}), (s)-[:ON_CALL]->(a)"
)
SHIFT_TWO_ON_CALL = SHIFT + ", (s)-[:ON_CALL]->(b)"
ON_CALL_COUNT = "MATCH (:Shift)-[r:ON_CALL]->() RETURN count(r)"
ON_CALL_FINAL = "MATCH (:Shift)-[r:ON_CALL]->() WITH count(r) AS c RETURN 'on call', c"


def g0(h):
    """Write cycles: T1 and T2 both write x and y; T2's writes interleave T1's."""
    h.begin("T1", "T2")
    h.write("T1", "MATCH (n:K {id: 1}) SET n.v = 11")
    h.write("T2", "MATCH (n:K {id: 1}) SET n.v = 12")
    h.write("T1", "MATCH (n:K {id: 2}) SET n.v = 21")
    h.commit("T1")
    h.write("T2", "MATCH (n:K {id: 2}) SET n.v = 22")
    h.commit("T2")
    h.final_state(ITEMS_FINAL)


def g1a(h):
    """Aborted reads: T2 must not see the write of T1, which rolls back."""
    h.begin("T1", "T2")
    h.write("T1", "MATCH (n:K {id: 1}) SET n.v = 101")
    h.read("T2", "x", "MATCH (n:K {id: 1}) RETURN n.v")
    h.rollback("T1")
    h.read("T2", "x again", "MATCH (n:K {id: 1}) RETURN n.v")
    h.commit("T2")
    h.final_state(ITEMS_FINAL)


def g1b(h):
    """Intermediate reads: T2 must not see T1's first write to x, later overwritten by T1."""
    h.begin("T1", "T2")
    h.write("T1", "MATCH (n:K {id: 1}) SET n.v = 101")
    h.read("T2", "x", "MATCH (n:K {id: 1}) RETURN n.v")
    h.write("T1", "MATCH (n:K {id: 1}) SET n.v = 11")
    h.commit("T1")
    h.read("T2", "x again", "MATCH (n:K {id: 1}) RETURN n.v")
    h.commit("T2")
    h.final_state(ITEMS_FINAL)


def g1c(h):
    """Circular information flow: T1 writes x and reads y, T2 writes y and reads x; neither
    may see the other's write (each would then precede the other)."""
    h.begin("T1", "T2")
    h.write("T1", "MATCH (n:K {id: 1}) SET n.v = 11")
    h.write("T2", "MATCH (n:K {id: 2}) SET n.v = 22")
    h.read("T1", "y", "MATCH (n:K {id: 2}) RETURN n.v")
    h.read("T2", "x", "MATCH (n:K {id: 1}) RETURN n.v")
    h.commit("T1")
    h.commit("T2")
    h.final_state(ITEMS_FINAL)


def otv(h):
    """Observed transaction vanishes: T3 reads x from T1; it must then read y from T1 too, not
    from T2 (which also writes y and must not commit over T1)."""
    h.begin("T1", "T2")
    h.write("T1", "MATCH (n:K {id: 1}) SET n.v = 11")
    h.write("T1", "MATCH (n:K {id: 2}) SET n.v = 19")
    h.write("T2", "MATCH (n:K {id: 1}) SET n.v = 12")
    h.commit("T1")
    h.begin("T3")
    h.read("T3", "x", "MATCH (n:K {id: 1}) RETURN n.v")
    h.write("T2", "MATCH (n:K {id: 2}) SET n.v = 18")
    h.read("T3", "y", "MATCH (n:K {id: 2}) RETURN n.v")
    h.commit("T2")
    h.commit("T3")
    h.final_state(ITEMS_FINAL)


def pmp(label_scan):
    """Predicate-many-preceders: T1's predicate reads must not see T2's insert the second time
    (by a label scan on K, or an index seek on L.p)."""

    def scenario(h):
        h.begin("T1", "T2")
        if label_scan:
            h.read("T1", "v = 30", "MATCH (n:K) WHERE n.v = 30 RETURN count(n)")
            h.write("T2", "CREATE (:K {id: 3, v: 30})")
        else:
            h.read("T1", "p = 30", "MATCH (n:L {p: 30}) RETURN count(n)")
            h.write("T2", "CREATE (:L {id: 3, p: 30})")
        h.commit("T2")
        if label_scan:
            h.read("T1", "v % 3 = 0", "MATCH (n:K) WHERE n.v % 3 = 0 RETURN count(n)")
        else:
            h.read("T1", "p = 30 again", "MATCH (n:L {p: 30}) RETURN count(n)")
        h.commit("T1")
        h.final_state(ITEMS_FINAL if label_scan else INDEXED_FINAL)

    return scenario


def pmp_write(label_scan):
    """Predicate-many-preceders with a write: T1 moves every value up by 10; T2 deletes what
    its predicate matched (v = 20, so y) after T1 committed — deleting what T1 wrote."""

    def scenario(h):
        h.begin("T1", "T2")
        if label_scan:
            h.write("T1", "MATCH (n:K) SET n.v = n.v + 10")
            h.read_all("T2", "v = 20", "MATCH (n:K) WHERE n.v = 20 RETURN n.id")
        else:
            h.write("T1", "MATCH (n:L) SET n.p = n.p + 10")
            h.read_all("T2", "p = 20", "MATCH (n:L {p: 20}) RETURN n.id")
        h.commit("T1")
        if label_scan:
            h.write("T2", "MATCH (n:K) WHERE n.v = 20 DETACH DELETE n")
        else:
            h.write("T2", "MATCH (n:L {p: 20}) DETACH DELETE n")
        h.commit("T2")
        h.final_state(ITEMS_FINAL if label_scan else INDEXED_FINAL)

    return scenario


def p4(h):
    """Lost update: both read x and write x + 1; one increment must not be lost."""
    h.begin("T1", "T2")
    h.read("T1", "x", "MATCH (n:K {id: 1}) RETURN n.v")
    h.read("T2", "x", "MATCH (n:K {id: 1}) RETURN n.v")
    h.write("T1", "MATCH (n:K {id: 1}) SET n.v = $v", v=h.reads["T1 x"] + 1)
    h.write("T2", "MATCH (n:K {id: 1}) SET n.v = $v", v=h.reads["T2 x"] + 1)
    h.commit("T1")
    h.commit("T2")
    h.final_state(ITEMS_FINAL)


def g_single(h):
    """Read skew: T2 moves 2 from y to x (x + y stays 30); T1 reads x before and y after T2
    commits and must see the same total."""
    h.begin("T1", "T2")
    h.read("T1", "x", "MATCH (n:K {id: 1}) RETURN n.v")
    h.read("T2", "x", "MATCH (n:K {id: 1}) RETURN n.v")
    h.read("T2", "y", "MATCH (n:K {id: 2}) RETURN n.v")
    h.write("T2", "MATCH (n:K {id: 1}) SET n.v = 12")
    h.write("T2", "MATCH (n:K {id: 2}) SET n.v = 18")
    h.commit("T2")
    h.read("T1", "y", "MATCH (n:K {id: 2}) RETURN n.v")
    h.commit("T1")
    h.final_state(ITEMS_FINAL)


def g_single_write(h):
    """Read skew with a write: after T2 moved 2 from y to x, T1 (on its old snapshot) deletes
    the item whose value is 20 — y, which T2 wrote."""
    h.begin("T1", "T2")
    h.read("T1", "x", "MATCH (n:K {id: 1}) RETURN n.v")
    h.write("T2", "MATCH (n:K {id: 1}) SET n.v = 12")
    h.write("T2", "MATCH (n:K {id: 2}) SET n.v = 18")
    h.commit("T2")
    h.write("T1", "MATCH (n:K) WHERE n.v = 20 DETACH DELETE n")
    h.commit("T1")
    h.final_state(ITEMS_FINAL)


def g2_item(h):
    """Write skew: at least one doctor must stay on call; each transaction checks that two are
    and takes a different one off."""
    h.begin("T1", "T2")
    h.read("T1", "on call", "MATCH (d:Doctor) WHERE d.on_call RETURN count(d)")
    h.read("T2", "on call", "MATCH (d:Doctor) WHERE d.on_call RETURN count(d)")
    h.write("T1", "MATCH (d:Doctor {name: 'alice'}) SET d.on_call = false")
    h.write("T2", "MATCH (d:Doctor {name: 'bob'}) SET d.on_call = false")
    h.commit("T1")
    h.commit("T2")
    h.final_state("MATCH (d:Doctor) WHERE d.on_call WITH count(d) AS c RETURN 'on call', c")


def g2_item_edges_deleted(h):
    """Write skew on adjacency: the shift keeps at least one ON_CALL relationship; each
    transaction counts them (2) and deletes a different one."""
    h.begin("T1", "T2")
    h.read("T1", "on call", ON_CALL_COUNT)
    h.read("T2", "on call", ON_CALL_COUNT)
    h.write("T1", "MATCH (:Shift)-[r:ON_CALL]->(:Doctor {name: 'alice'}) DELETE r")
    h.write("T2", "MATCH (:Shift)-[r:ON_CALL]->(:Doctor {name: 'bob'}) DELETE r")
    h.commit("T1")
    h.commit("T2")
    h.final_state(ON_CALL_FINAL)


def g2_item_edges_created(h):
    """Write skew on adjacency: the shift has at most two ON_CALL relationships; each
    transaction counts them (1 < 2) and creates one to a different doctor."""
    h.begin("T1", "T2")
    h.read("T1", "on call", ON_CALL_COUNT)
    h.read("T2", "on call", ON_CALL_COUNT)
    h.write("T1", "MATCH (s:Shift), (d:Doctor {name: 'carol'}) CREATE (s)-[:ON_CALL]->(d)")
    h.write("T2", "MATCH (s:Shift), (d:Doctor {name: 'dave'}) CREATE (s)-[:ON_CALL]->(d)")
    h.commit("T1")
    h.commit("T2")
    h.final_state(ON_CALL_FINAL)


def g2(label_scan):
    """Anti-dependency cycles through predicates: each transaction counts the nodes matching a
    predicate (none) and inserts one that the other's predicate matches."""

    def scenario(h):
        h.begin("T1", "T2")
        if label_scan:
            query = "MATCH (n:K) WHERE n.v % 3 = 0 RETURN count(n)"
            h.read("T1", "v % 3 = 0", query)
            h.read("T2", "v % 3 = 0", query)
            h.write("T1", "CREATE (:K {id: 3, v: 30})")
            h.write("T2", "CREATE (:K {id: 4, v: 42})")
        else:
            query = "MATCH (n:L {p: 30}) RETURN count(n)"
            h.read("T1", "p = 30", query)
            h.read("T2", "p = 30", query)
            h.write("T1", "CREATE (:L {id: 3, p: 30})")
            h.write("T2", "CREATE (:L {id: 4, p: 30})")
        h.commit("T1")
        h.commit("T2")
        h.final_state(ITEMS_FINAL if label_scan else INDEXED_FINAL)

    return scenario


# anomaly -> (scenario, setup statement)
SCENARIOS = {
    "G0": (g0, ITEMS),
    "G1a": (g1a, ITEMS),
    "G1b": (g1b, ITEMS),
    "G1c": (g1c, ITEMS),
    "OTV": (otv, ITEMS),
    "PMP (label scan)": (pmp(label_scan=True), ITEMS),
    "PMP (index seek)": (pmp(label_scan=False), INDEXED),
    "PMP-write (label scan)": (pmp_write(label_scan=True), ITEMS),
    "PMP-write (index seek)": (pmp_write(label_scan=False), INDEXED),
    "P4": (p4, ITEMS),
    "G-single": (g_single, ITEMS),
    "G-single-write": (g_single_write, ITEMS),
    "G2-item": (g2_item, DOCTORS),
    "G2-item (relationships deleted)": (g2_item_edges_deleted, SHIFT_TWO_ON_CALL),
    "G2-item (relationships created)": (g2_item_edges_created, SHIFT),
    "G2 (label scan)": (g2(label_scan=True), ITEMS),
    "G2 (index seek)": (g2(label_scan=False), INDEXED),
}


@dataclass
class Expected:
    shows: bool  # does the anomaly happen at this level (what docs/isolation.md tabulates)
    observation: Observation


def same_at_both(shows, observation):
    return {level: Expected(shows, observation) for level in LEVELS}


def outcome(t1, t2, t3=None):
    return {"T1": t1, "T2": t2} | ({"T3": t3} if t3 else {})


# ---------------------------------------------------------------------------------------------
def write_skew_allowed_by_snapshot(reads, final_snapshot, final_serializable):
    """A write skew (G2-item, G2): both commit under SNAPSHOT (the anomaly is in the result);
    under SERIALIZABLE the second committer aborts. The reads are the same at both levels."""
    return {
        "snapshot": Expected(True, Observation(outcome(COMMITTED, COMMITTED), reads, final_snapshot)),
        "serializable": Expected(
            False, Observation(outcome(COMMITTED, ABORTED), reads, final_serializable)
        ),
    }


# THE TABLE: what happens, per anomaly and level. Under SNAPSHOT the write skews (G2-item, G2)
# commit both transactions; everything else is prevented at both levels. Under SERIALIZABLE the
# second committer of every rw-cycle aborts at commit (backward validation of its reads).
EXPECTED = {
    "G0": same_at_both(
        False, Observation(outcome(COMMITTED, ABORTED), {}, {1: 11, 2: 21})
    ),
    "G1a": same_at_both(
        False,
        Observation(outcome(ROLLED_BACK, COMMITTED), {"T2 x": 10, "T2 x again": 10}, {1: 10, 2: 20}),
    ),
    "G1b": same_at_both(
        False,
        Observation(outcome(COMMITTED, COMMITTED), {"T2 x": 10, "T2 x again": 10}, {1: 11, 2: 20}),
    ),
    "G1c": {
        "snapshot": Expected(
            False,
            Observation(outcome(COMMITTED, COMMITTED), {"T1 y": 20, "T2 x": 10}, {1: 11, 2: 22}),
        ),
        "serializable": Expected(
            False,
            Observation(outcome(COMMITTED, ABORTED), {"T1 y": 20, "T2 x": 10}, {1: 11, 2: 20}),
        ),
    },
    "OTV": same_at_both(
        False,
        Observation(outcome(COMMITTED, ABORTED, COMMITTED), {"T3 x": 11, "T3 y": 19}, {1: 11, 2: 19}),
    ),
    "PMP (label scan)": same_at_both(
        False,
        Observation(
            outcome(COMMITTED, COMMITTED), {"T1 v = 30": 0, "T1 v % 3 = 0": 0}, {1: 10, 2: 20, 3: 30}
        ),
    ),
    "PMP (index seek)": same_at_both(
        False,
        Observation(
            outcome(COMMITTED, COMMITTED), {"T1 p = 30": 0, "T1 p = 30 again": 0}, {1: 10, 2: 20, 3: 30}
        ),
    ),
    "PMP-write (label scan)": same_at_both(
        False, Observation(outcome(COMMITTED, ABORTED), {"T2 v = 20": [2]}, {1: 20, 2: 30})
    ),
    "PMP-write (index seek)": same_at_both(
        False, Observation(outcome(COMMITTED, ABORTED), {"T2 p = 20": [2]}, {1: 20, 2: 30})
    ),
    "P4": same_at_both(
        False, Observation(outcome(COMMITTED, ABORTED), {"T1 x": 10, "T2 x": 10}, {1: 11, 2: 20})
    ),
    "G-single": same_at_both(
        False,
        Observation(
            outcome(COMMITTED, COMMITTED),
            {"T1 x": 10, "T1 y": 20, "T2 x": 10, "T2 y": 20},
            {1: 12, 2: 18},
        ),
    ),
    "G-single-write": same_at_both(
        False, Observation(outcome(ABORTED, COMMITTED), {"T1 x": 10}, {1: 12, 2: 18})
    ),
    "G2-item": write_skew_allowed_by_snapshot(
        {"T1 on call": 2, "T2 on call": 2}, {"on call": 0}, {"on call": 1}
    ),
    "G2-item (relationships deleted)": write_skew_allowed_by_snapshot(
        {"T1 on call": 2, "T2 on call": 2}, {"on call": 0}, {"on call": 1}
    ),
    "G2-item (relationships created)": write_skew_allowed_by_snapshot(
        {"T1 on call": 1, "T2 on call": 1}, {"on call": 3}, {"on call": 2}
    ),
    "G2 (label scan)": write_skew_allowed_by_snapshot(
        {"T1 v % 3 = 0": 0, "T2 v % 3 = 0": 0},
        {1: 10, 2: 20, 3: 30, 4: 42},
        {1: 10, 2: 20, 3: 30},
    ),
    "G2 (index seek)": write_skew_allowed_by_snapshot(
        {"T1 p = 30": 0, "T2 p = 30": 0},
        {1: 10, 2: 20, 3: 30, 4: 30},
        {1: 10, 2: 20, 3: 30},
    ),
}


@pytest.fixture(scope="module")
def indexed_driver(driver):
    """The module's driver, with the index on L.p the index-seek scenarios use."""
    with driver.session() as session:
        session.run("CREATE INDEX FOR (n:L) ON (n.p)").consume()
    return driver


def wipe(driver):
    driver.execute_query("MATCH (n) DETACH DELETE n")


def run_scenario(driver, level, anomaly):
    scenario, setup = SCENARIOS[anomaly]
    wipe(driver)
    driver.execute_query(setup)
    h = Interleaving(driver, level)
    try:
        scenario(h)
    finally:
        h.close()
    return h.observation()


def test_every_scenario_has_expectations():
    assert set(EXPECTED) == set(SCENARIOS)
    assert all(set(per_level) == set(LEVELS) for per_level in EXPECTED.values())


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("anomaly", list(SCENARIOS))
def test_anomaly(indexed_driver, anomaly, level):
    got = run_scenario(indexed_driver, level, anomaly)
    want = EXPECTED[anomaly][level].observation
    assert got.outcome == want.outcome, f"{anomaly} at {level}: transactions ended {got.outcome}"
    assert got.reads == want.reads, f"{anomaly} at {level}: reads saw {got.reads}"
    assert got.final == want.final, f"{anomaly} at {level}: final state {got.final}"


def test_docs_table_matches():
    """docs/isolation.md's anomaly table says 'possible' / 'prevented' exactly as EXPECTED."""
    text = (ROOT / "docs" / "isolation.md").read_text()
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].strip("`") in EXPECTED:
            rows[cells[0].strip("`")] = (cells[1], cells[2])
    want = {
        anomaly: tuple("possible" if per_level[level].shows else "prevented" for level in LEVELS)
        for anomaly, per_level in EXPECTED.items()
    }
    assert rows == want, "docs/isolation.md's anomaly table differs from EXPECTED"


# ---------------------------------------------------------------------------------------------
# Managed transactions, session settings and metadata errors.


def execute_write_with_interference(driver, level, interference, write):
    """Runs a managed transaction that reads x (K 1) and writes `write` with v = x + 1; on its
    first attempt another session commits `interference` between the read and the write.
    Returns the x each attempt saw."""
    wipe(driver)
    driver.execute_query(ITEMS)
    seen = []

    @neo4j.unit_of_work(metadata={"isolation": level})
    def work(tx):
        x = tx.run("MATCH (n:K {id: 1}) RETURN n.v AS v").single()["v"]
        seen.append(x)
        if len(seen) == 1:
            driver.execute_query(interference)
        tx.run(write, v=x + 1).consume()

    with driver.session() as session:
        session.execute_write(work)
    return seen


@pytest.mark.parametrize("level", LEVELS)
def test_execute_write_retries_after_serialization_failure(indexed_driver, level):
    """The work function reads x and writes y = x + 1. On its first attempt another session
    changes x between the read and the write: under SERIALIZABLE the commit fails validation
    (TransientError) and the driver runs the function again, which then sees the new x; under
    SNAPSHOT that is no conflict and the first attempt commits."""
    driver = indexed_driver
    seen = execute_write_with_interference(
        driver, level, "MATCH (n:K {id: 1}) SET n.v = 100", "MATCH (n:K {id: 2}) SET n.v = $v"
    )
    final = {r[0]: r[1] for r in driver.execute_query(ITEMS_FINAL).records}
    if level == "serializable":
        assert seen == [10, 100], "the first attempt aborts at commit and the retry sees x = 100"
        assert final == {1: 100, 2: 101}
    else:
        assert seen == [10], "snapshot isolation does not validate reads: one attempt"
        assert final == {1: 100, 2: 11}


@pytest.mark.parametrize("level", LEVELS)
def test_execute_write_retries_after_write_conflict(indexed_driver, level):
    """A lost update forced on the first attempt: both levels abort it and the retry commits."""
    driver = indexed_driver
    seen = execute_write_with_interference(
        driver, level, "MATCH (n:K {id: 1}) SET n.v = n.v + 100", "MATCH (n:K {id: 1}) SET n.v = $v"
    )
    assert seen == [10, 110]
    assert driver.execute_query("MATCH (n:K {id: 1}) RETURN n.v AS v").records[0]["v"] == 111


def write_skew(s1, s2, begin1, begin2):
    """Runs the doctors' write skew on two sessions; returns how each transaction ended."""
    tx1, tx2 = begin1(s1), begin2(s2)
    ended = {}
    try:
        for tx in (tx1, tx2):
            assert tx.run("MATCH (d:Doctor) WHERE d.on_call RETURN count(d) AS c").single()["c"] == 2
        tx1.run("MATCH (d:Doctor {name: 'alice'}) SET d.on_call = false").consume()
        tx2.run("MATCH (d:Doctor {name: 'bob'}) SET d.on_call = false").consume()
        for name, tx in (("T1", tx1), ("T2", tx2)):
            try:
                tx.commit()
                ended[name] = COMMITTED
            except TransientError:
                ended[name] = ABORTED
    finally:
        tx1.close()
        tx2.close()
    return ended


def show_level(session):
    return session.run("SHOW TRANSACTION ISOLATION LEVEL").single()["isolation_level"]


def single_connection_driver(uri):
    """A driver whose sessions all use one Bolt connection. Session settings (SET SESSION ...)
    belong to the Bolt connection, and a driver's pool may hand a session any idle one."""
    return neo4j.GraphDatabase.driver(uri, auth=(USER, PASSWORD), max_connection_pool_size=1)


def test_set_session_isolation_level(server, indexed_driver):
    with single_connection_driver(server.uri) as d1, single_connection_driver(server.uri) as d2:
        with d1.session() as s1, d2.session() as s2:
            assert show_level(s1) == "snapshot", "the server's default level"
            for session in (s1, s2):
                session.run("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE").consume()
            assert show_level(s1) == "serializable"
            assert show_level(s2) == "serializable"

            wipe(indexed_driver)
            indexed_driver.execute_query(DOCTORS)
            begin = lambda s: s.begin_transaction()  # noqa: E731 - no metadata: the session's level
            assert write_skew(s1, s2, begin, begin) == {"T1": COMMITTED, "T2": ABORTED}

            # metadata overrides the session's level for one transaction
            wipe(indexed_driver)
            indexed_driver.execute_query(DOCTORS)
            snap = lambda s: s.begin_transaction(metadata={"isolation": "snapshot"})  # noqa: E731
            assert write_skew(s1, s2, snap, snap) == {"T1": COMMITTED, "T2": COMMITTED}

            for session in (s1, s2):
                session.run("SET SESSION TRANSACTION ISOLATION LEVEL SNAPSHOT").consume()
            assert show_level(s1) == "snapshot"
            wipe(indexed_driver)
            indexed_driver.execute_query(DOCTORS)
            assert write_skew(s1, s2, begin, begin) == {"T1": COMMITTED, "T2": COMMITTED}


def test_set_next_transaction_isolation_level(server, indexed_driver):
    with single_connection_driver(server.uri) as d1, single_connection_driver(server.uri) as d2:
        with d1.session() as s1, d2.session() as s2:
            begin = lambda s: s.begin_transaction()  # noqa: E731
            for _ in range(2):  # the next transaction only: the second round is back to SNAPSHOT
                wipe(indexed_driver)
                indexed_driver.execute_query(DOCTORS)
                for session in (s1, s2):
                    session.run("SET NEXT TRANSACTION ISOLATION LEVEL SERIALIZABLE").consume()
                assert write_skew(s1, s2, begin, begin) == {"T1": COMMITTED, "T2": ABORTED}
                wipe(indexed_driver)
                indexed_driver.execute_query(DOCTORS)
                assert write_skew(s1, s2, begin, begin) == {"T1": COMMITTED, "T2": COMMITTED}
            assert show_level(s1) == "snapshot"


def test_unknown_isolation_in_metadata_is_a_client_error(indexed_driver):
    with indexed_driver.session() as session:
        with pytest.raises(ClientError) as info:
            with session.begin_transaction(metadata={"isolation": "chaos"}) as tx:
                tx.run("RETURN 1").consume()
        assert "chaos" in info.value.message
        with pytest.raises(ClientError):
            session.run(neo4j.Query("RETURN 1", metadata={"isolation": "read committed"})).consume()
        # known levels are accepted in auto-commit too, and the session recovers
        for level in LEVELS:
            query = neo4j.Query("RETURN 1 AS x", metadata={"isolation": level})
            assert session.run(query).single()["x"] == 1


def test_unknown_isolation_statement_is_an_error(indexed_driver):
    with indexed_driver.session() as session:
        with pytest.raises(ClientError):
            session.run("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED").consume()
        assert show_level(session) == "snapshot"


def test_default_isolation_flag(tmp_path):
    srv = Server(tmp_path / "db", "--no-auth", "--default-isolation", "serializable")
    try:
        with neo4j.GraphDatabase.driver(srv.uri, auth=None) as drv:
            with drv.session() as s1, drv.session() as s2:
                assert show_level(s1) == "serializable"
                drv.execute_query(DOCTORS)
                begin = lambda s: s.begin_transaction()  # noqa: E731
                assert write_skew(s1, s2, begin, begin) == {"T1": COMMITTED, "T2": ABORTED}
                wipe(drv)
                drv.execute_query(DOCTORS)
                snap = lambda s: s.begin_transaction(metadata={"isolation": "snapshot"})  # noqa: E731
                assert write_skew(s1, s2, snap, snap) == {"T1": COMMITTED, "T2": COMMITTED}
    finally:
        assert srv.stop() == 0


def test_session_level_lasts_until_reset(server):
    """The level set by SET SESSION belongs to the Bolt connection until RESET: the driver
    resets a connection after a failure, which brings the default back."""
    with single_connection_driver(server.uri) as drv:
        with drv.session() as session:
            session.run("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE").consume()
            with drv.session() as other:  # another session on the same (only) connection
                assert show_level(other) == "serializable"
            with pytest.raises(ClientError):
                session.run("RETURN $missing").consume()
            assert show_level(session) == "snapshot"
