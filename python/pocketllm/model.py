"""pocketllm.Model: one checkpoint opened on one device with one session
(its KV cache), and what runs on it -- generation (whole or streamed, as
`pocketllm run` generates), chat through the checkpoint's own template,
logits, embeddings and perplexity.

A Model belongs to one thread at a time: calls on it from several threads
wait for each other (a lock), while two Models run in parallel (every long
C call releases the GIL).
"""
from __future__ import annotations

import array
import ctypes
import os
import threading
from ctypes import byref, c_float, c_int32, c_size_t
from dataclasses import dataclass, field
from typing import Callable, Iterator, List, Optional, Sequence, Union

from . import _native as N
from ._call import check, grow_call
from ._text import partial_tail
from .errors import ContextFullError, Error, InvalidArgumentError, UnsupportedError

_POOLING = {"none": 0, "mean": 1, "cls": 2, "last": 3}
_POOLING_NAME = {v: k for k, v in _POOLING.items()}


@dataclass
class Completion:
    """What generate() returns.

    text: the generated text (without a stop string that ended it);
    ids: the generated token ids (an end-of-generation id included when one
    ended the reply); prompt_ids: the prompt's ids; finish_reason: "stop"
    (an end-of-generation token, a stop string, or a grammar completed) or
    "length" (max_tokens, or the context is full)."""
    text: str
    ids: List[int]
    prompt_ids: List[int]
    finish_reason: str
    usage: dict = field(default_factory=dict)


@dataclass
class Perplexity:
    """What perplexity() returns: as llama-perplexity computes it."""
    ppl: float
    ppl_err: float
    n_tokens: int
    n_ctx: int
    n_chunks: int
    n_scored: int


def _ids_array(ids: Sequence[int]):
    n = len(ids)
    arr = (c_int32 * max(n, 1))()
    for i, t in enumerate(ids):
        if not isinstance(t, int):
            raise InvalidArgumentError(f"token ids must be ints, not {type(t).__name__}", 1)
        arr[i] = t
    return arr, n


class _Sampling:
    """Sampler parameters: the library's defaults (those of `pocketllm run`)
    where an argument is None."""

    def __init__(self, temperature, top_k, top_p, min_p, repeat_penalty, presence_penalty, frequency_penalty,
                 penalty_last_n, seed):
        p = N.lib.pocketllm_sampler_default_params()
        for name, v in (("temperature", temperature), ("top_k", top_k), ("top_p", top_p), ("min_p", min_p),
                        ("repeat_penalty", repeat_penalty), ("presence_penalty", presence_penalty),
                        ("frequency_penalty", frequency_penalty), ("penalty_last_n", penalty_last_n)):
            if v is not None:
                setattr(p, name, v)
        p.seed = int.from_bytes(os.urandom(8), "little") if seed is None else seed & 0xFFFFFFFFFFFFFFFF
        self.params = p


def kv_type_id(name: str) -> int:
    """The ggml id of a KV cache type by name ("f16", "q8_0", ...)."""
    t = N.lib.pocketllm_kv_type_from_name(str(name).encode())
    if t == 0xFFFFFFFF:
        raise InvalidArgumentError(f"kv_type {name!r}: one of f16, bf16, f32, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl", 1)
    return t


class Model:
    """A GGUF checkpoint opened on one device, with a session of n_ctx positions.

    path: the GGUF file; device: "cpu" (default), "vulkan" or "vulkan:N"
    (see pocketllm.devices()); n_ctx: positions of the KV cache (0: the
    model's training context, at most 4096); n_threads: 0 = the physical
    cores; flash_attn: llama.cpp's flash-attention arithmetic; n_batch: most
    tokens per forward pass (0 = 512); kv_type: the KV cache's type, "f16"
    (default), "bf16", "f32" or a block type kept packed ("q8_0", "q4_0",
    "q4_1", "q5_0", "q5_1", "iq4_nl"; heads of a multiple of 32, CPU only);
    kv_type_v: the V cache's type when it differs (None: kv_type);
    flash_attn None: on exactly when V is quantized (llama.cpp needs it);
    device_memory: the most bytes of the device to use (0 = all);
    progress: called as progress(what, done, total) while weights upload to
    a device; chat_template: a Jinja file chat() uses instead of the
    checkpoint's own (as `pocketllm serve --template`); mmproj: the
    model's vision and/or audio tower (Qwen3-VL, Qwen3-ASR), for images and
    audio in chat() and for transcribe(); image_min_tokens /
    image_max_tokens: an image's token budget (0: 8 and 4096).  Use it as a
    context manager, or call close()."""

    def __init__(self, path: Union[str, os.PathLike], device: str = "cpu", n_ctx: int = 0, n_threads: int = 0,
                 flash_attn: Optional[bool] = None, n_batch: int = 0, kv_type: str = "f16",
                 kv_type_v: Optional[str] = None, device_memory: int = 0,
                 progress: Optional[Callable[[str, int, int], None]] = None,
                 chat_template: Union[str, os.PathLike, None] = None,
                 mmproj: Union[str, os.PathLike, None] = None, image_min_tokens: int = 0,
                 image_max_tokens: int = 0):
        self._model = None
        self._session = None
        self._mm = None
        self._template = None  # the chat template, parsed on first use
        self._lock = threading.RLock()
        self.path = os.fspath(path)
        self.chat_template_path = os.fspath(chat_template) if chat_template is not None else None
        k_id = kv_type_id(kv_type)
        v_id = N.KV_AS_K if kv_type_v is None else kv_type_id(kv_type_v)
        if flash_attn is None:
            flash_attn = N.lib.pocketllm_type_block_size(k_id if kv_type_v is None else v_id) > 1
        mp = N.lib.pocketllm_model_default_params()
        mp.device = None if device in (None, "cpu") else device.encode()
        mp.n_threads = n_threads
        mp.device_memory = device_memory
        cb = None
        if progress is not None:
            def _cb(_user, what, done, total):
                progress(N.text(what), done, total)
            cb = N.PROGRESS_LOAD(_cb)
            mp.progress = cb
        handle = N.P()
        check(N.lib.pocketllm_model_open(self.path.encode(), byref(mp), byref(handle)))
        self._model = handle
        sp = N.lib.pocketllm_session_default_params()
        sp.n_ctx = n_ctx
        sp.n_batch = n_batch
        sp.kv_type = k_id
        sp.kv_type_v = v_id
        sp.n_threads = n_threads
        sp.flash_attn = 1 if flash_attn else 0
        sess = N.P()
        try:
            check(N.lib.pocketllm_session_new(self._model, byref(sp), byref(sess)))
        except Error:
            self.close()
            raise
        self._session = sess
        self.n_ctx = N.lib.pocketllm_session_n_ctx(sess)
        self.n_vocab = N.lib.pocketllm_session_n_vocab(sess)
        self.has_vision = self.has_audio = False
        if mmproj is not None:
            pp = N.lib.pocketllm_mmproj_default_params()
            pp.image_min_tokens = image_min_tokens
            pp.image_max_tokens = image_max_tokens
            mm = N.P()
            try:
                check(N.lib.pocketllm_mmproj_open(self._model, os.fspath(mmproj).encode(), byref(pp), byref(mm)))
            except Error:
                self.close()
                raise
            self._mm = mm
            info = N.MmprojInfo()
            check(N.lib.pocketllm_mmproj_get_info(mm, byref(info)))
            self.has_vision, self.has_audio = bool(info.has_vision), bool(info.has_audio)

    # ---- life --------------------------------------------------------------
    def close(self) -> None:
        """Free the session and the model (idempotent)."""
        with self._lock:
            if self._template is not None:
                self._template.close()
                self._template = None
            if self._mm:
                N.lib.pocketllm_mmproj_close(self._mm)
                self._mm = None
            if self._session:
                N.lib.pocketllm_session_free(self._session)
                self._session = None
            if self._model:
                N.lib.pocketllm_model_close(self._model)
                self._model = None

    def __enter__(self) -> "Model":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _need(self):
        if not self._model:
            raise InvalidArgumentError("the model is closed", 1)
        return self._model

    # ---- facts -------------------------------------------------------------
    @property
    def arch(self) -> str:
        """general.architecture ("qwen3", "llama", ...)."""
        return N.text(N.lib.pocketllm_model_arch(self._need()))

    @property
    def device(self) -> str:
        """The device the model runs on ("cpu", "vulkan:0 (...)")."""
        return N.text(N.lib.pocketllm_model_device(self._need(), None, None))

    @property
    def n_embd(self) -> int:
        """The width of the hidden state (an embedding's length)."""
        return N.lib.pocketllm_model_n_embd(self._need())

    def token_is_eog(self, token: int) -> bool:
        """Whether generation stops at this id."""
        return bool(N.lib.pocketllm_token_is_eog(self._need(), token))

    # ---- text <-> ids ------------------------------------------------------
    def tokenize(self, text: str, add_special: bool = True, parse_special: bool = True) -> List[int]:
        """The ids of text as llama.cpp's llama_tokenize gives them (add_special:
        BOS/EOS as the vocabulary asks; parse_special: special-token text
        becomes its token)."""
        data = text.encode("utf-8")
        m = self._need()

        def call(buf, cap, need):
            return N.lib.pocketllm_tokenize(m, data, len(data), int(add_special), int(parse_special), buf, cap, need)

        return grow_call(call, c_int32, len(data) + 8)

    def detokenize(self, ids: Sequence[int], remove_special: bool = False, unparse_special: bool = False) -> str:
        """The text of ids, as llama.cpp's llama_detokenize."""
        arr, n = _ids_array(ids)
        m = self._need()

        def call(buf, cap, need):
            return N.lib.pocketllm_detokenize(m, arr, n, int(remove_special), int(unparse_special), buf, cap, need)

        raw = grow_call(call, ctypes.c_char, 16 * n + 16)
        return raw.decode("utf-8", "replace")

    # ---- generation --------------------------------------------------------
    def generate(self, prompt: Union[str, Sequence[int]], max_tokens: int = 128, temperature: Optional[float] = None,
                 top_k: Optional[int] = None, top_p: Optional[float] = None, min_p: Optional[float] = None,
                 seed: Optional[int] = None, stop: Union[str, Sequence[str], None] = None,
                 repeat_penalty: Optional[float] = None, presence_penalty: Optional[float] = None,
                 frequency_penalty: Optional[float] = None, penalty_last_n: Optional[int] = None,
                 grammar: Optional[str] = None, json_schema: Union[str, dict, None] = None) -> Completion:
        """Generate from a prompt (text, tokenized as `pocketllm run` does, or
        ids) until an end-of-generation token, a stop string, max_tokens or
        the end of the context.  Sampling arguments left None take the
        library's defaults (those of `pocketllm run`: greedy); seed None
        draws one.  grammar (GBNF) or json_schema (a dict or its JSON text)
        constrains the text."""
        pieces = []
        gen = self._generate(prompt, max_tokens, _Sampling(temperature, top_k, top_p, min_p, repeat_penalty,
                                                           presence_penalty, frequency_penalty, penalty_last_n, seed),
                             stop, grammar, json_schema, pieces)
        for _ in gen:
            pass
        return pieces[0]

    def stream(self, prompt: Union[str, Sequence[int]], max_tokens: int = 128, temperature: Optional[float] = None,
               top_k: Optional[int] = None, top_p: Optional[float] = None, min_p: Optional[float] = None,
               seed: Optional[int] = None, stop: Union[str, Sequence[str], None] = None,
               repeat_penalty: Optional[float] = None, presence_penalty: Optional[float] = None,
               frequency_penalty: Optional[float] = None, penalty_last_n: Optional[int] = None,
               grammar: Optional[str] = None, json_schema: Union[str, dict, None] = None) -> Iterator[str]:
        """generate(), yielding the text as it is decoded: pieces never split a
        UTF-8 character, and joined they are generate()'s text.  Stopping
        the iteration early (break, an exception, Ctrl-C) ends the
        generation and leaves the model usable."""
        return self._generate(prompt, max_tokens, _Sampling(temperature, top_k, top_p, min_p, repeat_penalty,
                                                            presence_penalty, frequency_penalty, penalty_last_n, seed),
                              stop, grammar, json_schema, None)

    def _prompt_ids(self, prompt) -> List[int]:
        if isinstance(prompt, str):
            ids = self.tokenize(prompt, add_special=True, parse_special=True)
        else:
            ids = list(prompt)
        if not ids:
            raise InvalidArgumentError("the prompt has no tokens", 1)
        if len(ids) > self.n_ctx:
            raise ContextFullError(f"the prompt is {len(ids)} tokens, longer than the context of {self.n_ctx} "
                                   f"(open the model with a larger n_ctx)", 7)
        return ids

    def _open_grammar(self, grammar, json_schema):
        if grammar is not None and json_schema is not None:
            raise InvalidArgumentError("give grammar or json_schema, not both", 1)
        if grammar is None and json_schema is None:
            return None
        g = N.P()
        if grammar is not None:
            check(N.lib.pocketllm_grammar_new(self._model, grammar.encode(), b"root", byref(g)))
        else:
            import json
            text = json_schema if isinstance(json_schema, str) else json.dumps(json_schema)
            data = text.encode()
            check(N.lib.pocketllm_grammar_from_json_schema(self._model, data, len(data), byref(g)))
        return g

    def _generate(self, prompt, max_tokens, sampling: _Sampling, stop, grammar, json_schema, result,
                  grammar_handle=None, prompt_ids=None, accept_prompt=True, prefill=None):
        """The generation loop, as cmd_run.c's: a generator of text pieces;
        when result is a list, the Completion is appended to it at the end."""
        if max_tokens is None or max_tokens < 1:
            raise InvalidArgumentError("max_tokens must be 1 or more", 1)
        stops = [stop] if isinstance(stop, str) else list(stop or [])
        if any(not s for s in stops):
            raise InvalidArgumentError("a stop string must not be empty", 1)
        with self._lock:
            self._need()
            ids = prompt_ids if prompt_ids is not None else self._prompt_ids(prompt)
            sess, m = self._session, self._model
            lib = N.lib
            smp = N.P()
            det = N.P()
            g = grammar_handle
            own_grammar = False
            try:
                check(lib.pocketllm_sampler_new(byref(sampling.params), byref(smp)))
                check(lib.pocketllm_detokenizer_new(m, 0, byref(det)))
                if g is None:
                    g = self._open_grammar(grammar, json_schema)
                    own_grammar = g is not None
                lib.pocketllm_session_reset(sess)
                # (`pocketllm run` lets the penalties see the prompt; the
                # server's chat, only the completion)
                for t in ids if accept_prompt else ():
                    lib.pocketllm_sampler_accept(smp, t)
                if prefill is not None:  # a prompt with images or audio (ids: -1 for their tokens)
                    prefill(sess)
                else:
                    arr, n = _ids_array(ids)
                    check(lib.pocketllm_session_eval(sess, arr, n, 0))
                n_vocab = self.n_vocab
                gen: List[int] = []
                one = (c_int32 * 1)()
                tok = c_int32()
                buf = ctypes.create_string_buffer(512)
                blen = c_size_t()
                text_parts: List[str] = []
                held = ""           # text held back while it may start a stop string
                finish = "length"
                hit = False         # a stop string ended the reply
                while True:
                    budget = (max_tokens - len(gen)) if g else -1
                    check(lib.pocketllm_sampler_sample_grammar(smp, g, lib.pocketllm_session_logits(sess, -1),
                                                               n_vocab, budget, byref(tok)))
                    t = tok.value
                    if g:
                        check(lib.pocketllm_grammar_accept(g, t))
                    gen.append(t)
                    if lib.pocketllm_token_is_eog(m, t):
                        finish = "stop"
                        break
                    st = lib.pocketllm_detokenizer_push(det, t, buf, len(buf), byref(blen))
                    if st == 1 and blen.value > len(buf):
                        buf = ctypes.create_string_buffer(blen.value)
                        st = lib.pocketllm_detokenizer_push(det, t, buf, len(buf), byref(blen))
                    check(st)
                    # (whole UTF-8: the detokenizer holds a partial character back)
                    piece = buf.raw[:blen.value].decode("utf-8", "replace")
                    if piece:
                        out, held, hit = _stop_scan(held + piece, stops)
                        if out:
                            text_parts.append(out)
                            yield out
                        if hit:
                            finish = "stop"
                            break
                    if g and lib.pocketllm_grammar_done(g):  # (before the length: as the server decides)
                        finish = "stop"
                        break
                    if len(gen) == max_tokens:
                        break
                    if lib.pocketllm_session_n_past(sess) >= self.n_ctx:
                        break
                    lib.pocketllm_sampler_accept(smp, t)
                    one[0] = t
                    check(lib.pocketllm_session_eval(sess, one, 1, 0))
                if not hit:
                    # the bytes held back: a partial character, a possible stop string
                    check(lib.pocketllm_detokenizer_flush(det, buf, len(buf), byref(blen)))
                    tail = held + buf.raw[:blen.value].decode("utf-8", "replace")
                    if tail:
                        out, _, hit = _stop_scan(tail, stops, final=True)
                        if out:
                            text_parts.append(out)
                            yield out
                        if hit:
                            finish = "stop"
                if result is not None:
                    result.append(Completion("".join(text_parts), gen, list(ids), finish,
                                             {"prompt_tokens": len(ids), "completion_tokens": len(gen),
                                              "total_tokens": len(ids) + len(gen)}))
            finally:
                if own_grammar:
                    lib.pocketllm_grammar_free(g)
                lib.pocketllm_detokenizer_free(det)
                lib.pocketllm_sampler_free(smp)

    # ---- logits, embeddings, perplexity ----------------------------------------
    def logits(self, prompt: Union[str, Sequence[int]]):
        """The logits of every position of the prompt (text tokenized as
        `pocketllm run` does, or ids): a numpy float32 array of shape
        (positions, n_vocab) when numpy is installed, else a list of
        array('f') rows -- the values `pocketllm logits` writes, bit for bit."""
        with self._lock:
            self._need()
            ids = self._prompt_ids(prompt)
            arr, n = _ids_array(ids)
            N.lib.pocketllm_session_reset(self._session)
            check(N.lib.pocketllm_session_eval(self._session, arr, n, 1))
            nv = self.n_vocab
            row_bytes = nv * 4
            try:
                import numpy as np
            except ImportError:
                np = None
            if np is not None:
                out = np.empty((n, nv), dtype=np.float32)
                base = out.ctypes.data
                for i in range(n):
                    ctypes.memmove(base + i * row_bytes, N.lib.pocketllm_session_logits(self._session, i), row_bytes)
                return out
            rows = []
            for i in range(n):
                row = array.array("f", bytes(row_bytes))
                addr, _ = row.buffer_info()
                ctypes.memmove(addr, N.lib.pocketllm_session_logits(self._session, i), row_bytes)
                rows.append(row)
            return rows

    def embed(self, texts: Union[str, Sequence[Union[str, Sequence[int]]]], pooling: Optional[str] = None,
              normalize: bool = True, dimensions: Optional[int] = None):
        """Embeddings as the server's /v1/embeddings computes them: each input
        (a string, tokenized with add_special, or ids) pooled as the
        checkpoint's pooling_type says (or pooling: "mean", "last", "cls"),
        cut to dimensions, then L2-normalised.  One string gives one vector;
        a list gives a list.  A vector is a numpy float32 array when numpy is
        installed, else an array('f')."""
        single = isinstance(texts, str) or (isinstance(texts, (list, tuple)) and texts and
                                             isinstance(texts[0], int))
        inputs = [texts] if single else list(texts)
        with self._lock:
            m = self._need()
            if pooling is None:
                code = N.lib.pocketllm_model_pooling(m)
                if code not in (1, 2, 3):
                    raise UnsupportedError(
                        f"the checkpoint declares no pooling for embeddings (pooling_type "
                        f"{_POOLING_NAME.get(code, code)}): pass pooling='mean', 'last' or 'cls'", 4)
            else:
                if pooling not in ("mean", "last", "cls"):
                    raise InvalidArgumentError(f"pooling must be 'mean', 'last' or 'cls', not {pooling!r}", 1)
                code = _POOLING[pooling]
            n_embd = self.n_embd
            dims = n_embd if dimensions is None else dimensions
            if not 1 <= dims <= n_embd:
                raise InvalidArgumentError(f"dimensions must be 1..{n_embd}, not {dims}", 1)
            work = (c_float * n_embd)()
            vecs = []
            for x in inputs:
                ids = self.tokenize(x) if isinstance(x, str) else list(x)
                if not ids:
                    raise InvalidArgumentError("an input has no tokens", 1)
                if len(ids) > self.n_ctx:
                    raise ContextFullError(f"an input is {len(ids)} tokens, longer than the context of {self.n_ctx}", 7)
                arr, n = _ids_array(ids)
                check(N.lib.pocketllm_embed(self._session, 0, arr, n, code, 0, work, n_embd))
                # normalised as the server does it: the sum of squares in
                # double, each value times 1/norm, rounded to float32
                raw = work[:dims]
                s = 0.0
                for v in raw:
                    s += v * v
                scale = (1.0 / s ** 0.5 if s > 0.0 else 0.0) if normalize else 1.0
                vecs.append(_floats([v * scale for v in raw]))
            return vecs[0] if single else vecs

    def perplexity(self, text: str, n_ctx: int = 0, max_chunks: int = 0,
                   progress: Optional[Callable[[int, int, float], None]] = None) -> Perplexity:
        """Perplexity over text as llama-perplexity computes it (windows of
        n_ctx tokens, 0 = 512; the second half of each scored); progress is
        called as progress(done, total, ppl_so_far)."""
        with self._lock:
            m = self._need()
            p = N.lib.pocketllm_perplexity_default_params()
            p.n_ctx = n_ctx
            p.max_chunks = max_chunks
            cb = None
            if progress is not None:
                def _cb(_u, done, total, ppl):
                    progress(done, total, ppl)
                cb = N.EVAL_PROGRESS(_cb)
                p.progress = cb
            r = N.PerplexityResult()
            data = text.encode("utf-8")
            check(N.lib.pocketllm_perplexity(m, data, len(data), byref(p), byref(r)))
            return Perplexity(r.ppl, r.ppl_err, r.n_tokens, r.n_ctx, r.n_chunks, r.n_scored)

    # ---- chat ------------------------------------------------------------------
    def chat(self, messages, tools=None, tool_choice=None, response_format=None, max_tokens: Optional[int] = None,
             **kw) -> dict:
        """A chat completion in OpenAI's shapes, as `pocketllm serve` answers
        /v1/chat/completions (see pocketllm.chat.chat_completion for the
        arguments: temperature, top_p, seed, stop, parallel_tool_calls,
        chat_template_kwargs, ...)."""
        from .chat import chat_completion
        return chat_completion(self, messages, tools=tools, tool_choice=tool_choice,
                               response_format=response_format, max_tokens=max_tokens, **kw)

    def transcribe(self, audio: Union[str, os.PathLike, bytes], language: Optional[str] = None,
                   prompt: Optional[str] = None, temperature: float = 0.0, seed: int = 0,
                   max_piece_seconds: float = 0.0, progress: Optional[Callable[[float, float], None]] = None) -> dict:
        """Speech to text with a Qwen3-ASR pair (the model opened with its
        mmproj), as `pocketllm transcribe` does: audio is a file path or the
        file's bytes (WAV, FLAC, MP3, Ogg, Opus, ...); language forces one
        ("English"); prompt biases the words; a recording over
        max_piece_seconds (0: 30) is cut at quiet points.  Returns {"text",
        "language", "segments": [{"start", "end", "text"}], "n_cut",
        "n_tokens"}; progress(done_seconds, total_seconds) as it goes."""
        with self._lock:
            self._need()
            if not self._mm or not self.has_audio:
                raise UnsupportedError("transcribe needs the model's audio tower: open the Model with "
                                       "mmproj=<the Qwen3-ASR mmproj>", 4)
            a = _load_media("audio", audio)
            try:
                p = N.lib.pocketllm_transcribe_default_params()
                p.language = language.encode() if language else None
                p.context = prompt.encode() if prompt else None
                p.temperature = temperature
                p.seed = seed
                p.max_piece_seconds = max_piece_seconds
                cb = None
                if progress is not None:
                    def _cb(_u, done, total):
                        progress(done, total)
                    cb = N.TRANSCRIBE_PROGRESS(_cb)
                    p.progress = cb
                out = ctypes.POINTER(N.Transcript)()
                check(N.lib.pocketllm_transcribe(self._session, 0, self._mm, a, byref(p), byref(out)))
                try:
                    t = out.contents
                    segs = [{"start": t.segments[i].start, "end": t.segments[i].end,
                             "text": N.text(t.segments[i].text)} for i in range(t.n_segments)]
                    return {"text": N.text(t.text), "language": N.text(t.language), "segments": segs,
                            "n_cut": t.n_cut, "n_tokens": t.n_tokens}
                finally:
                    N.lib.pocketllm_transcript_free(out)
            finally:
                N.lib.pocketllm_audio_free(a)


def _load_media(kind: str, src):
    """An image or audio handle (kind "image" / "audio") from a path or the
    file's bytes; the caller frees it."""
    h = N.P()
    if isinstance(src, (bytes, bytearray)):
        decode = N.lib.pocketllm_image_decode if kind == "image" else N.lib.pocketllm_audio_decode
        check(decode(bytes(src), len(src), byref(h)))
    else:
        load = N.lib.pocketllm_image_load if kind == "image" else N.lib.pocketllm_audio_load
        check(load(os.fspath(src).encode(), byref(h)))
    return h


def _floats(values):
    try:
        import numpy as np
        return np.array(values, dtype=np.float32)
    except ImportError:
        return array.array("f", values)


def _stop_scan(text: str, stops: List[str], final: bool = False):
    """Split text into (what may be sent, what is held back, whether a stop
    string was found).  With a stop string in text: everything before it,
    and True.  Else the longest tail that could begin a stop string is held
    back (nothing at the end)."""
    if not stops:
        return text, "", False
    first = -1
    for s in stops:
        i = text.find(s)
        if i >= 0 and (first < 0 or i < first):
            first = i
    if first >= 0:
        return text[:first], "", True
    if final:
        return text, "", False
    keep = partial_tail(text, stops)
    return (text[:-keep], text[-keep:], False) if keep else (text, "", False)
