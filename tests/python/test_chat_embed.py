"""chat and embed against the server on the same checkpoint: the same
request gives the server's message (content, reasoning, tool calls) and
its embeddings, float for float."""
import base64
import json

import pytest

import pocketllm
from conftest import post

TOOLS = [{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city",
          "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 10},
                         "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                         "required": ["city", "unit"], "additionalProperties": False}}},
         {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {
             "tz": {"type": "string", "maxLength": 8}}, "required": ["tz"], "additionalProperties": False}}}]

REQUESTS = [
    {"messages": [{"role": "user", "content": "Tell me a story."}], "max_tokens": 24, "temperature": 0},
    {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], "max_tokens": 20,
     "temperature": 0.8, "seed": 7, "chat_template_kwargs": {"enable_thinking": False}},
    {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": TOOLS, "tool_choice": "required",
     "max_tokens": 80, "temperature": 0.7, "seed": 3, "chat_template_kwargs": {"enable_thinking": False}},
    {"messages": [{"role": "user", "content": "Time?"}], "tools": TOOLS,
     "tool_choice": {"type": "function", "function": {"name": "get_time"}}, "max_tokens": 80, "temperature": 0,
     "parallel_tool_calls": False},
    {"messages": [{"role": "user", "content": "Give JSON."}], "max_tokens": 60, "temperature": 0,
     "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {
         "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}}},
]


def strip_ids(message):
    m = json.loads(json.dumps(message))
    for c in m.get("tool_calls") or []:
        c.pop("id")  # ids are random per response
    return m


@pytest.mark.parametrize("req", range(len(REQUESTS)))
def test_chat_equals_server(qwen3, server, req):
    body = dict(REQUESTS[req], model="m")
    want = post(server, "/v1/chat/completions", body)["choices"][0]
    args = {k: v for k, v in REQUESTS[req].items() if k != "messages"}
    with pocketllm.Model(qwen3, n_ctx=1024, n_threads=1) as m:
        got = m.chat(REQUESTS[req]["messages"], **args)["choices"][0]
    assert strip_ids(got["message"]) == strip_ids(want["message"])
    assert got["finish_reason"] == want["finish_reason"]
    if "tools" in args and args.get("tool_choice") != "auto":
        assert got["message"].get("tool_calls"), got


def reassemble(chunks):
    """A streamed reply joined: (message, finish_reason), checking each call's deltas."""
    msg = {"role": None, "content": "", "reasoning_content": "", "tool_calls": []}
    finish = None
    for ch in chunks:
        assert ch["object"] == "chat.completion.chunk"
        c = ch["choices"][0]
        d = c["delta"]
        if "role" in d:
            assert msg["role"] is None, "the role came twice"
            msg["role"] = d["role"]
        msg["content"] += d.get("content") or ""
        msg["reasoning_content"] += d.get("reasoning_content") or ""
        for t in d.get("tool_calls") or []:
            if t["index"] == len(msg["tool_calls"]):
                assert t["id"] and t["type"] == "function" and t["function"]["name"], t
                assert t["function"]["arguments"] == "", t
                msg["tool_calls"].append({"id": t["id"], "type": t["type"], "function": dict(t["function"])})
            else:
                assert "id" not in t and "name" not in t["function"], t
                msg["tool_calls"][t["index"]]["function"]["arguments"] += t["function"]["arguments"]
        if c["finish_reason"]:
            assert finish is None
            finish = c["finish_reason"]
    return msg, finish


@pytest.mark.parametrize("req", range(len(REQUESTS)))
def test_chat_stream_joins_into_chat(qwen3, req):
    args = {k: v for k, v in REQUESTS[req].items() if k != "messages"}
    args.setdefault("seed", 11)
    with pocketllm.Model(qwen3, n_ctx=1024, n_threads=1) as m:
        whole = m.chat(REQUESTS[req]["messages"], **args)["choices"][0]
        msg, finish = reassemble(m.chat(REQUESTS[req]["messages"], stream=True, **args))
    w = whole["message"]
    assert msg["role"] == "assistant" and finish == whole["finish_reason"]
    assert msg["content"] == (w["content"] or "")
    assert msg["reasoning_content"] == (w.get("reasoning_content") or "")
    assert strip_ids({"tool_calls": msg["tool_calls"]}) == strip_ids({"tool_calls": w.get("tool_calls") or []})


def test_chat_stream_reasoning(qwen3):
    # QwQ's template opens the think block in the prompt: the reply starts
    # as reasoning, which streams as reasoning_content deltas
    from conftest import _env
    qwq = _env("PL_PY_QWQ_TEMPLATE")
    args = dict(max_tokens=40, temperature=0.9, seed=5, chat_template_kwargs={"enable_thinking": True})
    msgs = [{"role": "user", "content": "Think first."}]
    with pocketllm.Model(qwen3, n_ctx=1024, n_threads=1, chat_template=qwq) as m:
        whole = m.chat(msgs, **args)["choices"][0]
        msg, finish = reassemble(m.chat(msgs, stream=True, **args))
    assert whole["message"].get("reasoning_content"), whole
    assert msg["reasoning_content"] == whole["message"]["reasoning_content"]
    assert msg["content"] == (whole["message"]["content"] or "") and finish == whole["finish_reason"]


def test_chat_refusals(qwen3):
    with pocketllm.Model(qwen3, n_ctx=256, n_threads=1) as m:
        with pytest.raises(pocketllm.InvalidArgumentError):
            m.chat([{"role": "wizard", "content": "x"}])
        with pytest.raises(pocketllm.InvalidArgumentError):
            m.chat([{"role": "user", "content": "x"}], tool_choice="required")
        with pytest.raises(pocketllm.ContextFullError):
            m.chat([{"role": "user", "content": "word " * 400}])
        with pytest.raises(pocketllm.ContextFullError):  # room for the prompt, not for max_tokens
            m.chat([{"role": "user", "content": "Hi"}], max_tokens=250)
        with pytest.raises(pocketllm.InvalidArgumentError) as e:  # no mmproj: no images
            m.chat([{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]}])
        assert "vision tower" in str(e.value)
        with pytest.raises(pocketllm.UnsupportedError):
            m.transcribe(b"RIFF")


def f32_bytes(vec):
    import array
    return array.array("f", [float(x) for x in vec]).tobytes()


def test_embed_equals_server(qwen3, server):
    # (base64: the server's float32 bytes exactly)
    texts = ["Hello world", "A longer text about embeddings and vectors.", "x"]
    want = post(server, "/v1/embeddings", {"model": "m", "input": texts, "encoding_format": "base64"})["data"]
    want_dims = post(server, "/v1/embeddings", {"model": "m", "input": "Hello world", "dimensions": 16,
                                                "encoding_format": "base64"})["data"]
    with pocketllm.Model(qwen3, n_ctx=1024, n_threads=1) as m:
        got = m.embed(texts, pooling="mean")
        assert len(got) == 3
        for g, w in zip(got, want):
            assert f32_bytes(g) == base64.b64decode(w["embedding"])
        one = m.embed("Hello world", pooling="mean", dimensions=16)
        assert f32_bytes(one) == base64.b64decode(want_dims[0]["embedding"])
        with pytest.raises(pocketllm.UnsupportedError):
            m.embed("no pooling declared")  # the random qwen3 declares none
