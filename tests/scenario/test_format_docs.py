"""docs/scenario-format.md documents every field of the format: its field reference is the one
`butai schema --reference` makes from the models, and every field of the JSON Schema appears in it."""
from __future__ import annotations

import json

from butai_tools.scenario.reference import documented_section, reference_markdown
from tests.conftest import ROOT

DOC = ROOT / "docs" / "scenario-format.md"


def test_the_field_reference_in_the_docs_is_the_generated_one():
    section = documented_section(DOC.read_text(encoding="utf-8"))
    assert section is not None, "docs/scenario-format.md has no field reference (butai schema --reference)"
    assert section == reference_markdown(), "regenerate it: butai schema --reference"


def test_every_field_of_the_schema_is_in_the_reference():
    schema = json.loads((ROOT / "scenarios" / "schema.json").read_text(encoding="utf-8"))
    section = documented_section(DOC.read_text(encoding="utf-8")) or ""
    objects = {**schema["$defs"], "Scenario": schema}
    missing = []
    for name, spec in objects.items():
        part = section.split(f"#### {name}\n", 1)
        assert len(part) == 2, f"no table for {name}"
        table = part[1].split("\n#### ", 1)[0]
        missing += [f"{name}.{field}" for field in spec.get("properties", {}) if f"| `{field}` |" not in table]
    assert missing == []


def test_the_tutorial_exists_and_uses_the_second_example():
    tutorial = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    assert "scenarios/hanaya.json" in tutorial and "butai lint" in tutorial and "butai trace" in tutorial
