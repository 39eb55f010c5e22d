"""Property-based bad input for the routes agents and pages poll: fetch_replies, GET /stages/{id},
GET /stages/{id}/debug, GET /openapi.json.  Same machinery and checks as test_properties.py (split in two
files so that pytest-xdist can run them side by side)."""
from __future__ import annotations

from tests.hardening._properties import property_test

test_fetch_replies = property_test("fetch_replies", "agent_stage")
test_get_stage = property_test("get_stage", "agent_stage")
test_debug = property_test("debug", "scenario_stage")
test_openapi = property_test("openapi", "agent_stage")
