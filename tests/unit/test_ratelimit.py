import pytest

from butai_tools.local.ratelimit import TokenBuckets, retry_after_header


def test_burst_then_the_rate():
    now = [0.0]
    buckets = TokenBuckets(rate=2, burst=3, clock=lambda: now[0])
    assert [buckets.take("k") for _ in range(3)] == [0, 0, 0]
    assert buckets.take("k") == pytest.approx(0.5)
    now[0] += 0.5
    assert buckets.take("k") == 0
    assert buckets.take("other") == 0  # each key has its own bucket


def test_bounded_memory():
    buckets = TokenBuckets(rate=1, burst=1, max_buckets=100)
    for i in range(1000):
        buckets.take(f"k{i}")
    assert len(buckets._buckets) == 100


def test_retry_after_is_whole_seconds_at_least_one():
    assert retry_after_header(0.2) == "1" and retry_after_header(2.1) == "3"
    with pytest.raises(ValueError):
        TokenBuckets(rate=0, burst=1)
