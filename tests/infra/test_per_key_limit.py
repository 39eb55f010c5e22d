from chalicelib import infra


def test_each_key_has_its_own_rate_limit_at_the_edge():
    template = infra.build()
    acl = template["Resources"]["PerKeyWebAcl"]
    assert acl["Type"] == "AWS::WAFv2::WebACL" and acl["Properties"]["Scope"] == "CLOUDFRONT"
    rule = acl["Properties"]["Rules"][0]
    statement = rule["Statement"]["RateBasedStatement"]
    assert statement["AggregateKeyType"] == "CUSTOM_KEYS"
    assert statement["CustomKeys"] == [{"Header": {"Name": "authorization",
                                                   "TextTransformations": [{"Priority": 0, "Type": "NONE"}]}}]
    assert statement["Limit"] == {"Ref": "PerKeyRequestsPer5Min"}
    block = rule["Action"]["Block"]["CustomResponse"]
    assert block["ResponseCode"] == 429 and block["ResponseHeaders"][0]["Name"] == "Retry-After"
    distribution = template["Resources"]["Distribution"]["Properties"]["DistributionConfig"]
    assert distribution["WebACLId"]["Fn::If"][0] == infra.PER_KEY_CONDITION
    assert "PerKeyRequestsPer5Min" in template["Parameters"]
