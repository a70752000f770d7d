#!/usr/bin/python3
# jinja2_reference.py -- the reference side of the chat-template comparison:
# renders every template in a folder over the conversations of a cases file
# with Python's jinja2 set up exactly as Hugging Face transformers'
# apply_chat_template sets it up (ImmutableSandboxedEnvironment with
# trim_blocks and lstrip_blocks, the loopcontrols extension and the
# {% generation %} tag, HF's own tojson filter, raise_exception and
# strftime_now), and writes what came out for pocketllm to be compared with.
#
# usage: jinja2_reference.py TEMPLATE_DIR CASES.json OUT_DIR [--random N --seed S]
#
# --random N adds N generated conversations (a seeded mix of roles, texts
# with Unicode, whitespace and Jinja-like syntax, reasoning, tool calls with
# nested arguments, tools, add_generation_prompt and enable_thinking).
#
# Writes, for each template T (file name without .jinja) and case C:
#   OUT_DIR/T/C.out   the rendered text (UTF-8), when rendering succeeded
#   OUT_DIR/T/C.err   one line "ExceptionType: message", when it raised
#   OUT_DIR/T/COMPILE.err  when the template does not even compile
# and, for the pocketllm side, the inputs:
#   OUT_DIR/cases/C.messages.json, OUT_DIR/cases/tools-SET.json,
#   OUT_DIR/T/C.args (the `pocketllm template` flags giving the same
#   variables, one a line) and OUT_DIR/T/C.vars.json (extra variables)
#
# Run with Debian's /usr/bin/python3 and its python3-jinja2.
import json
import os
import sys
from datetime import datetime

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment


def make_environment(now):
    """The environment of transformers' _compile_jinja_template."""

    class AssistantTracker(jinja2.ext.Extension):
        # {% generation %}...{% endgeneration %}: HF records where assistant
        # text lies; for the rendered text it is a call block whose caller
        # output is returned unchanged.
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return jinja2.nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

        @jinja2.pass_eval_context
        def _generation_support(self, context, caller):
            return caller()

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return now.strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def case_variables(spec, stem, case):
    """Template variables as apply_chat_template passes them, and the name
    of the tool set used (None when the case has no tools)."""
    over = spec.get("template_overrides", {}).get(stem, {})
    tool_set = case.get("tools", over.get("tools"))
    tools = spec["tool_sets"][tool_set] if tool_set is not None else None
    v = {
        "messages": case["messages"],
        "tools": tools,
        "documents": None,
        "add_generation_prompt": bool(case.get("add_generation_prompt", False)),
        "bos_token": spec["bos_token"],
        "eos_token": spec["eos_token"],
    }
    if "enable_thinking" in case:
        v["enable_thinking"] = case["enable_thinking"]
    extra = dict(over.get("vars", {}))
    extra.update(case.get("vars", {}))
    v.update(extra)
    return v, tool_set, extra


def pocketllm_args(spec, case, casedir, tool_set, extra, vars_path):
    """The `pocketllm template` flags that give the same variables."""
    args = ["--messages", os.path.join(casedir, case["name"] + ".messages.json"),
            "--bos", spec["bos_token"], "--eos", spec["eos_token"], "--now", spec["now"]]
    if case.get("add_generation_prompt"):
        args.append("--add-generation-prompt")
    if "enable_thinking" in case:
        args += ["--enable-thinking", "true" if case["enable_thinking"] else "false"]
    if tool_set is not None:
        args += ["--tools", os.path.join(casedir, "tools-" + tool_set + ".json")]
    if extra:
        write(vars_path, json.dumps(extra, ensure_ascii=False))
        args += ["--vars", vars_path]
    return "\n".join(args) + "\n"


RANDOM_TEXTS = [
    "Hello", "  spaced  ", "\n\nnewlines\n", "Grüße 世界 🚀", "{{ not jinja }}", "{% raw %}", "a\tb", "",
    "'quotes' \"double\"", "<think>\nhidden\n</think>\n\nvisible", "ΣΊΣΥΦΟΣ", "x" * 50, "line1\nline2",
    "<tool_call>", "\\u00e9 backslash \\", "ß ﬁ İ", "<tool_response>r</tool_response>", "0", "None", "True",
]


def random_cases(n, seed):
    """n seeded random conversations (the same n and seed give the same ones
    on one Python; the comparison never needs more than that)."""
    import random
    rnd = random.Random(seed)

    def value(depth=0):
        r = rnd.random()
        if depth > 2 or r < 0.3:
            return rnd.choice(RANDOM_TEXTS)
        if r < 0.4:
            return rnd.randint(-5, 1000)
        if r < 0.5:
            return rnd.choice([1.5, 0.1, 1e-7, 2.0, -3.25, 1e20])
        if r < 0.6:
            return rnd.choice([True, False, None])
        if r < 0.8:
            return [value(depth + 1) for _ in range(rnd.randint(0, 3))]
        return {rnd.choice(["a", "b", "city", "unit", "nested", "é"]): value(depth + 1) for _ in range(rnd.randint(0, 3))}

    def tool_call():
        args = {k: value(1) for k in rnd.sample(["city", "unit", "days", "q", "opts"], rnd.randint(0, 3))}
        if rnd.random() < 0.2:
            args = json.dumps(args)
        return {"id": "call%05d" % rnd.randint(0, 99999), "type": "function",
                "function": {"name": rnd.choice(["get_weather", "search", "f"]), "arguments": args}}

    cases = []
    for k in range(n):
        msgs = []
        if rnd.random() < 0.5:
            msgs.append({"role": "system", "content": rnd.choice(RANDOM_TEXTS)})
        for _ in range(rnd.randint(1, 5)):
            msgs.append({"role": "user", "content": rnd.choice(RANDOM_TEXTS)})
            if rnd.random() < 0.7:
                m = {"role": "assistant", "content": rnd.choice(RANDOM_TEXTS + [None])}
                if rnd.random() < 0.3:
                    m["reasoning_content"] = rnd.choice(RANDOM_TEXTS)
                msgs.append(m)
                if rnd.random() < 0.3:
                    m["tool_calls"] = [tool_call() for _ in range(rnd.randint(1, 2))]
                    for tc in m["tool_calls"]:
                        msgs.append({"role": "tool", "tool_call_id": tc["id"], "content": rnd.choice(RANDOM_TEXTS)})
        c = {"name": "random%03d" % k, "add_generation_prompt": rnd.random() < 0.6, "messages": msgs}
        if rnd.random() < 0.5:
            c["enable_thinking"] = rnd.random() < 0.5
        if rnd.random() < 0.4:
            c["tools"] = "WEATHER"
        cases.append(c)
    return cases


def one_line(e):
    return (type(e).__name__ + ": " + str(e)).replace("\n", " ")


def write(path, data):
    with open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)


def main():
    args = sys.argv[1:]
    n_random, seed = 0, 0
    if len(args) == 7 and args[3] == "--random" and args[5] == "--seed":
        n_random, seed = int(args[4]), int(args[6])
        args = args[:3]
    if len(args) != 3:
        sys.stderr.write("usage: jinja2_reference.py TEMPLATE_DIR CASES.json OUT_DIR [--random N --seed S]\n")
        return 2
    tdir, cases_path, out = args
    with open(cases_path, encoding="utf-8") as f:
        spec = json.load(f)
    spec["cases"] += random_cases(n_random, seed)
    now = datetime.strptime(spec["now"], "%Y-%m-%dT%H:%M:%S")
    env = make_environment(now)

    casedir = os.path.join(out, "cases")
    os.makedirs(casedir, exist_ok=True)
    for case in spec["cases"]:
        write(os.path.join(casedir, case["name"] + ".messages.json"), json.dumps(case["messages"], ensure_ascii=False))
    for name, tools in spec["tool_sets"].items():
        write(os.path.join(casedir, "tools-" + name + ".json"), json.dumps(tools, ensure_ascii=False))

    names = sorted(n for n in os.listdir(tdir) if n.endswith(".jinja"))
    for name in names:
        stem = name[: -len(".jinja")]
        tout = os.path.join(out, stem)
        os.makedirs(tout, exist_ok=True)
        for case in spec["cases"]:
            _, tool_set, extra = case_variables(spec, stem, case)
            write(os.path.join(tout, case["name"] + ".args"),
                  pocketllm_args(spec, case, casedir, tool_set, extra, os.path.join(tout, case["name"] + ".vars.json")))
        with open(os.path.join(tdir, name), encoding="utf-8") as f:
            source = f.read()
        try:
            template = env.from_string(source)
        except Exception as e:  # noqa: BLE001 -- any failure is the result
            write(os.path.join(tout, "COMPILE.err"), one_line(e) + "\n")
            continue
        for case in spec["cases"]:
            v, _, _ = case_variables(spec, stem, case)
            try:
                text = template.render(**v)
            except Exception as e:  # noqa: BLE001
                write(os.path.join(tout, case["name"] + ".err"), one_line(e) + "\n")
                continue
            write(os.path.join(tout, case["name"] + ".out"), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
