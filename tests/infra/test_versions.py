"""Which SnapStart versions a deploy deletes (butai_tools/versions.py): every published version but the
newest few and any an alias still routes to; never $LATEST."""
import pytest

from butai_tools import infra, versions


def test_the_functions_that_publish_versions_are_the_snapstart_ones():
    assert versions.publishing_functions() == [infra.FUNCTION, infra.LONG_POLL_FUNCTION]
    resources = infra.build()["Resources"]
    for logical in versions.publishing_functions():
        assert resources[logical]["Properties"]["SnapStart"] == {"ApplyOn": "PublishedVersions"}


def test_keep_the_newest_and_whatever_an_alias_names():
    assert versions.to_delete(["$LATEST", "1", "2", "3", "10", "11"], ["11"], keep=2) == ["1", "2", "3"]
    # an alias left on an old version (a rollback) keeps it; so does a weighted one (a gradual shift)
    listed = {"Versions": [{"Version": v} for v in ("$LATEST", "1", "2", "3", "4", "5")]}
    aliases = {"Aliases": [{"Name": "live", "FunctionVersion": "2",
                            "RoutingConfig": {"AdditionalVersionWeights": {"3": 0.1}}}]}
    assert versions.select(1, listed, aliases) == ["1", "4"]
    assert versions.to_delete(["$LATEST"], [], keep=2) == []
    with pytest.raises(ValueError):
        versions.to_delete(["1"], [], keep=0)
