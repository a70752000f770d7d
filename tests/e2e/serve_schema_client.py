# serve_schema_client.py -- structured output against `pocketllm serve`
# (run by test_serve_json_schema.sh): every schema of tests/grammar/schemas
# sent as response_format json_schema (strict) with sampling on (seeds
# 1-3 in turn), two requests at a time; every reply must be JSON that Debian's python3-jsonschema
# (Draft 2020-12) finds valid, finished with "stop" (the length budget is
# met by the grammar, not cut).  json_object replies must be objects; each
# schema of tests/grammar/unsupported must get a 400 that names its
# keyword; llama.cpp's `grammar` field constrains chat and completions.
# Environment: BASE (the server's URL), SCHEMAS, UNSUPPORTED (folders).
import json
import os
import re
import sys
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import jsonschema

BASE = os.environ["BASE"]

# Debian's python3-jsonschema checks "time" by draft 3's rule (HH:MM:SS, no
# offset) because the rfc3339-validator package it would use is not in
# Debian; JSON Schema 2020-12 means RFC 3339's full-time, offset required.
# The check here is RFC 3339's (section 5.6), so a correct reply is not
# failed and an offset-less one is.
FORMATS = jsonschema.FormatChecker()
RFC3339_TIME = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])")


@FORMATS.checks("time")
def rfc3339_time(value):
    return not isinstance(value, str) or RFC3339_TIME.fullmatch(value) is not None
fails = 0
checks = 0


def check(cond, what):
    global fails, checks
    checks += 1
    if not cond:
        fails += 1
        print("FAIL:", what)


def post(path, body):
    req = urllib.request.Request(BASE + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=300) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def chat(extra, text="Answer in JSON.", max_tokens=256, seed=1):
    body = {"model": "m", "messages": [{"role": "user", "content": text}], "max_tokens": max_tokens,
            "temperature": 1.0, "seed": seed}
    body.update(extra)
    return post("/v1/chat/completions", body)


schema_dir = os.environ["SCHEMAS"]
names = sorted(f for f in os.listdir(schema_dir) if f.endswith(".json"))
check(len(names) >= 30, f"only {len(names)} schemas in {schema_dir}")
if os.environ.get("PL_SANITIZE") == "1":
    names = names[::4]  # the sanitizer tree: a sample (the same C paths, a quarter of the time)
n_valid = 0


def one_schema(job):
    name, seed = job
    schema = json.load(open(os.path.join(schema_dir, name)))
    rf = {"type": "json_schema", "json_schema": {"name": name[:-5].replace(".", "_"), "schema": schema, "strict": True}}
    status, r = chat({"response_format": rf}, seed=seed, max_tokens=128)
    if status != 200:
        return [f"{name} seed {seed}: HTTP {status}: {r}"]
    ch = r["choices"][0]
    content = ch["message"]["content"]
    errs = []
    if ch["finish_reason"] != "stop":
        errs.append(f"{name} seed {seed}: finish_reason {ch['finish_reason']} ({content!r})")
    try:
        value = json.loads(content)
    except Exception as e:
        return errs + [f"{name} seed {seed}: not JSON ({e}): {content!r}"]
    try:
        jsonschema.Draft202012Validator(schema, format_checker=FORMATS).validate(value)
    except jsonschema.ValidationError as e:
        errs.append(f"{name} seed {seed}: invalid: {e.message} in {content!r}")
    return errs


# two at a time: the server batches them (--parallel 2)
jobs = [(name, 1 + (i % 3)) for i, name in enumerate(names)]
with ThreadPoolExecutor(max_workers=2) as pool:
    for errs in pool.map(one_schema, jobs):
        for e in errs:
            check(False, e)
        if not errs:
            n_valid += 1
            check(True, "")
print(f"schemas: {n_valid} of {len(names)} replies valid and finished")

# json_object: any object
for seed in (1, 2, 3):
    status, r = chat({"response_format": {"type": "json_object"}}, seed=seed)
    check(status == 200, f"json_object: HTTP {status}: {r}")
    if status == 200:
        content = r["choices"][0]["message"]["content"]
        try:
            check(isinstance(json.loads(content), dict), f"json_object seed {seed}: not an object: {content!r}")
        except Exception as e:
            check(False, f"json_object seed {seed}: not JSON ({e}): {content!r}")

# keywords the compiler cannot honour: a 400 that names them
unsup = os.environ["UNSUPPORTED"]
expected = {}
for line in open(os.path.join(unsup, "expected.txt")):
    if line.strip() and not line.startswith("#"):
        f, kw = line.split()
        expected[f] = kw
check(len(expected) >= 6, f"only {len(expected)} unsupported schemas")
for f, kw in sorted(expected.items()):
    schema = json.load(open(os.path.join(unsup, f)))
    rf = {"type": "json_schema", "json_schema": {"name": "x", "schema": schema, "strict": True}}
    status, r = chat({"response_format": rf})
    msg = r.get("error", {}).get("message", "")
    check(status == 400 and kw in msg, f"{f}: want a 400 naming '{kw}', got {status}: {msg}")

# llama.cpp's grammar field, in chat and in completions
g = 'root ::= "answer: " [0-9]{1,4} ("." [0-9]{1,2})?'
status, r = chat({"grammar": g}, max_tokens=16)
check(status == 200, f"grammar chat: HTTP {status}: {r}")
if status == 200:
    content = r["choices"][0]["message"]["content"]
    check(re.fullmatch(r"answer: [0-9]{1,4}(\.[0-9]{1,2})?", content) is not None, f"grammar chat: {content!r}")
status, r = post("/v1/completions", {"model": "m", "prompt": "The value is", "max_tokens": 16, "grammar": g,
                                     "temperature": 1.0, "seed": 5})
check(status == 200, f"grammar completion: HTTP {status}: {r}")
if status == 200:
    text = r["choices"][0]["text"]
    check(re.fullmatch(r"answer: [0-9]{1,4}(\.[0-9]{1,2})?", text) is not None, f"grammar completion: {text!r}")
# (the last: nested rules that can each match nothing, 2^30 parse stacks at the start)
ambiguous = "root ::= r1 r1\n" + "".join(f"r{i} ::= r{i + 1} r{i + 1}\n" for i in range(1, 30)) + 'r30 ::= "x" | ""\n'
for bad, want in (('root ::= "a', "unexpected end"), ("root ::= missing", "never defined"), ("x ::= \"a\"", "root"),
                  (ambiguous, "too ambiguous")):
    status, r = chat({"grammar": bad}, max_tokens=4)
    msg = r.get("error", {}).get("message", "")
    check(status == 400 and want in msg and r["error"].get("param") == "grammar", f"bad grammar {bad!r}: {status} {msg}")
# one constraint at a time; response_format's own shape
status, r = chat({"grammar": g, "response_format": {"type": "json_object"}})
check(status == 400, f"grammar + response_format: {status}")
status, r = chat({"response_format": {"type": "json_schema"}})
check(status == 400, f"json_schema without its object: {status}")
status, r = chat({"response_format": {"type": "yaml"}})
check(status == 400 and "yaml" in r["error"]["message"], f"unknown response_format type: {status}")

print(f"schema client: {checks} checks, {fails} failed")
sys.exit(1 if fails else 0)
