"""`butai mcp` driven by the MCP SDK's own client over stdio, against the local runtime."""
import json
import sys

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from chalicelib.stage.face_images import BASIC
from tests.conftest import ROOT

pytestmark = pytest.mark.e2e


def server_params(env: dict) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "butai_tools.cli", "mcp"], cwd=str(ROOT),
                                 env={"PYTHONPATH": str(ROOT), **env})


def run_session(params, body, timeout=60):
    async def main():
        with anyio.fail_after(timeout):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)
    return anyio.run(main)


def payload(result) -> dict:
    assert not result.is_error, result.content
    assert result.content and result.content[0].type == "text"
    data = json.loads(result.content[0].text)  # what a model reads…
    assert result.structured_content == data  # …and what a program reads
    return data


def test_tools_speak_and_fetch_replies_once_over_stdio(fresh_stage):
    async def body(session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == {"speak", "fetch_replies", "wait_for_replies", "ack_replies", "get_stage"}
        speak = tools["speak"]
        assert speak.input_schema["required"] == ["text"]
        props = speak.input_schema["properties"]
        assert set(props) == {"text", "expression", "speaker", "request_id"}
        for key in BASIC:  # the agent is told which expressions exist…
            assert key in speak.description and key in props["expression"]["description"]
        assert "neutral" in props["expression"]["description"] and "unknown" in speak.description.lower()
        fetch = tools["fetch_replies"].description.lower()  # …and that a reply comes once
        assert "once" in fetch and "next turn" in fetch and "next tool call" in fetch
        assert set(tools["fetch_replies"].input_schema.get("properties", {})) == {"ack"}   # optional
        assert tools["get_stage"].annotations.read_only_hint is True

        hello = {"text": "MCP から、こんにちは", "expression": "smile"}
        spoken = payload(await session.call_tool("speak", hello))
        assert spoken["expression"] == "smile"
        assert payload(await session.call_tool("fetch_replies", {})) == {"replies": []}
        await anyio.to_thread.run_sync(fresh_stage.reply, "MCP さん、こんにちは")
        first = payload(await session.call_tool("fetch_replies", {}))
        second = payload(await session.call_tool("fetch_replies", {}))
        view = payload(await session.call_tool("get_stage", {}))
        bad = await session.call_tool("speak", {"text": "x", "request_id": "has spaces"})
        return spoken, first, second, view, bad

    env = {"BUTAI_LOCAL_JSON": str(fresh_stage.local_json), "BUTAI_STAGE": "agent"}
    spoken, first, second, view, bad = run_session(server_params(env), body)
    assert [r["text"] for r in first["replies"]] == ["MCP さん、こんにちは"]
    assert first["replies"][0]["deliveries"] == 1
    assert second == {"replies": []}  # fetched once, never again
    # Received by the host (its next call said so): acknowledged, so no lease is left to bring it back.
    assert fresh_stage.held() is None
    assert view["current"]["text"] == "MCP から、こんにちは"
    assert [e["role"] for e in view["log"]] == ["character", "player"]
    assert bad.is_error and "request_id" in bad.content[0].text
    assert fresh_stage.view()["log"][0]["text"] == "MCP から、こんにちは"


def test_configured_by_api_url_stage_id_and_key_and_errors_are_tool_errors(fresh_stage, tmp_path):
    async def body(session):
        return (await session.call_tool("speak", {"text": "環境変数で"}),
                await session.call_tool("speak", {"text": "x", "expression": "smile"}))

    env = {"BUTAI_API_URL": fresh_stage.api_url, "BUTAI_STAGE_ID": fresh_stage.stage_id,
           "BUTAI_AGENT_KEY": fresh_stage.agent_key, "BUTAI_LOCAL_JSON": str(tmp_path / "none.json")}
    ok, _ = run_session(server_params(env), body)
    # No expression sent: the stage judged one (a plain line: neutral).
    assert payload(ok)["expression"] == "neutral" and payload(ok)["expression_source"] == "auto"

    wrong = {**env, "BUTAI_AGENT_KEY": fresh_stage.player_key}
    err, _ = run_session(server_params(wrong), body)
    assert err.is_error and "403 agent_key_required" in err.content[0].text

    async def unconfigured(session):
        assert {t.name for t in (await session.list_tools()).tools} == \
            {"speak", "fetch_replies", "wait_for_replies", "ack_replies", "get_stage"}
        return await session.call_tool("fetch_replies", {})
    missing = run_session(server_params({"BUTAI_LOCAL_JSON": str(tmp_path / "none.json")}), unconfigured)
    assert missing.is_error and "no stage given" in missing.content[0].text


def test_speak_refuses_unknown_arguments_and_lists_the_stage_characters_expressions(local_runtime, tmp_path):
    import json as _json

    from chalicelib import context
    from chalicelib.config import Settings
    # a stage whose character is ママ (赤尾妙子): her expressions, not hiyori's
    service = context.build(Settings(aws_endpoint=local_runtime.info["aws_endpoint"])).stage
    created = service.create_stage("mama", "赤尾妙子")
    path = tmp_path / "local.json"
    api = local_runtime.info["api_url"]
    path.write_text(_json.dumps({"api_url": api, "aws_endpoint": local_runtime.info["aws_endpoint"],
                                 "pid": local_runtime.info["pid"], "stages": {"mama": {
                                     "stage_id": created.stage_id, "agent_key": created.agent_key,
                                     "player_key": created.player_key, "stage_url": ""}}}), encoding="utf-8")

    async def body(session):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        typo = await session.call_tool("speak", {"text": "いらっしゃい", "expresion": "smile"})
        extra = await session.call_tool("fetch_replies", {"limit": 5})
        ok = await session.call_tool("speak", {"text": "いらっしゃい", "expression": "angry"})
        return tools, typo, extra, ok, session

    params = server_params({"BUTAI_LOCAL_JSON": str(path), "BUTAI_STAGE": "mama"})
    tools, typo, extra, ok, _ = run_session(params, body)
    speak = tools["speak"]
    assert "angry" in speak.description and "determined" not in speak.description and "ママ" in speak.description
    assert "angry" in speak.input_schema["properties"]["expression"]["description"]
    assert speak.input_schema["additionalProperties"] is False
    assert typo.is_error and "'expresion'" in typo.content[0].text and "expression" in typo.content[0].text
    assert extra.is_error and "'limit'" in extra.content[0].text
    assert payload(ok)["expression"] == "angry"
    # the typo showed nothing
    view = service.get_stage(created.stage_id, created.agent_key)
    assert [e.text for e in view.log] == ["いらっしゃい"]


def test_the_instructions_say_that_replies_are_untrusted():
    from butai.mcp_server import FETCH_DESCRIPTION, INSTRUCTIONS
    for text in (INSTRUCTIONS, FETCH_DESCRIPTION):
        assert "untrusted" in text and "instruction" in text


def test_wait_for_replies_waits_inside_one_call(fresh_stage):
    async def body(session):
        tool = {t.name: t for t in (await session.list_tools()).tools}["wait_for_replies"]
        assert "once" in tool.description.lower() and "timeout" in tool.input_schema["properties"]
        nothing = payload(await session.call_tool("wait_for_replies", {"timeout": 1}))

        async def answer_soon():
            await anyio.sleep(0.5)
            await anyio.to_thread.run_sync(fresh_stage.reply, "待ってた？")
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(answer_soon)
            woken = payload(await session.call_tool("wait_for_replies", {"timeout": 60}))
        again = payload(await session.call_tool("fetch_replies", {}))
        too_long = await session.call_tool("wait_for_replies", {"timeout": 100000})
        return nothing, woken, again, too_long

    env = {"BUTAI_LOCAL_JSON": str(fresh_stage.local_json), "BUTAI_STAGE": "agent"}
    nothing, woken, again, too_long = run_session(server_params(env), body, timeout=90)
    assert nothing == {"replies": []}
    assert [r["text"] for r in woken["replies"]] == ["待ってた？"]
    assert again == {"replies": []}          # the waited reply was claimed: fetch-once holds
    assert too_long.is_error
    assert fresh_stage.held() is None        # and acknowledged by the host's next call


def test_a_server_killed_before_its_result_is_written_leaves_the_reply_to_its_lease(fresh_stage):
    """The reply is claimed, but the server dies before the result reaches the host: nothing is
    acknowledged, so the lease brings the reply back (not lost)."""
    async def body(session):
        await anyio.to_thread.run_sync(fresh_stage.reply, "届かなかった返事")
        result = await session.call_tool("fetch_replies", {})
        return result

    # The server process kills itself after the stage answered and before the result is written.
    script = ("import os, signal, butai.mcp_server as m\n"
              "original = m.Receipts.returned\n"
              "def dying(self, request_id, replies):\n"
              "    if replies: os.kill(os.getpid(), signal.SIGKILL)\n"
              "    return original(self, request_id, replies)\n"
              "m.Receipts.returned = dying\n"
              "m.main()\n")
    params = StdioServerParameters(command=sys.executable, args=["-c", script], cwd=str(ROOT),
                                   env={"PYTHONPATH": str(ROOT), "BUTAI_LOCAL_JSON": str(fresh_stage.local_json),
                                        "BUTAI_STAGE": "agent"})
    with pytest.raises(ExceptionGroup):      # the server is gone: the session cannot finish
        run_session(params, body, timeout=30)
    assert fresh_stage.held() is not None   # claimed, held, not acknowledged: it comes back after the lease


def test_a_result_the_host_never_followed_with_a_call_is_left_to_its_lease(fresh_stage):
    """Before: acknowledged once handed to the SDK's writer, so a host that died with the result in its pipe
    lost the reply.  Now the host's next call is what acknowledges: a session that ends right after the
    result (as a killed host's does) leaves the reply leased, and it comes back; a new server takes the
    ids the host passes as `ack`."""
    env = {"BUTAI_LOCAL_JSON": str(fresh_stage.local_json), "BUTAI_STAGE": "agent"}

    async def receive_and_vanish(session):
        await anyio.to_thread.run_sync(fresh_stage.reply, "最後の結果")
        return payload(await session.call_tool("fetch_replies", {}))

    got = run_session(server_params(env), receive_and_vanish)
    [reply] = got["replies"]
    assert fresh_stage.held() is not None          # not acknowledged: its lease brings it back

    async def after_a_restart(session):
        return payload(await session.call_tool("fetch_replies", {"ack": [reply["id"]]})), \
            await session.call_tool("fetch_replies", {"ack": ["not-an-id"]})

    again, bad = run_session(server_params(env), after_a_restart)
    assert again == {"replies": []} and fresh_stage.held() is None
    assert bad.is_error and "ack" in bad.content[0].text


def test_a_call_made_while_another_waits_acknowledges_nothing(fresh_stage):
    """A host that calls concurrently may not have read a result when its next call arrives: only a call
    made while none of the host's requests is waiting counts as having received what was written."""
    env = {"BUTAI_LOCAL_JSON": str(fresh_stage.local_json), "BUTAI_STAGE": "agent"}

    async def body(session):
        results = []

        async def wait(timeout):
            results.append(payload(await session.call_tool("wait_for_replies", {"timeout": timeout})))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(wait, 12)
            tasks.start_soon(wait, 8)
            await anyio.sleep(1)                   # both waiting
            await anyio.to_thread.run_sync(fresh_stage.reply, "どちらかに届く")
            with anyio.fail_after(20):
                while not results:
                    await anyio.sleep(0.05)
            # One wait returned the reply; the other still waits.  A call made now proves nothing.
            await session.call_tool("get_stage", {})
            held_while_waiting = await anyio.to_thread.run_sync(fresh_stage.held)
        # Both answered: the next call acknowledges what was written.
        await session.call_tool("get_stage", {})
        return results, held_while_waiting, await anyio.to_thread.run_sync(fresh_stage.held)

    results, held_while_waiting, held_after = run_session(server_params(env), body)
    assert sorted(len(r["replies"]) for r in results) == [0, 1]
    assert held_while_waiting is not None and held_after is None


def test_ack_replies_acknowledges_by_id(fresh_stage):
    env = {"BUTAI_LOCAL_JSON": str(fresh_stage.local_json), "BUTAI_STAGE": "agent"}

    async def body(session):
        await anyio.to_thread.run_sync(fresh_stage.reply, "確認して終わる")
        [reply] = payload(await session.call_tool("fetch_replies", {}))["replies"]
        return payload(await session.call_tool("ack_replies", {"ids": [reply["id"]]})), reply["id"]

    acked, rid = run_session(server_params(env), body)
    assert acked["acked"] == [rid] and fresh_stage.held() is None


def test_a_server_whose_host_has_gone_stops_waiting_and_claims_nothing(fresh_stage):
    """The host closes its side while wait_for_replies waits: nothing could acknowledge what the wait would
    claim, so the server ends at once (before: it went on waiting for the whole timeout and claimed the next
    reply for nobody, which then waited out a lease), and the next agent gets the reply at once."""
    import subprocess
    import time

    from butai.client import Stage
    proc = subprocess.Popen([sys.executable, "-m", "butai_tools.cli", "mcp"], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=fresh_stage.env(BUTAI_STAGE="agent"))
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "wait_for_replies", "arguments": {"timeout": 60}}}]
    for message in messages:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        if message.get("id") == 1:
            assert b'"id":1' in proc.stdout.readline()        # initialized
    time.sleep(1.0)                                            # the wait is under way
    proc.stdin.close()
    started = time.monotonic()
    assert proc.wait(timeout=30) == 0
    assert time.monotonic() - started < 20
    fresh_stage.reply("誰も待っていない")
    [reply] = Stage(fresh_stage.api_url, fresh_stage.stage_id, fresh_stage.agent_key).fetch_replies()
    assert reply.deliveries == 1                               # nobody claimed it before


def test_receipts_count_only_results_the_host_was_sent_and_calls_made_after_them():
    """The bookkeeping alone, line by line as the pipe carries them."""
    from butai.mcp_server import Receipts
    from butai.protocol import Reply

    def reply(rid):
        return Reply(id=rid, text="x", created_at="t")

    def call(rid, name="get_stage"):
        return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": name}})

    def answer(rid, error=False):
        return json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": [], "isError": error}})

    receipts = Receipts()
    receipts.host_sent(call(1, "fetch_replies"))
    receipts.returned("1", [reply("A")])
    assert receipts.due() == []                       # not written yet
    receipts.server_wrote(answer(1))
    assert receipts.due() == []                       # written, not yet followed by a call
    receipts.host_sent(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress"}))
    receipts.host_sent(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}))
    assert receipts.due() == []                       # a ping or a notification proves nothing
    receipts.server_wrote(json.dumps({"jsonrpc": "2.0", "id": 2, "result": {}}))
    receipts.host_sent(call(3))
    assert receipts.due() == ["A"]                    # the host's next call
    receipts.acknowledged(["A"])
    receipts.server_wrote(answer(3))
    # A result replaced by an error carried nothing; a reply-carrying result is not counted by a call
    # made while another of the host's calls waits.
    receipts.host_sent(call(4, "fetch_replies"))
    receipts.returned("4", [reply("B")])
    receipts.server_wrote(answer(4, error=True))
    receipts.host_sent(call(5, "wait_for_replies"))
    receipts.returned("5", [reply("C")])
    receipts.host_sent(call(6, "wait_for_replies"))
    receipts.server_wrote(answer(5))
    receipts.host_sent(call(7))                       # 6 still waits
    assert receipts.due() == [] and not receipts.only_fetching()
    receipts.server_wrote(answer(7))
    assert receipts.only_fetching()
    receipts.server_wrote(answer(6))
    receipts.host_sent(call(8))
    assert receipts.due() == ["C"]
