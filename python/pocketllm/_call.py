"""Calling the C library: a status turned into the matching exception, and
the library's buffer rule (a call that needs more room fails with
INVALID_ARGUMENT and says how much) handled once."""
from __future__ import annotations

from ctypes import byref, c_size_t

from . import _native as N
from .errors import error_for


def check(status: int) -> None:
    """Raise the pocketllm.Error subclass of a failed status."""
    if status:
        raise error_for(status, N.last_error() or N.text(N.lib.pocketllm_status_string(status)))


def grow_call(call, ctype, cap: int):
    """call(buf, cap, byref(need)) with a buffer of cap ctype elements, again
    with the room it asks for; the filled elements (bytes for c_char)."""
    need = c_size_t(0)
    cap = max(int(cap), 1)
    buf = (ctype * cap)()
    st = call(buf, cap, byref(need))
    if st == 1 and need.value > cap:
        cap = need.value
        buf = (ctype * cap)()
        st = call(buf, cap, byref(need))
    check(st)
    n = need.value
    if ctype.__name__ == "c_char":
        return bytes(buf[:n]) if n else b""
    return list(buf[:n])
