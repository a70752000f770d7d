"""The C library under the binding: finding and loading libpocketllm.so,
checking its ABI version, and the ctypes declarations of the structs and
functions the binding calls (include/pocketllm.h is the reference; every
layout here mirrors it field for field).

ctypes.CDLL releases the GIL for the length of every foreign call, so a
long call (a prefill, a quantization) lets other Python threads run; the
progress callbacks take it back while they run.
"""
from __future__ import annotations

import ctypes
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int32, c_int64,
                    c_size_t, c_uint32, c_uint64, c_void_p)

# the ABI this binding is written against: major must match, minor at least
ABI_MAJOR = 2
ABI_MINOR = 9

_HERE = os.path.dirname(os.path.abspath(__file__))


class _Opaque(Structure):
    pass


P = POINTER(_Opaque)  # every opaque handle

PROGRESS_LOAD = CFUNCTYPE(None, c_void_p, c_char_p, c_uint64, c_uint64)


class ModelParams(Structure):
    _fields_ = [("device", c_char_p), ("vocab_only", c_int), ("n_threads", c_int), ("device_memory", c_uint64),
                ("progress", PROGRESS_LOAD), ("progress_user", c_void_p)]


class SessionParams(Structure):
    _fields_ = [("n_ctx", c_uint32), ("n_batch", c_uint32), ("kv_type", c_uint32), ("n_threads", c_int),
                ("flash_attn", c_int), ("kv_type_v", c_uint32)]


KV_AS_K = 0xFFFFFFFF


class SamplerParams(Structure):
    _fields_ = [("temperature", c_float), ("top_k", c_int32), ("top_p", c_float), ("min_p", c_float),
                ("repeat_penalty", c_float), ("presence_penalty", c_float), ("frequency_penalty", c_float),
                ("penalty_last_n", c_int32), ("seed", c_uint64)]


EVAL_PROGRESS = CFUNCTYPE(None, c_void_p, c_uint32, c_uint32, c_double)


class PerplexityParams(Structure):
    _fields_ = [("n_ctx", c_uint32), ("max_chunks", c_uint32), ("kv_type", c_uint32), ("n_threads", c_int),
                ("save_logits", c_char_p), ("save_type", c_uint32), ("kl_base", c_char_p),
                ("progress", EVAL_PROGRESS), ("progress_user", c_void_p), ("kv_type_v", c_uint32),
                ("flash_attn", c_int), ("kv_auto", c_int)]


class PerplexityResult(Structure):
    _fields_ = [("n_tokens", c_uint64), ("n_ctx", c_uint32), ("n_chunks", c_uint32), ("n_scored", c_uint64),
                ("ppl", c_double), ("ppl_err", c_double), ("has_kl", c_int), ("ppl_base", c_double),
                ("kl_mean", c_double), ("kl_err", c_double), ("kl_median", c_double), ("kl_p90", c_double),
                ("kl_p99", c_double), ("kl_max", c_double), ("top1", c_double), ("top1_err", c_double)]


class QuantizeProgress(Structure):
    _fields_ = [("tensor", c_uint64), ("n_tensors", c_uint64), ("name", c_char_p), ("from_type", c_uint32),
                ("to_type", c_uint32), ("bytes_done", c_uint64), ("bytes_total", c_uint64),
                ("out_bytes_done", c_uint64)]


QUANTIZE_PROGRESS = CFUNCTYPE(None, c_void_p, POINTER(QuantizeProgress))


class QuantizeParams(Structure):
    _fields_ = [("type", c_char_p), ("pure", c_int), ("leave_output", c_int), ("allow_requantize", c_int),
                ("imatrix", c_char_p), ("n_threads", c_int), ("dry_run", c_int),
                ("progress", QUANTIZE_PROGRESS), ("progress_user", c_void_p)]


class FitRow(Structure):
    _fields_ = [("recipe", c_char_p), ("rung", c_char_p), ("measured", c_int), ("file_bytes", c_uint64),
                ("weights_bytes", c_uint64), ("heap_bytes", c_uint64), ("session_bytes", c_uint64),
                ("total_bytes", c_uint64), ("fits", c_int), ("evaluated", c_int), ("ppl", c_double),
                ("kl_mean", c_double), ("kl_p99", c_double), ("top1", c_double), ("same_as", c_char_p),
                ("note", c_char_p), ("types", c_char * 160), ("budget", c_uint64), ("vision_bytes", c_uint64),
                ("computed", c_int), ("reference", c_int)]


FIT_ROW = CFUNCTYPE(None, c_void_p, POINTER(FitRow))
FIT_PROGRESS = CFUNCTYPE(None, c_void_p, c_char_p)


class FitParams(Structure):
    _fields_ = [("memory", c_uint64), ("n_ctx", c_uint32), ("kv_type", c_uint32), ("eval_text", c_char_p),
                ("eval_len", c_size_t), ("eval_ctx", c_uint32), ("eval_chunks", c_uint32), ("imatrix", c_char_p),
                ("out_path", c_char_p), ("work_dir", c_char_p), ("all", c_int), ("n_threads", c_int),
                ("on_row", FIT_ROW), ("progress", FIT_PROGRESS), ("user", c_void_p), ("device", c_char_p),
                ("device_memory", c_uint64), ("mmproj", c_char_p), ("image_max_tokens", c_uint32),
                ("plan", c_int), ("plan_layers", c_uint32), ("machine_memory", c_uint64), ("kv_type_v", c_uint32),
                ("flash_attn", c_int), ("kv_auto", c_int)]


class FitResult(Structure):
    _fields_ = [("chosen", c_int), ("recipe", c_char_p), ("n_ctx", c_uint32), ("n_rows", c_uint32),
                ("rows", FitRow * 16), ("budget", c_uint64), ("vision_weights_bytes", c_uint64),
                ("vision_image_bytes", c_uint64), ("vision_tokens", c_uint32), ("vision_square_side", c_uint32),
                ("reference", c_int), ("machine_memory", c_uint64), ("n_layer", c_uint32),
                ("plan_layers", c_uint32), ("source_quantized", c_int), ("row_kv_k", c_uint32 * 16),
                ("row_kv_v", c_uint32 * 16), ("row_asked_bytes", c_uint64 * 16)]


class CpuInfo(Structure):
    _fields_ = [("model", c_char * 128), ("arch", c_char * 16), ("physical_cores", c_uint32),
                ("logical_cpus", c_uint32), ("memory_bytes", c_uint64), ("memory_available_bytes", c_uint64),
                ("features", c_uint32)]


class CudaDevice(Structure):
    _fields_ = [("name", c_char * 128), ("memory_bytes", c_uint64), ("compute_major", c_int),
                ("compute_minor", c_int)]


class CudaInfo(Structure):
    _fields_ = [("driver_loaded", c_int), ("driver_version", c_int), ("device_count", c_int),
                ("devices", CudaDevice * 8), ("reason", c_char * 256)]


class VulkanDevice(Structure):
    _fields_ = [("name", c_char * 256), ("type", c_char * 16), ("driver", c_char * 600),
                ("api_version", c_char * 16), ("vendor_id", c_uint32), ("device_id", c_uint32),
                ("n_heaps", c_uint32), ("heap_bytes", c_uint64 * 8), ("heap_device_local", c_int * 8),
                ("device_local_bytes", c_uint64), ("subgroup_size", c_uint32), ("fp16", c_int), ("int8_dot", c_int),
                ("int8_dot_accelerated", c_int), ("cooperative_matrix", c_int), ("cooperative_matrix_nv", c_int),
                ("usable", c_int), ("why_not", c_char * 160)]


class VulkanInfo(Structure):
    _fields_ = [("loader_loaded", c_int), ("instance_version", c_char * 16), ("device_count", c_int),
                ("devices", VulkanDevice * 8), ("reason", c_char * 256)]


class BackendInfo(Structure):
    _fields_ = [("name", c_char_p), ("device_class", c_char_p), ("state", c_int), ("note", c_char_p)]


class TensorInfo(Structure):
    _fields_ = [("name", c_char_p), ("type", c_uint32), ("n_dims", c_uint32), ("ne", c_int64 * 4),
                ("offset", c_uint64), ("n_bytes", c_uint64), ("data", c_void_p)]


class ChatOptions(Structure):
    _fields_ = [("add_generation_prompt", c_int), ("enable_thinking", c_int), ("bos_token", c_char_p),
                ("eos_token", c_char_p), ("tools_json", c_char_p), ("extra_json", c_char_p), ("now", c_int64)]


class ChatSplit(Structure):
    _fields_ = [("content", c_void_p), ("content_len", c_size_t), ("reasoning", c_void_p),
                ("reasoning_len", c_size_t), ("has_reasoning", c_int)]


class ChatCaps(Structure):
    _fields_ = [("think_tags", c_int), ("tool_format", c_int), ("tool_family", c_char_p), ("lists_tools", c_int),
                ("trigger", c_char_p)]


class ToolEvent(Structure):
    _fields_ = [("kind", c_int), ("index", c_int), ("text", c_void_p), ("len", c_size_t), ("name", c_char_p),
                ("id", c_char_p)]


TOOL_EVENT_FN = CFUNCTYPE(None, c_void_p, POINTER(ToolEvent))


class MmprojParams(Structure):
    _fields_ = [("image_min_tokens", c_uint32), ("image_max_tokens", c_uint32)]


class MmprojInfo(Structure):
    _fields_ = [("projector", c_char * 32), ("n_embd", c_uint32), ("n_layer", c_uint32), ("n_head", c_uint32),
                ("n_ff", c_uint32), ("patch_size", c_uint32), ("n_merge", c_uint32), ("image_size", c_uint32),
                ("n_embd_text", c_uint32), ("n_deepstack", c_uint32), ("image_min_tokens", c_uint32),
                ("image_max_tokens", c_uint32), ("has_vision", c_uint32), ("has_audio", c_uint32),
                ("audio_projector", c_char * 32), ("audio_n_embd", c_uint32), ("audio_n_layer", c_uint32),
                ("audio_n_head", c_uint32), ("audio_n_ff", c_uint32), ("audio_n_mel", c_uint32),
                ("audio_n_embd_text", c_uint32)]


class Media(Structure):
    _fields_ = [("image", P), ("audio", P)]


TRANSCRIBE_PROGRESS = CFUNCTYPE(None, c_void_p, c_double, c_double)


class TranscribeParams(Structure):
    _fields_ = [("language", c_char_p), ("context", c_char_p), ("temperature", c_float), ("seed", c_uint64),
                ("max_piece_seconds", c_double), ("progress", TRANSCRIBE_PROGRESS), ("user", c_void_p)]


class TranscriptSegment(Structure):
    _fields_ = [("start", c_double), ("end", c_double), ("text", c_char_p)]


class Transcript(Structure):
    _fields_ = [("text", c_char_p), ("language", c_char * 32), ("n_segments", c_size_t),
                ("segments", POINTER(TranscriptSegment)), ("n_cut", c_uint32), ("n_tokens", c_uint32)]

# name: (restype, argtypes)
_PROTOS = {
    "pocketllm_abi_version": (c_uint32, []),
    "pocketllm_version_string": (c_char_p, []),
    "pocketllm_status_string": (c_char_p, [c_int]),
    "pocketllm_last_error": (c_char_p, []),
    "pocketllm_free": (None, [c_void_p]),
    # gguf
    "pocketllm_type_name": (c_char_p, [c_uint32]),
    "pocketllm_kv_type_from_name": (c_uint32, [c_char_p]),
    "pocketllm_type_block_size": (c_uint32, [c_uint32]),
    "pocketllm_gguf_open": (c_int, [c_char_p, POINTER(P)]),
    "pocketllm_gguf_close": (None, [P]),
    "pocketllm_gguf_version": (c_uint32, [P]),
    "pocketllm_gguf_file_size": (c_uint64, [P]),
    "pocketllm_gguf_kv_count": (c_uint64, [P]),
    "pocketllm_gguf_kv_key": (c_char_p, [P, c_uint64]),
    "pocketllm_gguf_kv_value": (P, [P, c_uint64]),
    "pocketllm_gguf_find": (P, [P, c_char_p]),
    "pocketllm_gguf_value_type": (c_int, [P]),
    "pocketllm_gguf_value_u64": (c_int, [P, POINTER(c_uint64)]),
    "pocketllm_gguf_value_i64": (c_int, [P, POINTER(c_int64)]),
    "pocketllm_gguf_value_f64": (c_int, [P, POINTER(c_double)]),
    "pocketllm_gguf_value_str": (c_void_p, [P, POINTER(c_uint64)]),
    "pocketllm_gguf_array_type": (c_int, [P]),
    "pocketllm_gguf_array_len": (c_uint64, [P]),
    "pocketllm_gguf_array_get": (P, [P, c_uint64]),
    "pocketllm_gguf_tensor_count": (c_uint64, [P]),
    "pocketllm_gguf_tensor": (c_int, [P, c_uint64, POINTER(TensorInfo)]),
    # models
    "pocketllm_model_default_params": (ModelParams, []),
    "pocketllm_model_open": (c_int, [c_char_p, POINTER(ModelParams), POINTER(P)]),
    "pocketllm_model_close": (None, [P]),
    "pocketllm_model_device": (c_char_p, [P, POINTER(c_uint64), POINTER(c_uint64)]),
    "pocketllm_model_arch": (c_char_p, [P]),
    "pocketllm_model_n_vocab": (c_int32, [P]),
    "pocketllm_model_n_ctx_train": (c_uint32, [P]),
    "pocketllm_model_n_embd": (c_int32, [P]),
    "pocketllm_model_pooling": (c_int32, [P]),
    "pocketllm_tokenize": (c_int, [P, c_char_p, c_size_t, c_int, c_int, POINTER(c_int32), c_size_t,
                                   POINTER(c_size_t)]),
    "pocketllm_detokenize": (c_int, [P, POINTER(c_int32), c_size_t, c_int, c_int, c_char_p, c_size_t,
                                     POINTER(c_size_t)]),
    "pocketllm_token_bos": (c_int32, [P]),
    "pocketllm_token_eos": (c_int32, [P]),
    "pocketllm_token_is_eog": (c_int, [P, c_int32]),
    "pocketllm_detokenizer_new": (c_int, [P, c_int, POINTER(P)]),
    "pocketllm_detokenizer_push": (c_int, [P, c_int32, c_char_p, c_size_t, POINTER(c_size_t)]),
    "pocketllm_detokenizer_flush": (c_int, [P, c_char_p, c_size_t, POINTER(c_size_t)]),
    "pocketllm_detokenizer_free": (None, [P]),
    # sessions and sampling
    "pocketllm_session_default_params": (SessionParams, []),
    "pocketllm_session_new": (c_int, [P, POINTER(SessionParams), POINTER(P)]),
    "pocketllm_session_free": (None, [P]),
    "pocketllm_session_eval": (c_int, [P, POINTER(c_int32), c_size_t, c_int]),
    "pocketllm_session_logits": (POINTER(c_float), [P, c_int32]),
    "pocketllm_session_n_past": (c_uint32, [P]),
    "pocketllm_session_n_ctx": (c_uint32, [P]),
    "pocketllm_session_n_vocab": (c_int32, [P]),
    "pocketllm_session_reset": (None, [P]),
    "pocketllm_sampler_default_params": (SamplerParams, []),
    "pocketllm_sampler_new": (c_int, [POINTER(SamplerParams), POINTER(P)]),
    "pocketllm_sampler_free": (None, [P]),
    "pocketllm_sampler_accept": (None, [P, c_int32]),
    "pocketllm_sampler_sample_grammar": (c_int, [P, P, POINTER(c_float), c_int32, c_int32, POINTER(c_int32)]),
    "pocketllm_grammar_new": (c_int, [P, c_char_p, c_char_p, POINTER(P)]),
    "pocketllm_grammar_from_json_schema": (c_int, [P, c_char_p, c_size_t, POINTER(P)]),
    "pocketllm_grammar_set_triggers": (c_int, [P, POINTER(c_char_p), c_size_t]),
    "pocketllm_grammar_set_trigger_zone": (c_int, [P, c_char_p, c_char_p, c_int]),
    "pocketllm_grammar_free": (None, [P]),
    "pocketllm_grammar_accept": (c_int, [P, c_int32]),
    "pocketllm_grammar_done": (c_int, [P]),
    "pocketllm_embed": (c_int, [P, c_uint32, POINTER(c_int32), c_size_t, c_int32, c_int, POINTER(c_float),
                                c_size_t]),
    # evaluation and the ladder
    "pocketllm_perplexity_default_params": (PerplexityParams, []),
    "pocketllm_perplexity": (c_int, [P, c_char_p, c_size_t, POINTER(PerplexityParams), POINTER(PerplexityResult)]),
    "pocketllm_quantize_default_params": (QuantizeParams, []),
    "pocketllm_quantize": (c_int, [c_char_p, c_char_p, POINTER(QuantizeParams)]),
    "pocketllm_fit_default_params": (FitParams, []),
    "pocketllm_fit": (c_int, [c_char_p, POINTER(FitParams), POINTER(FitResult)]),
    # the host and the build
    "pocketllm_cpu_info_get": (c_int, [POINTER(CpuInfo)]),
    "pocketllm_cpu_feature_name": (c_char_p, [c_uint32]),
    "pocketllm_cpu_kernel_tier": (c_char_p, []),
    "pocketllm_cuda_probe": (c_int, [POINTER(CudaInfo)]),
    "pocketllm_vulkan_probe": (c_int, [POINTER(VulkanInfo)]),
    "pocketllm_backend_count": (c_uint32, []),
    "pocketllm_backend_get": (c_int, [c_uint32, POINTER(BackendInfo)]),
    "pocketllm_arch_count": (c_uint32, []),
    "pocketllm_arch_name": (c_char_p, [c_uint32]),
    "pocketllm_arch_summary": (c_char_p, [c_uint32]),
    # chat
    "pocketllm_chat_template_new": (c_int, [c_char_p, c_size_t, POINTER(P)]),
    "pocketllm_chat_template_free": (None, [P]),
    "pocketllm_chat_default_options": (ChatOptions, []),
    "pocketllm_chat_render_json": (c_int, [P, c_char_p, POINTER(ChatOptions), POINTER(c_void_p), POINTER(c_size_t)]),
    "pocketllm_chat_free": (None, [c_void_p]),
    "pocketllm_chat_split_reasoning": (c_int, [P, c_char_p, c_char_p, c_size_t, POINTER(ChatSplit)]),
    "pocketllm_chat_split_free": (None, [POINTER(ChatSplit)]),
    "pocketllm_chat_template_caps": (None, [P, POINTER(ChatCaps)]),
    "pocketllm_chat_template_arguments_as_text": (c_int, [P]),
    "pocketllm_json_schema_to_gbnf": (c_int, [c_char_p, c_size_t, POINTER(c_void_p)]),
    "pocketllm_tools_grammar": (c_int, [P, c_char_p, c_size_t, c_char_p, c_int, POINTER(c_void_p)]),
    "pocketllm_tool_parser_new": (c_int, [P, c_char_p, c_size_t, c_uint64, POINTER(P)]),
    "pocketllm_tool_parser_feed": (None, [P, c_char_p, c_size_t, TOOL_EVENT_FN, c_void_p]),
    "pocketllm_tool_parser_finish": (c_int, [P, TOOL_EVENT_FN, c_void_p]),
    "pocketllm_tool_parser_n_calls": (c_int, [P]),
    "pocketllm_tool_parser_call": (None, [P, c_int, POINTER(c_char_p), POINTER(c_char_p), POINTER(c_char_p)]),
    "pocketllm_tool_parser_content": (c_char_p, [P]),
    "pocketllm_tool_parser_unsent": (c_void_p, [P, POINTER(c_size_t)]),
    "pocketllm_tool_parser_free": (None, [P]),
    # images and audio
    "pocketllm_mmproj_default_params": (MmprojParams, []),
    "pocketllm_mmproj_open": (c_int, [P, c_char_p, POINTER(MmprojParams), POINTER(P)]),
    "pocketllm_mmproj_close": (None, [P]),
    "pocketllm_mmproj_get_info": (c_int, [P, POINTER(MmprojInfo)]),
    "pocketllm_image_load": (c_int, [c_char_p, POINTER(P)]),
    "pocketllm_image_decode": (c_int, [c_char_p, c_size_t, POINTER(P)]),
    "pocketllm_image_free": (None, [P]),
    "pocketllm_media_marker": (c_char_p, []),
    "pocketllm_audio_load": (c_int, [c_char_p, POINTER(P)]),
    "pocketllm_audio_decode": (c_int, [c_char_p, c_size_t, POINTER(P)]),
    "pocketllm_audio_free": (None, [P]),
    "pocketllm_audio_seconds": (c_double, [P]),
    "pocketllm_session_eval_media_list": (c_int, [P, c_uint32, P, c_char_p, c_size_t, POINTER(Media), c_size_t, c_int,
                                                  c_int]),
    "pocketllm_media_list_tokens": (c_int, [P, P, c_char_p, c_size_t, POINTER(Media), c_size_t, c_int, c_int,
                                            POINTER(c_int32), c_size_t, POINTER(c_uint32)]),
    "pocketllm_transcribe_default_params": (TranscribeParams, []),
    "pocketllm_transcribe": (c_int, [P, c_uint32, P, P, POINTER(TranscribeParams), POINTER(POINTER(Transcript))]),
    "pocketllm_transcript_free": (None, [POINTER(Transcript)]),
}


def _candidates():
    env = os.environ.get("POCKETLLM_LIBRARY")
    if env:
        return [env], True
    return [os.path.join(_HERE, "libpocketllm.so")], False


def _load():
    paths, explicit = _candidates()
    errors = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            break
        except OSError as e:
            errors.append(f"{path}: {e}")
    else:
        where = "POCKETLLM_LIBRARY" if explicit else "the package (a wheel from scripts/build-wheel.sh carries it)"
        raise ImportError("pocketllm: cannot load libpocketllm.so from " + where + ": " + "; ".join(errors) +
                          " (build it with scripts/build.sh and set POCKETLLM_LIBRARY=build/libpocketllm.so)")
    abi = lib.pocketllm_abi_version
    abi.restype = c_uint32
    abi.argtypes = []
    v = abi()
    major, minor = v >> 16, v & 0xFFFF
    if major != ABI_MAJOR or minor < ABI_MINOR:
        raise ImportError(f"pocketllm: {path} has ABI {major}.{minor}, this binding needs {ABI_MAJOR}.{ABI_MINOR} or a "
                          f"later {ABI_MAJOR}.x: rebuild the library or install the matching wheel")
    for name, (res, args) in _PROTOS.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib, path


lib, library_path = _load()


def last_error() -> str:
    return (lib.pocketllm_last_error() or b"").decode("utf-8", "replace")


def text(b) -> str:
    return b.decode("utf-8", "replace") if b else ""
