"""The list-append history checker (histories.py) on hand-written histories: every kind of
anomaly it claims to find is found, with a well-formed witness cycle, and histories without
the anomaly pass. Pure Python: no server."""

import pytest

from histories import Anomaly, check, kinds


def A(k, v):  # noqa: N802 - reads like the notation of the papers
    return ("append", k, v)


def R(k, *values):  # noqa: N802
    return ("r", k, list(values))


def assert_cycle_well_formed(anomaly):
    """The witness is a closed chain whose edge kinds match the anomaly's class."""
    cycle = anomaly.cycle
    assert cycle, f"{anomaly} has no witness cycle"
    for (_, _, to), (frm, _, _) in zip(cycle, cycle[1:] + cycle[:1]):
        assert to == frm, f"{anomaly}: the witness is not a closed chain"
    edge_kinds = [kind for _, kind, _ in cycle]
    rw = edge_kinds.count("rw")
    expected = {
        "G0": set(edge_kinds) == {"ww"},
        "G1c": rw == 0 and "wr" in edge_kinds,
        "G-single": rw == 1,
        "G2": rw >= 2,
    }[anomaly.kind]
    assert expected, f"{anomaly}: edge kinds {edge_kinds} do not make a {anomaly.kind}"


def cycles(anomalies):
    found = [a for a in anomalies if a.cycle]
    for a in found:
        assert_cycle_well_formed(a)
    return found


def test_serial_history_has_no_anomaly():
    history = [
        [A("x", 1), A("y", 1)],
        [R("x", 1), A("x", 2), R("x", 1, 2)],
        [R("x", 1, 2), R("y", 1), A("y", 2)],
        [R("x", 1, 2), R("y", 1, 2)],
    ]
    assert check(history) == []


def test_empty_and_unread_keys():
    assert check([]) == []
    # appends nobody read, and empty reads before them: serial, no anomaly
    assert check([[R("x")], [A("x", 1)], [A("x", 2)]]) == []


def test_g0_write_cycle():
    # x's versions say T0 before T1, y's say T1 before T0
    history = [
        [A("x", 1), A("y", 2)],
        [A("x", 2), A("y", 1)],
        [R("x", 1, 2), R("y", 1, 2)],
    ]
    found = check(history)
    assert kinds(found) == {"G0"}, found
    assert {step[0] for step in cycles(found)[0].cycle} == {"T0", "T1"}


def test_g1c_circular_information_flow():
    history = [
        [A("x", 1), R("y", 1)],
        [A("y", 1), R("x", 1)],
    ]
    found = check(history)
    assert kinds(found) == {"G1c"}, found
    cycles(found)


def test_g_single_read_skew():
    # T0 reads x before T1's transfer and y after it
    history = [
        [R("x"), R("y", 1)],
        [A("x", 1), A("y", 1)],
        [R("x", 1), R("y", 1)],
    ]
    found = check(history)
    assert kinds(found) == {"G-single"}, found
    cycles(found)


def test_lost_update_is_g_single():
    history = [
        [R("x"), A("x", 1)],
        [R("x"), A("x", 2)],
        [R("x", 1, 2)],
    ]
    found = check(history)
    assert kinds(found) == {"G-single"}, found
    cycles(found)


def test_g2_write_skew():
    history = [
        [R("x"), R("y"), A("x", 1)],
        [R("x"), R("y"), A("y", 1)],
    ]
    found = check(history)
    assert kinds(found) == {"G2"}, found
    assert [a for _, a, _ in cycles(found)[0].cycle].count("rw") == 2


def test_g2_three_transactions():
    # each reads the next one's key before it is written, then writes its own
    history = [
        [R("y"), A("x", 1)],
        [R("z"), A("y", 1)],
        [R("x"), A("z", 1)],
        [R("x", 1), R("y", 1), R("z", 1)],
    ]
    found = check(history)
    assert kinds(found) == {"G2"}, found
    assert len(cycles(found)[0].cycle) == 3


def test_snapshot_isolation_history_shows_only_g2():
    """What snapshot isolation allows: transactions read their start snapshot, writers of a
    common key never both commit; only the write skew between T1 and T2 makes a cycle."""
    history = [
        [A("x", 1), A("y", 1), A("z", 1)],
        [R("x", 1), R("y", 1), A("x", 2)],
        [R("x", 1), R("y", 1), A("y", 2)],
        [R("z", 1), A("z", 2), R("z", 1, 2)],
        [R("x", 1, 2), R("y", 1, 2), R("z", 1, 2)],
    ]
    found = check(history)
    assert kinds(found) == {"G2"}, found
    assert {s[0] for s in cycles(found)[0].cycle} == {"T1", "T2"}


def test_component_with_g_single_and_g2_reports_g_single():
    # T0/T1 write skew (G2) and T1/T2 read skew (G-single) in one component
    history = [
        [R("x"), R("y"), A("x", 1)],
        [R("x"), R("y"), A("y", 1), R("w", 1)],
        [A("w", 1), A("x", 2)],
        [R("x", 1, 2), R("y", 1), R("w", 1)],
    ]
    found = check(history)
    assert "G-single" in kinds(found), found
    assert "G2" not in kinds(found), "G2 is reported only where no G-single exists"
    cycles(found)


def test_g1a_aborted_read():
    found = check([[R("x", 1)]], aborted=[[A("x", 1)]])
    assert kinds(found) == {"G1a"}, found
    assert "A0" in found[0].detail


def test_g1b_intermediate_read():
    history = [
        [A("x", 1), A("x", 2)],
        [R("x", 1)],
        [R("x", 1, 2)],
    ]
    found = check(history)
    assert "G1b" in kinds(found), found
    # reading one's own intermediate state is not G1b
    assert check([[A("x", 1), R("x", 1), A("x", 2)], [R("x", 1, 2)]]) == []


@pytest.mark.parametrize(
    "history, kind",
    [
        ([[A("x", 1)], [A("x", 2)], [R("x", 1, 2)], [R("x", 2)]], "incompatible-order"),
        ([[R("x", 7)]], "garbage"),
        ([[A("x", 1)], [R("x", 1, 1)]], "duplicate"),
        ([[A("x", 1), R("x")]], "internal"),
    ],
)
def test_malformed_reads(history, kind):
    found = check(history)
    assert kind in kinds(found), found


def test_unknown_micro_op_is_an_error():
    with pytest.raises(ValueError):
        check([[("cas", "x", 1, 2)]])


def test_anomaly_prints_its_cycle():
    text = str(Anomaly("G2", "x", (("T0", "rw", "T1"), ("T1", "rw", "T0"))))
    assert text == "G2: x [T0 -rw-> T1 T1 -rw-> T0]"
