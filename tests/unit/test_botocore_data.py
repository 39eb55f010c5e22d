"""chalicelib.botocore_data: the same data as botocore's own loader, in plain dicts, from the same places."""
import json

import botocore.session

from chalicelib import botocore_data


def _as_text(data) -> str:
    # Not sorted: the order of members (which botocore serialises in) must be the same too.
    return json.dumps(data, ensure_ascii=False)


def test_the_loader_reads_what_botocore_reads_in_the_same_order(monkeypatch):
    # A loader of its own: the shared one holds what resolving endpoints has added to botocore's data.
    monkeypatch.setattr(botocore_data, "_loaders", {})
    ours = botocore_data.session().get_component("data_loader")
    theirs = botocore.session.get_session().get_component("data_loader")
    assert _as_text(ours.load_data("endpoints")) == _as_text(theirs.load_data("endpoints"))
    for service in ("dynamodb", "s3"):
        for kind in ("service-2", "endpoint-rule-set-1"):
            mine = ours.load_service_model(service, kind)
            assert type(mine) is dict
            assert _as_text(mine) == _as_text(theirs.load_service_model(service, kind))


def test_aws_data_path_still_overrides_the_builtin_models(tmp_path, monkeypatch):
    builtin = botocore.session.get_session().get_component("data_loader")
    version = builtin.determine_latest_version("dynamodb", "service-2")
    model = builtin.load_service_model("dynamodb", "service-2")
    model["metadata"]["serviceFullName"] = "Overridden DynamoDB"
    folder = tmp_path / "dynamodb" / version
    folder.mkdir(parents=True)
    (folder / "service-2.json").write_text(json.dumps(model), encoding="utf-8")
    monkeypatch.setenv("AWS_DATA_PATH", str(tmp_path))
    loaded = botocore_data.session().get_component("data_loader").load_service_model("dynamodb", "service-2")
    assert loaded["metadata"]["serviceFullName"] == "Overridden DynamoDB"


def test_sessions_share_what_their_loader_has_read_and_resolve_the_same_endpoints(monkeypatch):
    monkeypatch.setattr(botocore_data, "_loaders", {})
    first, second = botocore_data.session(), botocore_data.session()
    assert first.get_component("data_loader") is second.get_component("data_loader")
    model = first.get_component("data_loader").load_service_model("dynamodb", "service-2")
    assert second.get_component("data_loader").load_service_model("dynamodb", "service-2") is model
    # botocore enriches the endpoint data in place as it resolves; a later session resolves as a new one would.
    fresh = botocore.session.get_session()
    for region in ("us-east-1", "ap-northeast-1", "eu-west-1"):
        for service in ("dynamodb", "s3"):
            made = [s.create_client(service, region_name=region, aws_access_key_id="x", aws_secret_access_key="y")
                    for s in (first, second, fresh)]
            assert len({c.meta.endpoint_url for c in made}) == 1, (service, region)
