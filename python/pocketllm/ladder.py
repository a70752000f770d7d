"""The width ladder from Python: quantize() a checkpoint to a recipe or a
tensor type, and fit() a checkpoint into a memory budget."""
from __future__ import annotations

import os
from ctypes import byref
from typing import Callable, Optional, Union

from . import _native as N
from ._call import check
from .errors import InvalidArgumentError

PathLike = Union[str, os.PathLike]


def quantize(src: PathLike, dst: PathLike, type: str, imatrix: Optional[PathLike] = None, pure: bool = False,
             allow_requantize: bool = False, n_threads: int = 0,
             progress: Optional[Callable[[dict], None]] = None) -> None:
    """Quantize the checkpoint src into dst as llama-quantize does: type is a
    recipe ("Q4_K_M", "IQ2_XS", ...) or a tensor type ("q4_K", "f16").  The
    file is written atomically (nothing is left at dst on failure).
    progress, when given, is called with {"tensor", "n_tensors", "name",
    "bytes_done", "bytes_total"} as the work goes on."""
    p = N.lib.pocketllm_quantize_default_params()
    p.type = type.encode()
    p.pure = int(pure)
    p.allow_requantize = int(allow_requantize)
    p.imatrix = os.fspath(imatrix).encode() if imatrix is not None else None
    p.n_threads = n_threads
    cb = None
    if progress is not None:
        def _cb(_u, q):
            q = q.contents
            progress({"tensor": q.tensor, "n_tensors": q.n_tensors, "name": N.text(q.name),
                      "bytes_done": q.bytes_done, "bytes_total": q.bytes_total})
        cb = N.QUANTIZE_PROGRESS(_cb)
        p.progress = cb
    check(N.lib.pocketllm_quantize(os.fspath(src).encode(), os.fspath(dst).encode(), byref(p)))


def _size(memory) -> int:
    if isinstance(memory, int):
        return memory
    s = str(memory).strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    if s and s[-1] == "B":
        s = s[:-1]
    if s and s[-1] in mult:
        return int(float(s[:-1]) * mult[s[-1]])
    try:
        return int(s)
    except ValueError:
        raise InvalidArgumentError(f"memory must be bytes or a size such as '4G', not {memory!r}", 1) from None


def fit(path: PathLike, memory: Union[int, str], out: Optional[PathLike] = None, n_ctx: int = 0,
        eval_text: Optional[str] = None, plan: bool = False, all: bool = False,
        progress: Optional[Callable[[str], None]] = None, kv_auto: bool = False) -> dict:
    """Walk the width ladder (Q4_K_M, Q3_K_M, Q2_K, IQ2_XS, ...) for the best
    rung whose memory fits memory (bytes, or "4G"), as `pocketllm fit`
    does; out, when given, receives the chosen rung.  Returns {"chosen"
    (index, -1 when nothing fits), "recipe", "budget", "rows": [{"recipe",
    "rung", "total_bytes", "fits", "cache_type_k", "cache_type_v", ...}]}.
    kv_auto narrows the KV cache (q8_0, then q4_0) before going down a
    rung, as `pocketllm fit --kv auto`; a narrowed row's "asked_cache_bytes"
    is its need with the f16 cache."""
    p = N.lib.pocketllm_fit_default_params()
    p.memory = _size(memory)
    p.n_ctx = n_ctx
    p.plan = int(plan)
    p.all = int(all)
    p.kv_auto = int(kv_auto)
    text = eval_text.encode("utf-8") if eval_text is not None else None
    p.eval_text = text
    p.eval_len = len(text) if text else 0
    p.out_path = os.fspath(out).encode() if out is not None else None
    cb = None
    if progress is not None:
        def _cb(_u, what):
            progress(N.text(what))
        cb = N.FIT_PROGRESS(_cb)
        p.progress = cb
    r = N.FitResult()
    check(N.lib.pocketllm_fit(os.fspath(path).encode(), byref(p), byref(r)))
    rows = []
    for i in range(min(r.n_rows, 16)):
        w = r.rows[i]
        row = {"recipe": N.text(w.recipe), "rung": N.text(w.rung), "measured": bool(w.measured),
               "computed": bool(w.computed), "file_bytes": w.file_bytes, "total_bytes": w.total_bytes,
               "fits": bool(w.fits), "types": N.text(w.types), "note": N.text(w.note) or None,
               "cache_type_k": N.text(N.lib.pocketllm_type_name(r.row_kv_k[i])),
               "cache_type_v": N.text(N.lib.pocketllm_type_name(r.row_kv_v[i])),
               "asked_cache_bytes": r.row_asked_bytes[i]}
        if w.evaluated:
            row.update(ppl=w.ppl, kl_mean=w.kl_mean, kl_p99=w.kl_p99, top1=w.top1)
        rows.append(row)
    return {"chosen": r.chosen, "recipe": N.text(r.recipe) or None, "budget": r.budget, "n_ctx": r.n_ctx,
            "rows": rows}
