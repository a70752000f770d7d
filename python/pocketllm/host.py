"""What this host and this build can run: devices(), backends(),
architectures(), and inspect() of a GGUF file."""
from __future__ import annotations

import os
from ctypes import byref, c_double, c_int64, c_uint64, string_at
from typing import Union

from . import _native as N
from ._call import check


def devices() -> list:
    """The devices a Model can open, each a dict: "id" (what Model's device
    takes: "cpu", "vulkan:N"), "name", "type", "memory_bytes", "usable"
    (and "why_not" when it is not).  CUDA devices are listed for what they
    are (the CUDA backend is not built in: usable False)."""
    cpu = N.CpuInfo()
    check(N.lib.pocketllm_cpu_info_get(byref(cpu)))
    feats = []
    for bit in range(32):
        if cpu.features & (1 << bit):
            name = N.lib.pocketllm_cpu_feature_name(1 << bit)
            if name:
                feats.append(N.text(name))
    out = [{"id": "cpu", "name": N.text(cpu.model), "type": "cpu", "arch": N.text(cpu.arch),
            "memory_bytes": cpu.memory_bytes, "physical_cores": cpu.physical_cores, "features": feats,
            "kernel_tier": N.text(N.lib.pocketllm_cpu_kernel_tier()), "usable": True}]
    vk = N.VulkanInfo()
    if N.lib.pocketllm_vulkan_probe(byref(vk)) == 0:
        for i in range(min(vk.device_count, 8)):
            d = vk.devices[i]
            e = {"id": f"vulkan:{i}", "name": N.text(d.name), "type": N.text(d.type),
                 "memory_bytes": d.device_local_bytes, "usable": bool(d.usable)}
            if not d.usable:
                e["why_not"] = N.text(d.why_not)
            out.append(e)
    cu = N.CudaInfo()
    if N.lib.pocketllm_cuda_probe(byref(cu)) == 0:
        for i in range(min(cu.device_count, 8)):
            d = cu.devices[i]
            out.append({"id": f"cuda:{i}", "name": N.text(d.name), "type": "discrete",
                        "memory_bytes": d.memory_bytes, "usable": False,
                        "why_not": "the CUDA backend is not built into this library"})
    return out


def backends() -> list:
    """Every backend the library names: {"name", "device_class", "implemented", "note"}."""
    out = []
    for i in range(N.lib.pocketllm_backend_count()):
        b = N.BackendInfo()
        check(N.lib.pocketllm_backend_get(i, byref(b)))
        out.append({"name": N.text(b.name), "device_class": N.text(b.device_class), "implemented": b.state == 0,
                    "note": N.text(b.note) or None})
    return out


def architectures() -> list:
    """The model architectures the engine runs: {"name", "summary"} (GGUF general.architecture)."""
    return [{"name": N.text(N.lib.pocketllm_arch_name(i)), "summary": N.text(N.lib.pocketllm_arch_summary(i))}
            for i in range(N.lib.pocketllm_arch_count())]


_INT_TYPES = {0, 1, 2, 3, 4, 5, 10, 11}


def _value(v, max_array: int):
    t = N.lib.pocketllm_gguf_value_type(v)
    if t in _INT_TYPES:
        if t in (1, 3, 5, 11):
            x = c_int64()
            check(N.lib.pocketllm_gguf_value_i64(v, byref(x)))
        else:
            x = c_uint64()
            check(N.lib.pocketllm_gguf_value_u64(v, byref(x)))
        return x.value
    if t in (6, 12):
        x = c_double()
        check(N.lib.pocketllm_gguf_value_f64(v, byref(x)))
        return x.value
    if t == 7:
        x = c_uint64()
        check(N.lib.pocketllm_gguf_value_u64(v, byref(x)))
        return bool(x.value)
    if t == 8:
        n = c_uint64()
        p = N.lib.pocketllm_gguf_value_str(v, byref(n))
        return string_at(p, n.value).decode("utf-8", "replace") if p else ""
    if t == 9:
        n = N.lib.pocketllm_gguf_array_len(v)
        items = [_value(N.lib.pocketllm_gguf_array_get(v, i), max_array) for i in range(min(n, max_array))]
        return items if n <= max_array else {"length": n, "head": items}
    return None


def gguf_keys(path: Union[str, os.PathLike], keys) -> dict:
    """Some metadata of a GGUF file, read without the rest: {key: value} for
    each key present (a key naming a token id also gets the token's text,
    under key + ".text", read from tokenizer.ggml.tokens)."""
    g = N.P()
    check(N.lib.pocketllm_gguf_open(os.fspath(path).encode(), byref(g)))
    try:
        out = {}
        toks = N.lib.pocketllm_gguf_find(g, b"tokenizer.ggml.tokens")
        for k in keys:
            v = N.lib.pocketllm_gguf_find(g, k.encode())
            if not v:
                continue
            out[k] = _value(v, 64)
            if k.endswith("_token_id") and toks and isinstance(out[k], int) and \
                    out[k] < N.lib.pocketllm_gguf_array_len(toks):
                out[k + ".text"] = _value(N.lib.pocketllm_gguf_array_get(toks, out[k]), 64)
        return out
    finally:
        N.lib.pocketllm_gguf_close(g)


def inspect(path: Union[str, os.PathLike], tensors: bool = True, max_array: int = 64) -> dict:
    """What a GGUF file holds, validated first (a malformed file raises
    FormatError naming the problem and its byte offset): {"version",
    "file_size", "metadata": {key: value}, "tensors": [{"name", "type",
    "shape", "offset", "bytes"}]}.  Arrays longer than max_array (a
    vocabulary) come back as {"length", "head"}."""
    g = N.P()
    check(N.lib.pocketllm_gguf_open(os.fspath(path).encode(), byref(g)))
    try:
        meta = {}
        for i in range(N.lib.pocketllm_gguf_kv_count(g)):
            key = N.text(N.lib.pocketllm_gguf_kv_key(g, i))
            meta[key] = _value(N.lib.pocketllm_gguf_kv_value(g, i), max_array)
        out = {"version": N.lib.pocketllm_gguf_version(g), "file_size": N.lib.pocketllm_gguf_file_size(g),
               "metadata": meta}
        if tensors:
            ts = []
            for i in range(N.lib.pocketllm_gguf_tensor_count(g)):
                ti = N.TensorInfo()
                check(N.lib.pocketllm_gguf_tensor(g, i, byref(ti)))
                ts.append({"name": N.text(ti.name), "type": N.text(N.lib.pocketllm_type_name(ti.type)),
                           "shape": [ti.ne[k] for k in range(max(ti.n_dims, 1))], "offset": ti.offset,
                           "bytes": ti.n_bytes})
            out["tensors"] = ts
        return out
    finally:
        N.lib.pocketllm_gguf_close(g)
