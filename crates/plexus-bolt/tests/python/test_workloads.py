"""Jepsen-style workloads through the Neo4j driver, at each isolation level.

Several threads, each with its own driver session, run managed transactions
(`session.execute_write`, which retries TransientError) begun with
`metadata={"isolation": level}` against one `plexus serve` on loopback. Each run lasts at most
RUN_S seconds and at most MAX_TXNS_PER_THREAD transactions per thread; nothing asserts on time.

BANK
====
ACCOUNTS accounts hold `balance` properties; writers transfer money, readers sum all balances in
read transactions. Every read must see the same total. Two funds checks:
  - "one account": a transfer needs the source account to cover it. No balance may go negative,
    at either level (both writers of an account write it: first committer wins).
  - "pair": accounts form pairs (a customer's two accounts); a transfer may take the money from
    either account of a pair when the pair's sum covers it. Two transfers that each take from a
    different account of the same pair write disjoint items: snapshot isolation lets both commit
    (write skew) and the pair's sum may go negative; SERIALIZABLE must keep it >= 0. Whether the
    skew actually happens in a run is luck, so only the SERIALIZABLE side is asserted.

LIST APPEND
===========
Keys hold lists; transactions are 2-4 random micro-ops (append a unique value / read a list)
over KEYS keys of two kinds:
  - property lists `(:LK {k, vals})`: append is `SET n.vals = n.vals + $v`;
  - relationship lists `(:EK {k, len})`: append creates `(n)-[:E {v, pos}]->(:V {v})` with
    pos = the incremented `n.len`, and moves the key's single `:LAST` relationship to the new
    `:V` (deleting the old one); a read collects the E relationships ordered by pos, which is
    the append order because appenders of a key all write `n.len` (first committer wins) and
    each sees the previous appends. A read also returns the `:LAST` target, which must be the
    list's last value (checks that relationship deletion and creation commit together).
Every attempt is recorded: the one execute_write returns after committed, the earlier ones
(retried after a TransientError) aborted. histories.check finds the dependency cycles: none
under SERIALIZABLE; under SNAPSHOT nothing but G2.
"""

import itertools
import logging
import random
import threading
import time

import neo4j
import pytest

from conftest import PASSWORD, USER
from histories import check, kinds

LEVELS = ("snapshot", "serializable")
RUN_S = 2.0
MAX_TXNS_PER_THREAD = 2000
WRITERS = 4
READERS = 2
# How long the driver keeps retrying one managed transaction, and its first back-off (the
# driver's default, 1 s, would idle the workers for much of a run), in seconds.
MAX_RETRY_TIME_S = 10
INITIAL_RETRY_DELAY_S = 0.005


@pytest.fixture(scope="module")
def wl_driver(server):
    with neo4j.GraphDatabase.driver(
        server.uri,
        auth=(USER, PASSWORD),
        max_transaction_retry_time=MAX_RETRY_TIME_S,
        initial_retry_delay=INITIAL_RETRY_DELAY_S,
    ) as drv:
        yield drv


@pytest.fixture(autouse=True)
def quiet_retries(caplog):
    """The driver logs a warning per retried transaction; a failure's report needs none."""
    caplog.set_level(logging.ERROR, logger="neo4j")


def run_threads(targets):
    """Runs the callables in threads until each returns; returns the exceptions they raised."""
    errors = []

    def guarded(target):
        try:
            target()
        except Exception as e:  # noqa: BLE001 - reported by the caller
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(t,)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def bounded_loop():
    """The iterations of one worker: at most MAX_TXNS_PER_THREAD, stopping after RUN_S."""
    deadline = time.monotonic() + RUN_S
    for i in range(MAX_TXNS_PER_THREAD):
        if time.monotonic() > deadline:
            return
        yield i


# ---------------------------------------------------------------------------------------------
# Bank

ACCOUNTS = 8
INITIAL_BALANCE = 30
TOTAL = ACCOUNTS * INITIAL_BALANCE
BALANCES = "MATCH (a:Account) RETURN a.id AS id, a.balance AS balance"


def pair_of(account):
    return account // 2


@pytest.mark.parametrize("funds_check", ["one account", "pair"])
@pytest.mark.parametrize("level", LEVELS)
def test_bank(wl_driver, level, funds_check):
    driver = wl_driver
    driver.execute_query("MATCH (n) DETACH DELETE n")
    driver.execute_query(
        "UNWIND range(0, $n - 1) AS i CREATE (:Account {id: i, balance: $b})", n=ACCOUNTS, b=INITIAL_BALANCE
    )
    lock = threading.Lock()
    stats = {"attempts": 0, "transfers": 0, "refused": 0, "reads": 0}
    violations = []  # what a read or the end state saw that it must not have
    negative_pairs = []  # pair sums below zero seen (allowed under snapshot isolation)

    def observe(balances, where):
        if len(balances) != ACCOUNTS or sum(balances.values()) != TOTAL:
            violations.append(f"{where}: total {sum(balances.values())} != {TOTAL}: {balances}")
        if funds_check == "one account" and min(balances.values()) < 0:
            violations.append(f"{where}: a negative balance: {balances}")
        pairs = {}
        for account, balance in balances.items():
            pairs[pair_of(account)] = pairs.get(pair_of(account), 0) + balance
        if funds_check == "pair" and min(pairs.values()) < 0:
            negative_pairs.append(pairs)
            if level == "serializable":
                violations.append(f"{where}: a pair's sum went negative: {pairs}")

    @neo4j.unit_of_work(metadata={"isolation": level})
    def transfer(tx, source, target, amount):
        with lock:
            stats["attempts"] += 1
        if funds_check == "one account":
            record = tx.run("MATCH (a:Account {id: $id}) RETURN a.balance AS b", id=source).single()
            covered = record["b"] >= amount
        else:
            mate = source ^ 1
            covered = (
                tx.run(
                    "MATCH (a:Account) WHERE a.id IN [$x, $y] RETURN sum(a.balance) AS s", x=source, y=mate
                ).single()["s"]
                >= amount
            )
        if not covered:
            return False
        tx.run("MATCH (a:Account {id: $id}) SET a.balance = a.balance - $amount", id=source, amount=amount).consume()
        tx.run("MATCH (a:Account {id: $id}) SET a.balance = a.balance + $amount", id=target, amount=amount).consume()
        return True

    @neo4j.unit_of_work(metadata={"isolation": level})
    def read_balances(tx):
        return {r["id"]: r["balance"] for r in tx.run(BALANCES)}

    def writer(seed):
        rng = random.Random(seed)
        with driver.session() as session:
            for _ in bounded_loop():
                source = rng.randrange(ACCOUNTS)
                target = rng.choice([a for a in range(ACCOUNTS) if pair_of(a) != pair_of(source)])
                done = session.execute_write(transfer, source, target, rng.randint(5, 40))
                with lock:
                    stats["transfers" if done else "refused"] += 1

    def reader():
        with driver.session() as session:
            for _ in bounded_loop():
                observe(session.execute_read(read_balances), "a read")
                with lock:
                    stats["reads"] += 1

    errors = run_threads([lambda s=s: writer(s) for s in range(WRITERS)] + [reader] * READERS)
    assert errors == [], f"workers failed: {errors!r}"
    with driver.session() as session:
        observe(session.execute_read(read_balances), "the end state")
    assert violations == [], f"{len(violations)} violations ({stats}), first: {violations[:3]}"
    assert stats["transfers"] > 0 and stats["reads"] > 0, f"the workload did nothing: {stats}"
    if level == "serializable":
        assert negative_pairs == []


# ---------------------------------------------------------------------------------------------
# List append

PROPERTY_KEYS = ["p0", "p1", "p2"]
EDGE_KEYS = ["e0", "e1", "e2"]
KEYS = PROPERTY_KEYS + EDGE_KEYS

APPEND_PROPERTY = "MATCH (n:LK {k: $k}) SET n.vals = n.vals + $v"
READ_PROPERTY = "MATCH (n:LK {k: $k}) RETURN n.vals AS vals, last(n.vals) AS last"
APPEND_EDGE = """
MATCH (n:EK {k: $k})
OPTIONAL MATCH (n)-[old:LAST]->()
DELETE old
SET n.len = n.len + 1
CREATE (n)-[:E {v: $v, pos: n.len}]->(x:V {v: $v}), (n)-[:LAST]->(x)
"""
READ_EDGE = """
MATCH (n:EK {k: $k})
OPTIONAL MATCH (n)-[e:E]->()
WITH n, e ORDER BY e.pos
WITH n, collect(e.v) AS vals
OPTIONAL MATCH (n)-[:LAST]->(last:V)
RETURN vals, last.v AS last
"""


def read_list(tx, key, mismatches):
    record = tx.run(READ_PROPERTY if key in PROPERTY_KEYS else READ_EDGE, k=key).single()
    values = list(record["vals"])
    if record["last"] != (values[-1] if values else None):
        mismatches.append(f"{key}: list {values}, last {record['last']}")
    return values


@pytest.mark.parametrize("level", LEVELS)
def test_list_append(wl_driver, level):
    driver = wl_driver
    driver.execute_query("MATCH (n) DETACH DELETE n")
    driver.execute_query("UNWIND $keys AS k CREATE (:LK {k: k, vals: []})", keys=PROPERTY_KEYS)
    driver.execute_query("UNWIND $keys AS k CREATE (:EK {k: k, len: 0})", keys=EDGE_KEYS)
    lock = threading.Lock()
    values = itertools.count(1)  # unique across keys, threads and attempts
    committed, aborted, mismatches = [], [], []

    @neo4j.unit_of_work(metadata={"isolation": level})
    def attempt(tx, rng, attempts):
        ops = []
        attempts.append(ops)
        for _ in range(rng.randint(2, 4)):
            key = rng.choice(KEYS)
            if rng.random() < 0.5:
                with lock:
                    v = next(values)
                ops.append(("append", key, v))  # before running: an abort may follow at once
                tx.run(APPEND_PROPERTY if key in PROPERTY_KEYS else APPEND_EDGE, k=key, v=v).consume()
            else:
                ops.append(("r", key, read_list(tx, key, mismatches)))

    def worker(seed):
        rng = random.Random(seed)
        with driver.session() as session:
            for _ in bounded_loop():
                attempts = []
                session.execute_write(attempt, rng, attempts)
                with lock:
                    committed.append(attempts[-1])
                    aborted.extend(attempts[:-1])

    errors = run_threads([lambda s=s: worker(s) for s in range(WRITERS)])
    assert errors == [], f"workers failed: {errors!r}"

    @neo4j.unit_of_work(metadata={"isolation": level})
    def final_read(tx):
        return [("r", key, read_list(tx, key, mismatches)) for key in KEYS]

    with driver.session() as session:
        committed.append(session.execute_read(final_read))
    assert any(values for _, _, values in committed[-1]), "nothing was appended"
    assert mismatches == [], f"a :LAST relationship disagrees with its list: {mismatches[:3]}"

    found = check(committed, aborted)
    summary = f"{len(committed)} committed, {len(aborted)} aborted; first anomalies: " + "; ".join(
        str(a) for a in found[:3]
    )
    if level == "serializable":
        assert found == [], summary
    else:
        assert kinds(found) <= {"G2"}, summary
