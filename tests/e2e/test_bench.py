"""The benchmarks run (figures themselves are recorded in docs/performance.md, not asserted)."""
import json
import subprocess
import sys

from tests.conftest import ROOT


def test_bench_stage_reports_every_operation_and_its_dynamodb_requests():
    out = subprocess.run([sys.executable, "-m", "butai_tools.cli", "bench", "stage", "--ops", "5", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout)["results"]
    assert results["speak"]["calls"] == {"TransactWriteItems": 1}
    assert results["poll unchanged (304)"]["calls"] == {"GetItem": 1}
    assert results["reply"]["calls"] == {"TransactWriteItems": 1}
    # the acknowledgement of the last batch rides in the claim's transaction
    assert results["fetch_replies (1 unread, ack 1)"]["calls"] == {"Query": 1, "TransactWriteItems": 1}
    assert results["fetch_replies (none)"]["calls"] == {"Query": 1, "GetItem": 1}
    assert all(r["p50_ms"] > 0 for r in results.values())
    journal = json.loads(out.stdout)["journal"]
    assert journal["fsync_floor_p50_ms"] > 0
    for name in ("speak", "reply"):
        cost = journal[name]
        # the cost is the raw medians' difference, rounded: within a rounding step of the rounded medians' one
        assert abs(cost["cost_per_write_ms"] - (cost["journal_on_p50_ms"] - cost["journal_off_p50_ms"])) <= 0.011
        # the ratio is taken from the raw figures, each reported to 0.01: it lies between the ratios the rounded
        # figures' extremes give (the floor can be a quarter of a ms, so a fixed tolerance would not do)
        c, f = cost["cost_per_write_ms"], journal["fsync_floor_p50_ms"]
        ratios = [(c + dc) / (f + df) for dc in (-0.006, 0.006) for df in (-0.005, 0.005) if f + df > 0]
        assert min(ratios) - 0.006 <= cost["cost_in_floors"] <= max(ratios) + 0.006 or f <= 0.005
    assert journal["burst"]["writes"] == journal["burst"]["writers"] * 5 and journal["burst"]["records_per_sync"] >= 1


def test_bench_turn_counts_two_requests_per_turn_and_three_when_the_log_is_read():
    out = subprocess.run([sys.executable, "-m", "butai_tools.cli", "bench", "turn", "--sessions", "1", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["dynamodb_requests"] == 2 and report["calls"]["TransactWriteItems"] == 1
    assert report["log_not_held"]["dynamodb_requests"] == 3
    assert report["log_not_held"]["max_dynamodb_requests"] == 3


def test_bench_coldstart_times_new_processes_against_the_floor():
    out = subprocess.run([sys.executable, "-m", "butai_tools.cli", "bench", "coldstart", "--samples", "1", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["floor_ms"] > 0 and report["first_turn_total_ms"] > report["floor_ms"]
    assert abs(report["ratio"] - report["first_turn_total_ms"] / report["floor_ms"]) < 0.02
    assert list(report["phases_ms"]) == ["python start", "import app", "services", "scenario load",
                                         "interpreter build", "first turn"]
    # Both sides load bytecode (the package ships it); CPU time is reported beside the wall clock.
    assert report["app_bytecode"] == "compiled"
    assert report["floor_cpu_ms"] > 0 and abs(report["cpu_ratio"] - report["first_turn_cpu_ms"] / report["floor_cpu_ms"]) < 0.02
    assert abs(report["overhead_ratio"] - (report["ratio"] - 1)) < 0.02
    assert abs(report["cpu_overhead_ratio"] - (report["cpu_ratio"] - 1)) < 0.02


def test_bench_wake_measures_a_healthy_webhook_beside_slowloris_receivers_against_its_own_floor():
    out = subprocess.run([sys.executable, "-m", "butai_tools.cli", "bench", "wake", "--trials", "2", "--idle", "1",
                          "--slow", "2", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    slow, floor = report["slow_neighbours"], report["paths"]["webhook"]
    assert slow["slow_stages"] == 2 and 0 < slow["p50_s"] <= slow["max_s"]
    # the delays are the raw figures' differences, rounded: within a rounding step of the rounded ones'
    assert abs(slow["delay_p50_s"] - (slow["p50_s"] - floor["p50_s"])) <= 0.00011
    assert abs(slow["delay_max_s"] - (slow["max_s"] - floor["p50_s"])) <= 0.00011


def test_bench_push_measures_both_paths_and_counts_a_fan_outs_requests():
    out = subprocess.run([sys.executable, "-m", "butai_tools.cli", "bench", "push", "--lines", "3", "--sockets", "1,3",
                          "--fan-out-lines", "2", "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["lines"] == 3 and report["push_stayed_live"] is True
    for path in ("push", "polling"):
        assert set(report[path]) == {"from_response", "from_request"}
    # The pushed page asked for nothing after its subscription's catch-up; the polled one kept asking.
    assert report["get_requests_per_page_minute"]["push"] == 0
    assert report["get_requests_per_page_minute"]["polling"] > 0
    # A fan-out: the log tail (and, locally only, the stage the stream would carry).
    # (The local run keeps the subscriptions in memory too: the cloud makes a second Query for them.)
    assert report["fan_out"]["dynamodb_requests_per_fan_out"] == {"GetItem": 1.0, "Query": 1.0}
    assert set(report["fan_out"]["by_open_sockets"]) == {"1", "3"}
    assert all(r["fan_outs"] == 2 for r in report["fan_out"]["by_open_sockets"].values())


def test_bench_push_with_many_agents_measures_pages_beside_a_stalled_socket_against_its_floor():
    out = subprocess.run([sys.executable, "-m", "butai_tools.cli", "bench", "push", "--agents", "4", "--agent-lines",
                          "3", "--agent-interval", "0.3", "--stalled", "--json"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    many = json.loads(out.stdout)["many_agents"]
    assert many["agents"] == 4
    for phase in ("floor", "stalled"):
        assert many[phase]["lines"] == 12 and many[phase]["missing"] == 0, many
        assert many[phase]["p50_s"] <= many[phase]["p99_s"] <= many[phase]["max_s"]
    assert many["stalled"]["attacker_connects"] >= 1
    assert {"stalled_vs_floor_p50", "stalled_vs_floor_p99"} <= set(many)
