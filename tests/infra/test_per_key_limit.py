"""The cloud's rate limits and the lock on the API's regional endpoint (the template, no AWS)."""
import json

from butai_tools import infra
from chalicelib.stage.keys import bearer_token


def _rule(acl, name):
    rules = [r["Fn::If"][1] if "Fn::If" in r else r for r in acl["Properties"]["Rules"]]
    return next(r for r in rules if r["Name"] == name)


def _if(acl, name):
    return next(r["Fn::If"][0] for r in acl["Properties"]["Rules"] if "Fn::If" in r and r["Fn::If"][1]["Name"] == name)


def test_each_key_has_its_own_rate_limit_at_the_edge():
    template = infra.build()
    acl = template["Resources"]["PerKeyWebAcl"]
    assert acl["Type"] == "AWS::WAFv2::WebACL" and acl["Properties"]["Scope"] == "CLOUDFRONT"
    assert acl["Condition"] == infra.EDGE_ACL_CONDITION
    rule = _rule(acl, "per-key")
    assert _if(acl, "per-key") == infra.PER_KEY_CONDITION
    statement = rule["Statement"]["RateBasedStatement"]
    assert statement["AggregateKeyType"] == "CUSTOM_KEYS"
    (key,) = statement["CustomKeys"]
    assert key["Header"]["Name"] == "authorization"
    assert statement["Limit"] == {"Ref": "PerKeyRequestsPer5Min"}
    block = rule["Action"]["Block"]["CustomResponse"]
    assert block["ResponseCode"] == 429 and block["ResponseHeaders"][0]["Name"] == "Retry-After"
    distribution = template["Resources"]["Distribution"]["Properties"]["DistributionConfig"]
    assert distribution["WebACLId"]["Fn::If"][0] == infra.EDGE_ACL_CONDITION
    assert "PerKeyRequestsPer5Min" in template["Parameters"]


def waf_transform(value: str, transformations: list[dict]) -> str:
    """What WAF's text transformations do to a header value (the two used), as AWS documents them."""
    import re
    for step in sorted(transformations, key=lambda t: t["Priority"]):
        if step["Type"] == "COMPRESS_WHITE_SPACE":
            value = re.sub(" +", " ", re.sub("[\f\t\n\r\v\u00a0]", " ", value))
        elif step["Type"] == "LOWERCASE":
            value = value.lower()
        else:
            assert step["Type"] == "NONE"
    return value


def test_one_key_written_any_way_the_app_accepts_is_one_count():
    statement = _rule(infra.build()["Resources"]["PerKeyWebAcl"], "per-key")["Statement"]["RateBasedStatement"]
    transformations = statement["CustomKeys"][0]["Header"]["TextTransformations"]
    key = "bka_AbCdEf0123456789-_xyzXYZ0123456789ab"
    # HTTP drops the spaces around a header value (RFC 9110 5.5); what the app still accepts besides:
    spellings = ["Bearer " + key, "bearer " + key, "bEaReR    " + key, "BEARER  " + key]
    assert all(bearer_token(s) == key for s in spellings)
    assert len({waf_transform(s, transformations) for s in spellings}) == 1


def test_every_address_is_limited_key_or_no_key():
    template = infra.build()
    acl = template["Resources"]["PerKeyWebAcl"]
    rule = _rule(acl, "per-address")
    assert _if(acl, "per-address") == infra.PER_ADDRESS_CONDITION
    assert rule["Statement"]["RateBasedStatement"] == {"Limit": {"Ref": "PerAddressRequestsPer5Min"},
                                                       "AggregateKeyType": "IP"}
    assert rule["Action"]["Block"]["CustomResponse"]["ResponseCode"] == 429
    assert template["Parameters"]["PerAddressRequestsPer5Min"]["MinValue"] == 0


def test_only_cloudfront_reaches_the_api():
    resources = infra.build()["Resources"]
    origin = next(o for o in resources["Distribution"]["Properties"]["DistributionConfig"]["Origins"]
                  if o["Id"] == "api")
    (header,) = origin["OriginCustomHeaders"]
    assert header["HeaderName"] == infra.ORIGIN_HEADER
    acl = resources["ApiWebAcl"]["Properties"]
    assert acl["Scope"] == "REGIONAL" and acl["DefaultAction"]["Block"]["CustomResponse"]["ResponseCode"] == 403
    allow = _rule(resources["ApiWebAcl"], "through-cloudfront")
    match = allow["Statement"]["ByteMatchStatement"]
    assert allow["Action"] == {"Allow": {}} and match["PositionalConstraint"] == "EXACTLY"
    assert match["FieldToMatch"] == {"SingleHeader": {"Name": infra.ORIGIN_HEADER}}
    assert match["SearchString"] == header["HeaderValue"] == {"Fn::Sub": infra.ORIGIN_SECRET}
    assert "OriginSecret" in infra.ORIGIN_SECRET and resources["OriginSecret"]["Type"] == "AWS::SecretsManager::Secret"
    association = resources["ApiWebAclAssociation"]["Properties"]
    assert association["WebACLArn"] == {"Fn::GetAtt": ["ApiWebAcl", "Arn"]}
    assert {"Ref": "RestAPI.Stage"} in association["ResourceArn"]["Fn::Join"][1]
    # Outside us-east-1 the per-key limit moves to the API's own web ACL.
    assert _if(resources["ApiWebAcl"], "per-key") == infra.PER_KEY_REGIONAL
    body = json.loads(acl["CustomResponseBodies"]["not-through-cloudfront"]["Content"])
    assert set(body) == {"error"} and body["error"]["code"] == "forbidden"


def test_reserved_concurrency_and_access_logs_are_parameters():
    template = infra.build()
    resources, params = template["Resources"], template["Parameters"]
    reserved = resources["APIHandler"]["Properties"]["ReservedConcurrentExecutions"]["Fn::If"]
    assert reserved[:2] == [infra.RESERVED_CONCURRENCY, {"Ref": "FunctionReservedConcurrency"}]
    assert params["FunctionReservedConcurrency"]["Default"] > 0
    api_logs = resources["RestAPI"]["Properties"]["AccessLogSetting"]["Fn::If"]
    assert api_logs[0] == infra.API_LOGS and api_logs[1]["DestinationArn"] == {"Fn::GetAtt": ["ApiAccessLogGroup",
                                                                                               "Arn"]}
    assert "Authorization" not in api_logs[1]["Format"] and json.loads(api_logs[1]["Format"])["status"]
    assert resources["ApiAccessLogGroup"]["Properties"]["RetentionInDays"] == {"Ref": "AccessLogRetentionDays"}
    cf_logs = resources["Distribution"]["Properties"]["DistributionConfig"]["Logging"]["Fn::If"]
    assert cf_logs[0] == infra.CLOUDFRONT_LOGS and cf_logs[1]["IncludeCookies"] is False
    bucket = resources["AccessLogsBucket"]["Properties"]
    assert bucket["LifecycleConfiguration"]["Rules"][0]["ExpirationInDays"] == {"Ref": "AccessLogRetentionDays"}
    assert bucket["PublicAccessBlockConfiguration"]["RestrictPublicBuckets"] is True
    for name in ("ApiAccessLogs", "CloudFrontAccessLogs"):
        assert params[name]["Default"] == "true" and params[name]["AllowedValues"] == ["true", "false"]
