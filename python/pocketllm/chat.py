"""Chat completions in OpenAI's shapes, computed as `pocketllm serve`
computes /v1/chat/completions: the messages rendered through the
checkpoint's own chat template, tool calls and response_format enforced by
the same grammars (a think block left free before them), the reply split
into reasoning and content and parsed into tool calls by the library's
parser.  The same request gives the server's answer."""
from __future__ import annotations

import base64
import contextlib
import ctypes
import json
import os
import urllib.parse
from ctypes import byref, c_char_p, c_size_t, c_void_p
from typing import Any, Dict, List, Optional

from . import _native as N
from ._call import check
from ._text import partial_tail
from .errors import ContextFullError, InvalidArgumentError, UnsupportedError

TOOLS_NONE, TOOLS_UNSUPPORTED, TOOLS_SUPPORTED = 0, 1, 2
_FLAG_PARALLEL, _FLAG_FOR_AUTO = 1, 2


class ChatTemplate:
    """A parsed chat template with what it says about its models."""

    def __init__(self, source: str, bos_text: Optional[str], eos_text: Optional[str]):
        data = source.encode("utf-8")
        h = N.P()
        check(N.lib.pocketllm_chat_template_new(data, len(data), byref(h)))
        self.handle = h
        caps = N.ChatCaps()
        N.lib.pocketllm_chat_template_caps(h, byref(caps))
        self.think_tags = bool(caps.think_tags)
        self.tool_format = caps.tool_format
        self.tool_family = N.text(caps.tool_family)
        self.trigger = None if caps.trigger is None else N.text(caps.trigger)
        # it writes a call's arguments as they are: they stay JSON text
        self.args_as_text = bool(N.lib.pocketllm_chat_template_arguments_as_text(h))
        self.bos_text = bos_text
        self.eos_text = eos_text

    def close(self) -> None:
        if self.handle:
            N.lib.pocketllm_chat_template_free(self.handle)
            self.handle = None

    def render(self, messages_json: str, tools_json: Optional[str], enable_thinking: int,
               extra_json: Optional[str]) -> str:
        o = N.lib.pocketllm_chat_default_options()
        o.add_generation_prompt = 1
        o.enable_thinking = enable_thinking
        o.bos_token = self.bos_text.encode() if self.bos_text is not None else None
        o.eos_token = self.eos_text.encode() if self.eos_text is not None else None
        o.tools_json = tools_json.encode() if tools_json is not None else None
        o.extra_json = extra_json.encode() if extra_json is not None else None
        out = c_void_p()
        n = c_size_t()
        st = N.lib.pocketllm_chat_render_json(self.handle, messages_json.encode(), byref(o), byref(out), byref(n))
        if st:
            raise InvalidArgumentError("the chat template refused the conversation: " + N.last_error(), st)
        try:
            return ctypes.string_at(out.value, n.value).decode("utf-8")
        finally:
            N.lib.pocketllm_chat_free(out)


def load_template(model, path: Optional[str]) -> ChatTemplate:
    """The model's template: the file at path, else the GGUF's
    tokenizer.chat_template; its BOS/EOS texts from the vocabulary."""
    from .host import gguf_keys
    bos, eos = "tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"
    meta = gguf_keys(model.path, ["tokenizer.chat_template", bos, eos])
    if path is not None:
        with open(path, "r", encoding="utf-8") as f:
            source = f.read()
    else:
        source = meta.get("tokenizer.chat_template")
        if not isinstance(source, str):
            raise UnsupportedError("the checkpoint has no chat template (tokenizer.chat_template); open the model "
                                   "with chat_template=FILE", 4)
    return ChatTemplate(source, meta.get(bos + ".text"), meta.get(eos + ".text"))


class _Media:
    """The images and audio clips of a conversation, decoded, in the order
    their markers appear; freed by close()."""

    def __init__(self, model):
        self.model = model
        self.items = []  # (kind, handle)

    def _need(self, where: str, tower: str, has: bool, what: str) -> None:
        if not self.model._mm or not has:
            raise InvalidArgumentError(f"{where}: the model was opened without {tower} (mmproj=...): it takes no "
                                       f"{what}", 1)

    def image(self, part: dict, where: str) -> None:
        from .model import _load_media
        self._need(where, "a vision tower", self.model.has_vision, "images")
        iu = part.get("image_url")
        url = iu.get("url") if isinstance(iu, dict) else iu
        if not isinstance(url, str) or not url:
            raise InvalidArgumentError(f"{where}.image_url must hold a 'url'", 1)
        low = url[:8].lower()
        if low.startswith("data:"):
            head, _, data = url.partition(",")
            if ";base64" not in head.lower():
                raise InvalidArgumentError(f"{where}: a data: URL must be base64 (data:image/png;base64,...)", 1)
            src = base64.b64decode(data, validate=False)
        elif low.startswith("file://"):
            path = urllib.parse.unquote(url[7:])
            src = path[len("localhost"):] if path.startswith("localhost/") else path
        elif low.startswith(("http://", "https://")):
            raise InvalidArgumentError(f"{where}: remote image URLs are not fetched: pass a data: URL or a path", 1)
        else:
            src = url  # a path on this machine
        self.items.append(("image", _load_media("image", src)))

    def audio(self, part: dict, where: str) -> None:
        from .model import _load_media
        self._need(where, "an audio tower", self.model.has_audio, "audio")
        ia = part.get("input_audio")
        data = ia.get("data") if isinstance(ia, dict) else None
        if not isinstance(data, str):
            raise InvalidArgumentError(f"{where}.input_audio must hold base64 'data'", 1)
        self.items.append(("audio", _load_media("audio", base64.b64decode(data, validate=False))))

    def array(self):
        arr = (N.Media * max(len(self.items), 1))()
        for i, (kind, h) in enumerate(self.items):
            if kind == "image":
                arr[i].image = h
            else:
                arr[i].audio = h
        return arr, len(self.items)

    def close(self) -> None:
        for kind, h in self.items:
            (N.lib.pocketllm_image_free if kind == "image" else N.lib.pocketllm_audio_free)(h)
        self.items = []


def _content(v, where: str, media: _Media):
    """A message's content as the server flattens it: a string, None, or the
    parts joined -- a newline between text parts, none next to an image's or
    clip's marker."""
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, list):
        out = ""
        after_marker = False
        marker = N.text(N.lib.pocketllm_media_marker())
        for j, part in enumerate(v):
            pw = f"{where}[{j}]"
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise InvalidArgumentError(f"'{pw}' must be an object with a 'type'", 1)
            if part["type"] == "image_url":
                media.image(part, pw)
                out += marker
                after_marker = True
                continue
            if part["type"] == "input_audio":
                media.audio(part, pw)
                out += marker
                after_marker = True
                continue
            if part["type"] != "text" or not isinstance(part.get("text"), str):
                raise InvalidArgumentError(f"'{pw}.type' {part['type']!r} is not supported (text, image_url and "
                                           f"input_audio parts are)", 1)
            if not after_marker and out:
                out += "\n"
            after_marker = False
            out += part["text"]
        return out
    raise InvalidArgumentError(f"'{where}' must be a string, null or an array of parts", 1)


def _normalise(messages, media: _Media, args_as_text: bool = False) -> List[Dict[str, Any]]:
    if not isinstance(messages, (list, tuple)) or not messages:
        raise InvalidArgumentError("messages must be a non-empty list of message dicts", 1)
    out = []
    for i, m in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise InvalidArgumentError(f"'{where}' must be a dict with a 'role'", 1)
        role = "system" if m["role"] == "developer" else m["role"]
        if role not in ("system", "user", "assistant", "tool"):
            raise InvalidArgumentError(f"'{where}.role' {m['role']!r} is not one of system, developer, user, "
                                       f"assistant, tool", 1)
        o: Dict[str, Any] = {"role": role, "content": _content(m.get("content"), where + ".content", media)}
        for k, v in m.items():
            if k in ("role", "content") or v is None:
                continue
            if k in ("name", "tool_call_id", "reasoning_content"):
                o[k] = v
            elif k == "tool_calls":
                calls = json.loads(json.dumps(v))
                # (the object, which most templates format; the text for
                # those that write it as it is)
                for c in calls if not args_as_text else ():
                    fn = c.get("function") if isinstance(c, dict) else None
                    if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                        try:
                            obj = json.loads(fn["arguments"])
                        except ValueError:
                            obj = None
                        if isinstance(obj, dict):
                            fn["arguments"] = obj
                o["tool_calls"] = calls
                if o["content"] is None:
                    o["content"] = ""
            else:
                raise InvalidArgumentError(f"unknown field '{where}.{k}'", 1)
        out.append(o)
    return out


def _gbnf_until(name: str, stop: str) -> str:
    """Rules NAME-k: any text up to and including stop (the automaton of its
    prefixes), as the server writes them."""
    lines = []
    L = len(stop)
    for k in range(L):
        line = f"{name}-{k} ::= "
        special = []
        first = True
        for ch in stop:
            if ch in special:
                continue
            special.append(ch)
            nxt = 0
            for m in range(k + 1, 0, -1):
                if stop[m - 1] != ch or m - 1 > k:
                    continue
                if stop[:m - 1] == stop[k - (m - 1):k]:
                    nxt = m
                    break
            line += ("" if first else " | ") + f'"\\x{ord(ch):02x}"'
            first = False
            if nxt < L:
                line += f" {name}-{nxt}"
        line += " | [^" + "".join(f"\\x{ord(c):02x}" for c in special) + f"] {name}-0"
        lines.append(line)
    return "\n".join(lines) + "\n"


def _split(tmpl: ChatTemplate, prompt: str, text: str):
    sp = N.ChatSplit()
    data = text.encode("utf-8")
    check(N.lib.pocketllm_chat_split_reasoning(tmpl.handle, prompt.encode("utf-8"), data, len(data), byref(sp)))
    try:
        content = ctypes.string_at(sp.content, sp.content_len).decode("utf-8", "replace") if sp.content else ""
        reasoning = (ctypes.string_at(sp.reasoning, sp.reasoning_len).decode("utf-8", "replace")
                     if sp.has_reasoning and sp.reasoning else None)
        return content, reasoning, bool(sp.has_reasoning)
    finally:
        N.lib.pocketllm_chat_split_free(byref(sp))


def _parse_calls(tmpl: ChatTemplate, tools_json: str, content: str, seed: int):
    tp = N.P()
    data = tools_json.encode()
    check(N.lib.pocketllm_tool_parser_new(tmpl.handle, data, len(data), seed, byref(tp)))
    try:
        body = content.encode("utf-8")
        N.lib.pocketllm_tool_parser_feed(tp, body, len(body), N.TOOL_EVENT_FN(), None)
        parsed = bool(N.lib.pocketllm_tool_parser_finish(tp, N.TOOL_EVENT_FN(), None))
        n = N.lib.pocketllm_tool_parser_n_calls(tp)
        rest = N.lib.pocketllm_tool_parser_content(tp)
        calls = []
        for k in range(n):
            name, cid, args = c_char_p(), c_char_p(), c_char_p()
            N.lib.pocketllm_tool_parser_call(tp, k, byref(name), byref(cid), byref(args))
            calls.append({"id": N.text(cid.value), "type": "function",
                          "function": {"name": N.text(name.value), "arguments": N.text(args.value)}})
        return parsed, calls, (None if rest is None else rest.decode("utf-8", "replace"))
    finally:
        N.lib.pocketllm_tool_parser_free(tp)


def chat_completion(model, messages, tools=None, tool_choice=None, response_format=None, max_tokens=None,
                    temperature: float = 1.0, top_p: float = 1.0, top_k: int = 0, min_p: float = 0.0,
                    repeat_penalty: Optional[float] = None, presence_penalty: Optional[float] = None,
                    frequency_penalty: Optional[float] = None, seed: Optional[int] = None, stop=None,
                    parallel_tool_calls: bool = True, chat_template_kwargs: Optional[dict] = None,
                    stream: bool = False):
    """A chat completion as /v1/chat/completions answers it (OpenAI's
    sampling defaults: temperature 1, top_p 1, no top-k or min-p): returns
    {"object": "chat.completion", "choices": [{"index": 0, "message":
    {"role", "content", ["reasoning_content"], ["tool_calls"]},
    "finish_reason"}], "usage"}.  tools / tool_choice ("auto", "none",
    "required", {"type": "function", "function": {"name"}}) and
    response_format ({"type": "json_object"} or {"type": "json_schema",
    "json_schema": {"schema": ...}}) are enforced by grammars, as the server
    does.  stream=True returns an iterator of "chat.completion.chunk" dicts
    instead, as the server streams them (the request is checked when the
    iteration starts)."""
    args = (tools, tool_choice, response_format, max_tokens, temperature, top_p, top_k, min_p, repeat_penalty,
            presence_penalty, frequency_penalty, seed, stop, parallel_tool_calls, chat_template_kwargs)
    if stream:
        return _stream_chat(model, messages, args)
    with _request(model, messages, args) as (tmpl, run):
        for _ in run.pieces():
            pass
        return _whole(model, tmpl, run)


def _template(model) -> "ChatTemplate":
    model._need()
    if model._template is None:
        model._template = load_template(model, model.chat_template_path)
    return model._template


@contextlib.contextmanager
def _request(model, messages, args):
    """The model held, the request prepared (its media decoded): (template,
    run); everything freed on the way out."""
    with model._lock:
        tmpl = _template(model)
        media = _Media(model)
        run = None
        try:
            run = _prepare(model, tmpl, media, _normalise(messages, media, tmpl.args_as_text), *args)
            yield tmpl, run
        finally:
            media.close()
            if run is not None:
                run.close()


def _stream_chat(model, messages, args):
    """chat(stream=True): the server's chunks for the same request, as dicts;
    joined they are chat()'s message (the model is held until the iteration
    ends)."""
    with _request(model, messages, args) as (tmpl, run):
        yield from _chunks(model, tmpl, run)


class _Run:
    """A prepared chat generation: the prompt, its ids, the grammar, the
    sampling; pieces() generates."""

    def __init__(self, model, prompt, ids, prefill, grammar, sampling, max_gen, stop, reply_tools):
        self.model, self.prompt, self.ids, self.prefill = model, prompt, ids, prefill
        self.grammar, self.sampling, self.max_gen, self.stop = grammar, sampling, max_gen, stop
        self.reply_tools = reply_tools
        self.result: list = []

    def pieces(self):
        return self.model._generate(None, self.max_gen, self.sampling, self.stop, None, None, self.result,
                                    grammar_handle=self.grammar, prompt_ids=self.ids, accept_prompt=False,
                                    prefill=self.prefill)

    def close(self):
        if self.grammar is not None:
            N.lib.pocketllm_grammar_free(self.grammar)
            self.grammar = None


def _prepare(model, tmpl, media, msgs, tools, tool_choice, response_format, max_tokens, temperature, top_p, top_k,
             min_p, repeat_penalty, presence_penalty, frequency_penalty, seed, stop, parallel_tool_calls,
             chat_template_kwargs) -> _Run:
    """The request checked and turned into a _Run, as the server prepares it
    (the messages normalised and their media decoded)."""
    from .model import _Sampling
    kwargs = dict(chat_template_kwargs or {})
    enable_thinking = -1
    if "enable_thinking" in kwargs:
        et = kwargs.pop("enable_thinking")
        if not isinstance(et, bool):
            raise InvalidArgumentError("'chat_template_kwargs.enable_thinking' must be a boolean", 1)
        enable_thinking = int(et)
    extra = json.dumps(kwargs) if chat_template_kwargs is not None else None
    # ---- what shape the reply must have ------------------------------
    choice = "auto" if tools else "none"
    named = None
    if isinstance(tool_choice, str):
        if tool_choice not in ("none", "auto", "required"):
            raise InvalidArgumentError("'tool_choice' must be \"none\", \"auto\", \"required\" or a function", 1)
        choice = tool_choice
    elif tool_choice is not None:
        try:
            named = tool_choice["function"]["name"]
        except (TypeError, KeyError):
            raise InvalidArgumentError("'tool_choice' names no function", 1) from None
        choice = "named"
    if tool_choice is not None and not tools and choice not in ("none", "auto"):
        raise InvalidArgumentError("'tool_choice' asks for a call but no tools are given", 1)
    if not tools:
        choice = "none"
    if response_format is not None and choice != "none":
        raise InvalidArgumentError("'response_format' together with tools is not supported", 1)
    tools_json = None
    gbnf = None
    gbnf_think = True
    triggers: List[str] = []
    if choice != "none":
        if tmpl.tool_format != TOOLS_SUPPORTED:
            raise UnsupportedError("'tools': " + ("the model's chat template takes no tools"
                                                  if tmpl.tool_format == TOOLS_NONE else
                                                  "the chat template's tool-call format is not supported"), 4)
        tools_json = json.dumps(tools, separators=(",", ":"), ensure_ascii=False)
        flags = (_FLAG_PARALLEL if parallel_tool_calls else 0) | (_FLAG_FOR_AUTO if choice == "auto" else 0)
        out = c_void_p()
        data = tools_json.encode()
        check(N.lib.pocketllm_tools_grammar(tmpl.handle, data, len(data),
                                            named.encode() if named else None, flags, byref(out)))
        gbnf = ctypes.string_at(out.value).decode()
        N.lib.pocketllm_free(out)
        if choice == "auto" and tmpl.trigger != "":
            gbnf_think = False
            triggers = [tmpl.trigger] if tmpl.trigger else ['{"name"', '{ "name"']
    elif response_format is not None:
        kind = response_format.get("type") if isinstance(response_format, dict) else None
        if kind == "json_object":
            schema = None
        elif kind == "json_schema":
            schema = (response_format.get("json_schema") or {}).get("schema")
        elif kind == "text":
            schema, kind = None, None
        else:
            raise InvalidArgumentError("'response_format.type' must be text, json_object or json_schema", 1)
        if kind is not None:
            text = json.dumps(schema).encode() if schema is not None else None
            out = c_void_p()
            check(N.lib.pocketllm_json_schema_to_gbnf(text, len(text) if text else 0, byref(out)))
            gbnf = ctypes.string_at(out.value).decode()
            N.lib.pocketllm_free(out)
    # ---- the prompt --------------------------------------------------------
    prompt = tmpl.render(json.dumps(msgs, ensure_ascii=False), tools_json, enable_thinking, extra)
    has_bos = bool(tmpl.bos_text) and prompt.startswith(tmpl.bos_text)
    prefill = None
    if media.items:
        # the composition the server evaluates: text pieces and each
        # image's or clip's tokens (-1 in ids)
        arr, n_media = media.array()
        data = prompt.encode("utf-8")
        cnt = ctypes.c_uint32()
        check(N.lib.pocketllm_media_list_tokens(model._model, model._mm, data, len(data), arr, n_media,
                                                int(not has_bos), 1, None, 0, byref(cnt)))
        ids = [-1] * cnt.value

        def prefill(sess):
            check(N.lib.pocketllm_session_eval_media_list(sess, 0, model._mm, data, len(data), arr, n_media,
                                                          int(not has_bos), 1))
    else:
        ids = model.tokenize(prompt, add_special=not has_bos, parse_special=True)
    if not ids:
        raise InvalidArgumentError("the prompt has no tokens", 1)
    if len(ids) >= model.n_ctx:
        raise ContextFullError(f"the prompt is {len(ids)} tokens; the context holds {model.n_ctx}, with at least "
                               f"one left for the completion", 7)
    room = model.n_ctx - len(ids)
    if max_tokens is not None and max_tokens < 1:
        raise InvalidArgumentError("max_tokens must be 1 or more", 1)
    if max_tokens is not None and max_tokens > room:  # (as the server refuses it)
        raise ContextFullError(f"the prompt is {len(ids)} tokens and max_tokens {max_tokens}; the context holds "
                               f"{model.n_ctx}", 7)
    max_gen = max_tokens if max_tokens is not None and max_tokens < room else room
    # ---- the grammar, wrapped as the server wraps it ------------------------
    g = None
    if gbnf is not None:
        trimmed = prompt.rstrip(" \t\n\r")
        closed = trimmed.endswith("</think>")
        open_think = False
        if tmpl.think_tags and not closed:
            _, _, open_think = _split(tmpl, prompt, "x")
        if gbnf_think and tmpl.think_tags and not closed:
            head = ("pl-start ::= pl-think-0 [ \\t\\n]{0,4} pl-body\n" if open_think else
                    "pl-start ::= (\"<think>\" pl-think-0 [ \\t\\n]{0,4})? pl-body\n")
            head += _gbnf_until("pl-think", "</think>")
        else:
            head = "pl-start ::= pl-body\n"
        text = head + "pl-body ::= root\n" + gbnf + "\n"
        g = N.P()
        check(N.lib.pocketllm_grammar_new(model._model, text.encode(), b"pl-start", byref(g)))
        if triggers:
            arr = (c_char_p * len(triggers))(*[t.encode() for t in triggers])
            check(N.lib.pocketllm_grammar_set_triggers(g, arr, len(triggers)))
            if tmpl.think_tags:
                check(N.lib.pocketllm_grammar_set_trigger_zone(g, b"<think>", b"</think>", int(open_think)))
    sampling = _Sampling(temperature, top_k, top_p, min_p, repeat_penalty, presence_penalty, frequency_penalty,
                         -1, seed)
    # the tools the reply is parsed against (a template whose prompt opens
    # the reply's first part: always, for its text marker)
    reply_tools = tools_json if choice != "none" else ("[]" if tmpl.trigger == "" else None)
    return _Run(model, prompt, ids, prefill, g, sampling, max_gen, stop, reply_tools)


def _usage(run: _Run, done) -> dict:
    return {"prompt_tokens": len(run.ids), "completion_tokens": len(done.ids),
            "total_tokens": len(run.ids) + len(done.ids)}


def _whole(model, tmpl: ChatTemplate, run: _Run) -> dict:
    """The chat.completion of a finished run."""
    done = run.result[0]
    finish = done.finish_reason
    content, reasoning, has_reasoning = _split(tmpl, run.prompt, done.text)
    message: Dict[str, Any] = {"role": "assistant"}
    reply_tools = run.reply_tools
    calls = None
    if reply_tools is not None:
        parsed, calls, rest = _parse_calls(tmpl, reply_tools, content, int.from_bytes(os.urandom(8), "little"))
        if parsed and not calls and tmpl.trigger == "":
            content, calls = rest or "", None
        elif not parsed or not calls:
            calls = None
            if not parsed and finish == "tool_calls":
                finish = "stop"
        else:
            content = rest
            if finish != "length":
                finish = "tool_calls"
    message["content"] = content
    if calls:
        message["tool_calls"] = calls
    if has_reasoning:
        message["reasoning_content"] = reasoning
    return {"object": "chat.completion", "model": os.path.basename(model.path),
            "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": _usage(run, done)}


_TAGS = ("</think>", "<think>")


def _stable(s: str, reasoning: bool) -> str:
    """s without an end that may still grow into a think tag (and, in
    reasoning, without trailing newlines), as the server's splitter holds
    them back."""
    s = s[:len(s) - partial_tail(s, _TAGS)]
    return s.rstrip("\n") if reasoning else s


class _Think:
    """The streaming reasoning split (the server's srv_think.c): the text so
    far split whole each time, and what is certain handed out."""

    def __init__(self, tmpl: ChatTemplate, prompt: str):
        self.tmpl, self.prompt = tmpl, prompt
        self.text, self.sent_r, self.sent_c = "", "", ""

    @staticmethod
    def _emit(sent: str, now: str):
        if len(now) <= len(sent) or not now.startswith(sent):
            return sent, ""
        return now, now[len(sent):]

    def push(self, piece: str, final: bool):
        self.text += piece
        content, reasoning, _ = _split(self.tmpl, self.prompt, self.text)
        reasoning = reasoning or ""
        if not final:
            if "</think>" not in self.text:
                reasoning = _stable(reasoning, True)
            content = _stable(content, False)
            if not content.strip(" \t\r\n") and not self.sent_c:
                content = ""
        self.sent_r, r = self._emit(self.sent_r, reasoning) if reasoning else (self.sent_r, "")
        self.sent_c, c = self._emit(self.sent_c, content) if content else (self.sent_c, "")
        return r, c


def _chunks(model, tmpl: ChatTemplate, run: _Run):
    """The chat.completion.chunk dicts of a run as it generates: the role
    first, then reasoning and content deltas, tool calls (the first delta of
    each with index, id, type, name and arguments "", later ones argument
    fragments), and a last chunk with the finish_reason."""
    name = os.path.basename(model.path)

    def chunk(delta, finish=None):
        return {"object": "chat.completion.chunk", "model": name,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    think = _Think(tmpl, run.prompt)
    parser = None
    events: list = []
    if run.reply_tools is not None:
        parser = N.P()
        data = run.reply_tools.encode()
        check(N.lib.pocketllm_tool_parser_new(tmpl.handle, data, len(data), int.from_bytes(os.urandom(8), "little"),
                                              byref(parser)))

    def on_event(_user, evp):
        e = evp.contents
        text = ctypes.string_at(e.text, e.len).decode("utf-8", "replace") if e.text and e.len else ""
        if e.kind == 0:
            events.append({"content": text})
        elif e.kind == 1:
            events.append({"tool_calls": [{"index": e.index, "id": N.text(e.id), "type": "function",
                                           "function": {"name": N.text(e.name), "arguments": ""}}]})
        elif text:
            events.append({"tool_calls": [{"index": e.index, "function": {"arguments": text}}]})

    cb = N.TOOL_EVENT_FN(on_event)
    n_calls = 0
    botched = False
    try:
        yield chunk({"role": "assistant", "content": ""})
        gen = run.pieces()
        for piece in gen:
            r, c = think.push(piece, False)
            if r:
                yield chunk({"reasoning_content": r})
            if parser is None:
                if c:
                    yield chunk({"content": c})
                continue
            body = c.encode("utf-8")
            N.lib.pocketllm_tool_parser_feed(parser, body, len(body), cb, None)
            while events:
                yield chunk(events.pop(0))
        r, c = think.push("", True)
        if r:
            yield chunk({"reasoning_content": r})
        finish = run.result[0].finish_reason
        if parser is None:
            if c:
                yield chunk({"content": c})
        else:
            body = c.encode("utf-8")
            N.lib.pocketllm_tool_parser_feed(parser, body, len(body), cb, None)
            if not N.lib.pocketllm_tool_parser_finish(parser, cb, None):
                botched = True
            n_calls = N.lib.pocketllm_tool_parser_n_calls(parser)
            while events:
                yield chunk(events.pop(0))
            if botched:
                n = c_size_t()
                rest = N.lib.pocketllm_tool_parser_unsent(parser, byref(n))
                if n.value:
                    yield chunk({"content": ctypes.string_at(rest, n.value).decode("utf-8", "replace")})
                if finish == "tool_calls":
                    finish = "stop"
            elif n_calls and finish != "length":
                finish = "tool_calls"
        last = chunk({}, finish)
        last["usage"] = _usage(run, run.result[0])
        yield last
    finally:
        if parser is not None:
            N.lib.pocketllm_tool_parser_free(parser)
