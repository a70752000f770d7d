# gguf_dir.py -- a GGUF file's keys and tensor directory read in plain
# Python, apart from the engine's reader, so a test can hold what
# `pocketllm inspect` and `bench` report about a file against the file
# itself.  Tensor bytes come from the block sizes of the GGUF format
# (ggml's type table: elements per block, bytes per block), not from the
# offsets.  Also: what one decode step of a mixture of experts reads.
import struct

# type id: (name, elements per block, bytes per block)
TYPES = {0: ("f32", 1, 4), 1: ("f16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20), 6: ("q5_0", 32, 22),
         7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34), 10: ("q2_K", 256, 84), 11: ("q3_K", 256, 110),
         12: ("q4_K", 256, 144), 13: ("q5_K", 256, 176), 14: ("q6_K", 256, 210), 16: ("iq2_xxs", 256, 66),
         17: ("iq2_xs", 256, 74), 18: ("iq3_xxs", 256, 98), 20: ("iq4_nl", 32, 18), 21: ("iq3_s", 256, 110),
         22: ("iq2_s", 256, 82), 23: ("iq4_xs", 256, 136), 30: ("bf16", 1, 2)}
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}


def read(path):
    """(keys, tensors): keys a dict; tensors a list of dicts name, type, ne, params, bytes, offset (in the file)."""
    b = open(path, "rb").read()
    pos = 0

    def take(fmt):
        nonlocal pos
        v = struct.unpack_from(fmt, b, pos)[0]
        pos += struct.calcsize(fmt)
        return v

    def string():
        nonlocal pos
        n = take("<Q")
        pos += n
        return b[pos - n:pos].decode("utf-8", "replace")

    def value(t):
        if t == 8:
            return string()
        if t == 9:
            et, n = take("<I"), take("<Q")
            return [value(et) for _ in range(n)]
        return take(_SCALAR[t])

    assert b[:4] == b"GGUF", path
    pos = 4
    take("<I")
    n_t, n_kv = take("<Q"), take("<Q")
    keys = {}
    for _ in range(n_kv):
        k = string()
        keys[k] = value(take("<I"))
    tensors = []
    for _ in range(n_t):
        name = string()
        ne = [take("<Q") for _ in range(take("<I"))]
        t = take("<I")
        rel = take("<Q")
        params = 1
        for x in ne:
            params *= x
        tname, blk, size = TYPES[t]
        tensors.append({"name": name, "type": tname, "ne": ne, "params": params, "bytes": params // blk * size,
                        "offset": rel})
    # the offsets count from the data section, which starts aligned
    align = keys.get("general.alignment", 32)
    start = (pos + align - 1) // align * align
    for t in tensors:
        t["offset"] += start
    return keys, tensors


def is_experts(t):
    return len(t["ne"]) == 3 and t["name"].endswith("_exps.weight")


def moe_split(keys, tensors):
    """Parameters and bytes of a mixture of experts: always read, experts, one decode step."""
    arch = keys["general.architecture"]
    used, n_exp = keys[arch + ".expert_used_count"], keys[arch + ".expert_count"]
    untied = any(t["name"] == "output.weight" for t in tensors)
    r = {"always_read": [0, 0], "experts": [0, 0], "per_token": [0, 0]}
    for t in tensors:
        if is_experts(t):
            assert t["ne"][2] == n_exp, t
            r["experts"][0] += t["params"]
            r["experts"][1] += t["bytes"]
            r["per_token"][0] += t["params"] * used // n_exp
            r["per_token"][1] += t["bytes"] * used // n_exp
            continue
        r["always_read"][0] += t["params"]
        r["always_read"][1] += t["bytes"]
        # a table beside a separate output matrix: one row looked up per token
        if not (untied and t["name"] == "token_embd.weight"):
            r["per_token"][0] += t["params"]
            r["per_token"][1] += t["bytes"]
    return {k: {"parameters": v[0], "bytes": v[1]} for k, v in r.items()}
