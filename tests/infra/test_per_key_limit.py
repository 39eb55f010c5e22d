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


KEY = "bka_AbCdEf0123456789-_xyzXYZ0123456789"
# One key written many ways: each is either exactly the key for the app and its own count at the edge, or
# refused by both.  The list (\x0b, \x0c, \x1c, \x1f, \x85, \xa0 after the key), tabs, double
# spaces, the scheme's case, spaces around, other schemes, look-alikes, invisible and control characters.
SUFFIXES = ["\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\xa0", "\t", " ", "  ", "\x00", "\r", "\n",
            "\u2028", "\u2029", "\u3000", "\u200b", "\ufeff", "\u2003", "=", ",", ";", ".", "\u00ad"]
VARIANTS = list(dict.fromkeys(["Bearer " + KEY] + ["Bearer " + KEY + s for s in SUFFIXES] + ["Bearer " + s + KEY for s in SUFFIXES]
            + ["Bearer" + s + KEY for s in SUFFIXES] + [s + "Bearer " + KEY for s in SUFFIXES]
            + ["bearer " + KEY, "BEARER " + KEY, "bEaReR " + KEY, "Bearer  " + KEY, "Bearer\t" + KEY,
               " Bearer " + KEY, "Bearer " + KEY + " ", "Bearer " + KEY + "\r\n", "Basic " + KEY, KEY,
               "Bearer", "Bearer ", "Bearer " + KEY + ",Bearer " + KEY, 'Bearer "' + KEY + '"',
               "Bearer=" + KEY, "Token " + KEY, "Bearer " + KEY.upper(), "Bearer " + KEY[:-1],
               "Ｂｅａｒｅｒ " + KEY, "Bearer " + KEY.replace("a", "\u0430"), "Bearer " + KEY + KEY]))


def waf_key_format_blocks(statement: dict, value: str) -> bool:
    """The key-format rule's statement on a header value, as WAF evaluates it (no text transformation; its
    PCRE pattern is one Python's `re` reads the same way)."""
    import re
    size, negated = statement["AndStatement"]["Statements"]
    regex = negated["NotStatement"]["Statement"]["RegexMatchStatement"]
    assert size["SizeConstraintStatement"]["TextTransformations"] == [{"Priority": 0, "Type": "NONE"}]
    assert regex["TextTransformations"] == [{"Priority": 0, "Type": "NONE"}]
    present = len(value.encode("utf-8", "surrogatepass")) >= size["SizeConstraintStatement"]["Size"]
    return present and re.search(regex["RegexString"], value) is None


def test_the_edge_and_the_app_read_every_spelling_of_a_key_alike():
    acl = infra.build()["Resources"]["PerKeyWebAcl"]
    key_format = _rule(acl, "key-format")
    assert _if(acl, "key-format") == infra.PER_KEY_CONDITION
    assert key_format["Priority"] < _rule(acl, "per-key")["Priority"]       # refused before it could count
    assert key_format["Action"]["Block"]["CustomResponse"]["ResponseCode"] == 401
    counted = _rule(acl, "per-key")["Statement"]["RateBasedStatement"]["CustomKeys"][0]["Header"]
    assert counted == {"Name": "authorization", "TextTransformations": [{"Priority": 0, "Type": "NONE"}]}
    accepted = []
    for value in VARIANTS:
        token = bearer_token(value)
        blocked = waf_key_format_blocks(key_format["Statement"], value)
        # Refused by the app exactly when refused at the edge …
        assert (token is None) == blocked, repr(value)
        if token is not None:
            # … and otherwise the edge's count (the header, as it is) is the app's key, byte for byte.
            assert value == "Bearer " + token, repr(value)
            if token == KEY:
                accepted.append(value)
    assert accepted == ["Bearer " + KEY]      # one spelling of the key, so one count


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
    assert params["FunctionReservedConcurrency"]["Default"] == 0       # a parameter, unset by default
    api_logs = resources["RestAPI"]["Properties"]["AccessLogSetting"]["Fn::If"]
    assert api_logs[0] == infra.API_LOGS and api_logs[1]["DestinationArn"] == {"Fn::GetAtt": ["ApiAccessLogGroup",
                                                                                               "Arn"]}
    line = api_logs[1]["Format"]["Fn::Sub"]
    assert "Authorization" not in line and json.loads(line)["status"] and json.loads(line)["stack"] == \
        "${AWS::StackName}"
    assert resources["ApiAccessLogGroup"]["Properties"]["RetentionInDays"] == {"Ref": "AccessLogRetentionDays"}
    cf_logs = resources["Distribution"]["Properties"]["DistributionConfig"]["Logging"]["Fn::If"]
    assert cf_logs[0] == infra.CLOUDFRONT_LOGS and cf_logs[1]["IncludeCookies"] is False
    bucket = resources["AccessLogsBucket"]["Properties"]
    assert bucket["LifecycleConfiguration"]["Rules"][0]["ExpirationInDays"] == {"Ref": "AccessLogRetentionDays"}
    assert bucket["PublicAccessBlockConfiguration"]["RestrictPublicBuckets"] is True
    for name in ("ApiAccessLogs", "CloudFrontAccessLogs"):
        assert params[name]["Default"] == "true" and params[name]["AllowedValues"] == ["true", "false"]
