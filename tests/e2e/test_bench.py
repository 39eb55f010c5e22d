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
    assert results["fetch_replies (1 unread)"]["calls"] == {"Query": 1, "TransactWriteItems": 1}
    assert all(r["p50_ms"] > 0 for r in results.values())


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
    # A fan-out: the subscriptions and the log tail (and, locally only, the stage the stream would carry).
    assert report["fan_out"]["dynamodb_requests_per_fan_out"] == {"GetItem": 1.0, "Query": 2.0}
    assert set(report["fan_out"]["by_open_sockets"]) == {"1", "3"}
    assert all(r["fan_outs"] == 2 for r in report["fan_out"]["by_open_sockets"].values())
