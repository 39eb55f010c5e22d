from chalicelib import infra, tables


def test_checked_in_template_matches_the_table_definitions():
    assert infra.RESOURCES.read_text(encoding="utf-8") == infra.render(), \
        "infra/resources.json is stale: run `python -m chalicelib.infra`"


def test_template_tables_use_the_one_definition():
    resources = infra.build()["Resources"]
    for logical, spec in tables.TABLES.items():
        resource_id, env_var = tables.CFN_TABLES[logical]
        props = resources[resource_id]["Properties"]
        assert props["KeySchema"] == spec["KeySchema"]
        assert props["BillingMode"] == "PAY_PER_REQUEST"
        assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
        assert resources["APIHandler"]["Properties"]["Environment"]["Variables"][env_var] == {"Ref": resource_id}
    assert resources["PendingRepliesTable"]["Properties"]["GlobalSecondaryIndexes"][0]["IndexName"] == \
        tables.UNREAD_INDEX


def test_function_policy_allows_only_the_calls_the_store_makes():
    statement = infra.build()["Resources"]["APIHandler"]["Properties"]["Policies"][0]["Statement"][0]
    assert "dynamodb:Scan" not in statement["Action"] and "dynamodb:DeleteItem" not in statement["Action"]
    assert all("*" != r for r in statement["Resource"])
