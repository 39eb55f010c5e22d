"""Webhook signatures (good, tampered, replayed) and the SSRF rules (refused before any connection)."""
import json
import socket

import pytest

from butai import signing as client_signing
from butai.client import WebhookSignatureError, verify_webhook
from chalicelib.webhooks import signing, targets
from chalicelib.webhooks.delivery import Sender
from chalicelib.webhooks.models import WebhookConfig
from tests.webhooks.receiver import Receiver

SECRET = signing.new_secret()
BODY = json.dumps({"type": "reply.created", "stage_id": "s_0123456789abcdef",
                   "reply": {"id": "01ABC", "text": "こんにちは", "created_at": "2026-01-01T00:00:00.000Z"}},
                  ensure_ascii=False).encode()
NOW = 1_800_000_000


def test_a_genuine_delivery_verifies_and_gives_the_payload():
    headers = signing.sign(SECRET, "01ABC", BODY, now=NOW)
    assert headers[signing.SIGNATURE_HEADER].startswith("v2=")
    assert verify_webhook(SECRET, headers, BODY, now=NOW + 10)["reply"]["text"] == "こんにちは"
    # header names are matched without regard to case (frameworks lower-case them)
    lowered = {k.lower(): v for k, v in headers.items()}
    assert client_signing.verify(SECRET, lowered, BODY, now=NOW) == "01ABC"


@pytest.mark.parametrize("tamper, reason", [
    (lambda h, b: (h, b.replace("こんにちは".encode(), "さようなら".encode())), "bad_signature"),
    (lambda h, b: ({**h, signing.SIGNATURE_HEADER: "v2=" + "0" * 64}, b), "bad_signature"),
    (lambda h, b: ({**h, signing.TIMESTAMP_HEADER: str(NOW + 1)}, b), "bad_signature"),
    # A delivery re-sent with a new id (to get past deduplication on it) no longer verifies.
    (lambda h, b: ({**h, signing.ID_HEADER: "01FORGED"}, b), "bad_signature"),
    (lambda h, b: ({k: v for k, v in h.items() if k != signing.ID_HEADER}, b), "missing_header"),
    (lambda h, b: ({k: v for k, v in h.items() if k != signing.SIGNATURE_HEADER}, b), "missing_header"),
    (lambda h, b: ({**h, signing.TIMESTAMP_HEADER: "soon"}, b), "bad_timestamp"),
])
def test_a_tampered_delivery_is_refused(tamper, reason):
    headers, body = tamper(signing.sign(SECRET, "01ABC", BODY, now=NOW), BODY)
    with pytest.raises(WebhookSignatureError) as err:
        verify_webhook(SECRET, headers, body, now=NOW)
    assert err.value.reason == reason


def test_another_secret_does_not_verify():
    headers = signing.sign(signing.new_secret(), "01ABC", BODY, now=NOW)
    with pytest.raises(WebhookSignatureError):
        verify_webhook(SECRET, headers, BODY, now=NOW)


def test_a_replayed_old_delivery_is_refused_even_with_its_valid_signature():
    headers = signing.sign(SECRET, "01ABC", BODY, now=NOW)
    assert verify_webhook(SECRET, headers, BODY, now=NOW + 299)
    with pytest.raises(WebhookSignatureError) as err:
        verify_webhook(SECRET, headers, BODY, now=NOW + 301)
    assert err.value.reason == "stale_timestamp"
    with pytest.raises(WebhookSignatureError):       # from the future too
        verify_webhook(SECRET, headers, BODY, now=NOW - 301)


def test_two_signatures_during_a_secret_change_verify():
    old = signing.signature(signing.new_secret(), "01ABC", NOW, BODY)
    headers = signing.sign(SECRET, "01ABC", BODY, now=NOW)
    headers[signing.SIGNATURE_HEADER] = f"v2={old}, {headers[signing.SIGNATURE_HEADER]}"
    assert verify_webhook(SECRET, headers, BODY, now=NOW)


def test_the_id_returned_is_the_signed_one_and_an_old_v1_signature_is_refused():
    import hashlib
    import hmac
    headers = signing.sign(SECRET, "01ABC", BODY, now=NOW)
    assert client_signing.verify(SECRET, headers, BODY, now=NOW) == "01ABC"
    # The former scheme signed "<timestamp>.<body>" only: any id could ride along with it.
    v1 = hmac.new(SECRET.encode(), str(NOW).encode() + b"." + BODY, hashlib.sha256).hexdigest()
    forged = {**headers, signing.ID_HEADER: "01FORGED", signing.SIGNATURE_HEADER: f"v1={v1}"}
    with pytest.raises(client_signing.SignatureError) as err:
        client_signing.verify(SECRET, forged, BODY, now=NOW)
    assert err.value.reason == "bad_signature"


# ---------------------------------------------------------------- where a webhook may go

@pytest.mark.parametrize("url, reason", [
    ("http://hooks.example.com/x", "https_required"),
    ("ftp://hooks.example.com/x", "invalid_url"),
    ("https://user:pw@hooks.example.com/x", "invalid_url"),
    ("https://10.0.0.7/x", "private_address"),
    ("https://192.168.1.2/x", "private_address"),
    ("https://172.16.0.1/x", "private_address"),
    ("https://100.64.0.1/x", "private_address"),           # carrier-grade NAT
    ("https://0.0.0.0/x", "private_address"),
    ("https://[fd12::1]/x", "private_address"),
    ("https://[::ffff:10.0.0.1]/x", "private_address"),    # IPv4-mapped IPv6
    ("https://169.254.10.20/x", "link_local_address"),
    ("https://[fe80::1]/x", "link_local_address"),
    ("https://169.254.169.254/latest/meta-data/", "metadata_address"),
    ("http://169.254.169.254/latest/meta-data/", "https_required"),
    ("https://[fd00:ec2::254]/", "metadata_address"),
    # IPv6 addresses that carry an IPv4 one: 6to4 (2002::/16), Teredo, NAT64, IPv4-translated, IPv4-compatible
    ("https://[2002:a9fe:a9fe::1]/", "metadata_address"),
    ("https://[2002:7f00:1::1]/x", "loopback"),
    ("https://[2002:a00:1::1]/x", "private_address"),
    ("https://[2002:a9fe:1234::1]/x", "link_local_address"),
    ("https://[2001:0:4136:e378:8000:63bf:5601:5601]/x", "metadata_address"),   # Teredo client 169.254.169.254
    ("https://[64:ff9b::a9fe:a9fe]/x", "metadata_address"),
    ("https://[64:ff9b::7f00:1]/x", "loopback"),
    ("https://[::ffff:0:a9fe:a9fe]/x", "metadata_address"),
    ("https://[::7f00:1]/x", "private_address"),
    ("https://127.0.0.1/x", "loopback"),
    ("https://localhost/x", "loopback"),
    ("https://hooks.example.com/x#frag", "invalid_url"),
    ("https://hooks.example.com/a b", "invalid_url"),
])
def test_the_cloud_refuses_urls_that_reach_inside(url, reason):
    with pytest.raises(targets.TargetRefused) as err:
        targets.parse(url, local=False)
    assert err.value.reason == reason


def test_a_name_resolving_to_the_6to4_address_of_a_public_ipv4_address_is_allowed():
    target = targets.parse("https://hooks.example.com/x")
    assert targets.resolve(target, resolver=lambda host, port: ["2002:5db8:d822::1"]) == "2002:5db8:d822::1"


def test_a_public_ip_address_is_no_webhook_host_either():
    with pytest.raises(targets.TargetRefused) as err:
        targets.parse("https://93.184.216.34/x")
    assert err.value.reason == "invalid_url"


def test_a_name_resolving_to_a_6to4_metadata_address_is_refused_after_dns():
    target = targets.parse("https://hooks.example.com/x")
    with pytest.raises(targets.TargetRefused) as err:
        targets.resolve(target, resolver=lambda host, port: ["2002:a9fe:a9fe::1"])
    assert err.value.reason == "metadata_address"


def test_a_local_run_allows_plain_http_to_loopback_only():
    assert targets.parse("http://127.0.0.1:9000/hook", local=True).port == 9000
    for url in ("http://10.0.0.7/x", "http://hooks.example.com/x"):
        with pytest.raises(targets.TargetRefused):
            targets.parse(url, local=True)
    with pytest.raises(targets.TargetRefused) as err:
        targets.parse("https://169.254.169.254/", local=True)
    assert err.value.reason == "metadata_address"


@pytest.mark.parametrize("answers, reason", [
    (["10.1.2.3"], "private_address"),
    (["93.184.216.34", "192.168.0.1"], "private_address"),   # one bad answer is enough
    (["169.254.169.254"], "metadata_address"),
    (["127.0.0.1"], "loopback"),
    (["fe80::1%eth0"], "link_local_address"),
])
def test_a_name_is_checked_after_dns_resolution(answers, reason):
    target = targets.parse("https://hooks.example.com/x")
    with pytest.raises(targets.TargetRefused) as err:
        targets.resolve(target, resolver=lambda host, port: answers)
    assert err.value.reason == reason


def test_a_refused_address_is_never_connected_to(monkeypatch):
    def no_connect(*args, **kwargs):
        raise AssertionError("connected to a refused address")
    monkeypatch.setattr(socket, "create_connection", no_connect)
    outcome = Sender(resolver=lambda host, port: ["10.9.8.7"]).send(
        WebhookConfig("https://rebind.example.com/x", SECRET, ""), "01ABC", BODY)
    assert not outcome.ok and not outcome.retryable and outcome.error.startswith("private_address")


def test_the_connection_goes_to_the_checked_address(monkeypatch):
    # `hooks.invalid` cannot be resolved by the system: the socket is opened to the address the
    # resolver gave and the checks passed, never by name again (no second lookup to rebind).
    receiver = Receiver()
    opened = []
    real = socket.create_connection

    def recording(address, *args, **kwargs):
        opened.append(address)
        return real(address, *args, **kwargs)
    monkeypatch.setattr(socket, "create_connection", recording)
    try:
        url = f"https://hooks.invalid:{receiver.port}/hook"
        with pytest.raises(OSError):      # the receiver speaks plain http, so the TLS handshake fails
            targets.post(url, BODY, {}, local=True, resolver=lambda host, port: ["127.0.0.1"])
        assert opened == [("127.0.0.1", receiver.port)]
        assert Sender(local=True).send(WebhookConfig(receiver.url, SECRET, ""), "01ABC", BODY).ok
    finally:
        receiver.close()


def test_redirects_are_not_followed():
    target = Receiver()
    redirecting = Receiver(default=302, headers={"Location": target.url})
    try:
        outcome = Sender(local=True).send(WebhookConfig(redirecting.url, SECRET, ""), "01ABC", BODY)
        assert not outcome.ok and outcome.status == 302 and outcome.error.startswith("redirect_refused")
        assert not outcome.retryable
        assert len(redirecting.requests) == 1 and target.requests == []
    finally:
        target.close()
        redirecting.close()


def test_only_a_bounded_part_of_the_answer_is_read():
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Flood(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", str(10 * 1024 * 1024))
            self.end_headers()
            try:
                self.wfile.write(b"x" * (10 * 1024 * 1024))
            except OSError:
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Flood)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        answer = targets.post(f"http://127.0.0.1:{server.server_address[1]}/", BODY, {}, local=True)
        assert answer.status == 200 and len(answer.body) == targets.MAX_RESPONSE_BYTES
    finally:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------- the published URL rule is the enforced one

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _accepted(url: str, local: bool) -> bool:
    try:
        targets.parse(url, local=local)
        return True
    except targets.TargetRefused:
        return False


@pytest.mark.parametrize("local", [False, True])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_url_the_published_pattern_allows_is_accepted_before_dns(local, data):
    url = data.draw(st.from_regex(targets.url_pattern(local), fullmatch=True).filter(
        lambda u: len(u) <= targets.MAX_URL_LENGTH))
    assert _accepted(url, local), url


URL_PARTS = st.sampled_from(["https://", "http://", "HTTPS://", "ftp://", "", "a", ".", "-", ":", "443", "0", "65536",
                             "/", "?", "#", "@", " ", "%20", "é", "[", "]", "::1", "127.0.0.1", "localhost",
                             "10.0.0.1", "1.2.3.4", "example", "com", "xn--p1ai", "\\x00", "\\t", "user:pw@"])


@pytest.mark.parametrize("local", [False, True])
@settings(max_examples=600, deadline=None)
@given(parts=st.lists(URL_PARTS, max_size=8))
def test_nothing_outside_the_published_pattern_is_accepted(local, parts):
    import re
    url = "".join(parts)
    assert _accepted(url, local) == bool(re.match(targets.url_pattern(local), url)), url


def test_a_name_that_does_not_resolve_is_taken_and_checked_at_every_delivery(services, stage):
    from chalicelib.webhooks.models import WebhookRequest
    webhooks = services.webhooks
    webhooks.sender = Sender(resolver=lambda host, port: (_ for _ in ()).throw(socket.gaierror("no such name")))
    created = webhooks.set(stage.stage_id, stage.agent_key, WebhookRequest(url="https://hooks.example.com/x"))
    assert created.url == "https://hooks.example.com/x"
    outcome = webhooks.sender.send(WebhookConfig(created.url, created.secret, ""), "01ABC", BODY)
    assert not outcome.ok and outcome.error.startswith("dns_failed")
    # A name that resolves inside is refused when set.
    webhooks.sender = Sender(resolver=lambda host, port: ["169.254.169.254"])
    with pytest.raises(Exception) as err:
        webhooks.set(stage.stage_id, stage.agent_key, WebhookRequest(url="https://hooks.example.com/x"))
    assert getattr(err.value, "code", "") == "webhook_url_refused"
