"""Variation of authored lines: cycle, shuffle, once; never the same line twice in a row."""
from chalicelib.scenario.variation import WINDOW, pick, remember


def play(count, mode, turns, seed="k"):
    history, said = (), []
    for turn in range(turns):
        index = pick(count, mode, history, f"{seed}/{turn}")
        said.append(index)
        if index is not None:
            history = remember(history, index, count)
    return said


def test_cycle_goes_round_in_order():
    assert play(3, "cycle", 7) == [0, 1, 2, 0, 1, 2, 0]


def test_once_says_each_line_once_then_nothing():
    assert play(3, "once", 5) == [0, 1, 2, None, None]


def test_shuffle_never_repeats_within_the_window_and_is_deterministic():
    said = play(6, "shuffle", 200)
    assert said == play(6, "shuffle", 200)                  # the same game says the same lines
    assert all(said[i] not in said[max(0, i - WINDOW):i] for i in range(len(said)))
    assert set(said) == set(range(6))
    assert said != play(6, "shuffle", 200, seed="other")


def test_two_lines_alternate_in_every_mode():
    for mode in ("cycle", "shuffle"):
        said = play(2, mode, 10)
        assert all(a != b for a, b in zip(said, said[1:]))


def test_a_single_line_is_never_said_twice_in_a_row():
    assert play(1, "cycle", 4) == [0, None, 0, None] or play(1, "cycle", 4)[1] is None
    assert pick(1, "shuffle", (0,), "s") is None
    assert pick(0, "cycle", (), "s") is None


def test_history_is_bounded():
    history = ()
    for i in range(100):
        history = remember(history, i % 5, 5)
    assert len(history) == 5
