"""Threads run statements concurrently (the GIL is released while the engine works)."""

import threading

import plexusdb

THREADS = 4
STATEMENTS_PER_THREAD = 50


def test_threads_with_their_own_connections(db):
    errors = []

    def work(worker):
        try:
            with db.connect() as conn:
                for i in range(STATEMENTS_PER_THREAD):
                    conn.execute("CREATE (:W {worker: $w, i: $i})", {"w": worker, "i": i})
                    conn.execute("MATCH (n:W) RETURN count(n)")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with db.connect() as conn:
        rows = conn.execute("MATCH (n:W) RETURN n.worker, count(*) ORDER BY n.worker")
        assert list(rows) == [(w, STATEMENTS_PER_THREAD) for w in range(THREADS)]


def test_threads_sharing_one_connection(db, conn):
    def work():
        for _ in range(STATEMENTS_PER_THREAD):
            conn.execute("CREATE (:S)")

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert conn.execute("MATCH (n:S) RETURN count(n)")[0] == (THREADS * STATEMENTS_PER_THREAD,)


def test_gil_is_released_while_a_query_runs(db, conn):
    """A Python thread keeps running while another thread waits in a long query."""
    conn.execute("UNWIND range(1, 100) AS i CREATE (:G {i: i})")
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    try:
        # `<`, not `=`: an equality would become a hash join and finish too fast to tell.
        conn.execute("MATCH (a:G), (b:G), (c:G) WHERE a.i + b.i < c.i RETURN count(*)")
    finally:
        done.set()
        t.join()
    assert len(ticks) > 10  # with the GIL held the ticker could not run during the query
    assert isinstance(db, plexusdb.Database)
