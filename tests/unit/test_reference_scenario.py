from tests.conftest import ROOT


def test_reference_scenario_is_shipped_unchanged():
    shipped = (ROOT / "scenarios/chinoike.json").read_bytes()
    reference = ROOT.parent / "shared" / "scenarios" / "chinoike.json"
    if reference.exists():
        assert shipped == reference.read_bytes()
    assert b'"title": "\xe8\xa1\x80\xe3\x81\xae\xe6\xb1\xa0\xe3\x81\xae\xe5\xa4\x9c' in shipped  # 血の池の夜
