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


def test_chat_refusals(qwen3):
    with pocketllm.Model(qwen3, n_ctx=256, n_threads=1) as m:
        with pytest.raises(pocketllm.InvalidArgumentError):
            m.chat([{"role": "wizard", "content": "x"}])
        with pytest.raises(pocketllm.InvalidArgumentError):
            m.chat([{"role": "user", "content": "x"}], tool_choice="required")
        with pytest.raises(pocketllm.ContextFullError):
            m.chat([{"role": "user", "content": "word " * 400}])
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
