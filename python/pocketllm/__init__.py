"""PocketLLM from Python: a binding over libpocketllm.so's C ABI (ctypes,
no compiled extension).

    import pocketllm
    with pocketllm.Model("model.gguf", n_ctx=2048) as m:
        print(m.generate("Once upon a time", max_tokens=32).text)
        for piece in m.stream("Hello", max_tokens=16):
            print(piece, end="", flush=True)

Model (generate, stream, chat, tokenize, detokenize, logits, embed,
perplexity); devices(), backends(), architectures(), inspect(path);
quantize(src, dst, type), fit(path, memory); errors are pocketllm.Error
subclasses carrying the library's status and one-line message.  Importing
loads the library (POCKETLLM_LIBRARY names one explicitly) and checks its
ABI version; numpy is imported only by calls that return arrays, when it is
installed.
"""
from ._native import ABI_MAJOR, ABI_MINOR, library_path
from . import _native as _N
from .errors import (ContextFullError, Error, FileError, FormatError, InternalError, InvalidArgumentError,
                     NoMemoryError, NotFoundError, UnsupportedError)
from .host import architectures, backends, devices, inspect
from .ladder import fit, quantize
from .model import Completion, Model, Perplexity

__version__ = _N.text(_N.lib.pocketllm_version_string())
abi_version = (_N.lib.pocketllm_abi_version() >> 16, _N.lib.pocketllm_abi_version() & 0xFFFF)

__all__ = ["ABI_MAJOR", "ABI_MINOR", "Model", "Completion", "Perplexity", "devices", "backends", "architectures", "inspect", "quantize", "fit",
           "Error", "InvalidArgumentError", "FileError", "FormatError", "UnsupportedError", "NoMemoryError",
           "NotFoundError", "ContextFullError", "InternalError", "library_path", "abi_version", "__version__"]
