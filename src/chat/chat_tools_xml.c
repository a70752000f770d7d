/*
 * chat_tools_xml.c -- the tool-call parser's steps for the XML formats
 * (Qwen3-Coder / Qwen3.5's <function=f><parameter=p>, MiniMax's <invoke>,
 * GLM's <arg_key>/<arg_value>, DeepSeek's DSML, ...): each parameter's
 * value is raw text, turned into JSON by the type the tool's schema gives
 * it.  The arguments object is built as the parameters arrive: a string
 * value streams out escaped while it is written; any other value is
 * parsed as JSON once complete (a string when it does not parse as its
 * type demands).
 */
#include <string.h>

#include "chat/chat_tools_parser.h"

static void args_str(pl_tool_parser *p, const char *s) { pl_tp_args(p, s, strlen(s)); }

static void args_escaped(pl_tool_parser *p, size_t a, size_t b) {
    if (b <= a) return;
    pl_tsb e = {0};
    pl_json_escape(&e, p->text.s + a, b - a);
    if (e.oom) pl_tp_botch(p, "out of memory");
    else pl_tp_args(p, e.s, e.len);
    pl_tsb_free(&e);
}

static bool is_text(const char *s, size_t n, const char *lit) { return strlen(lit) == n && memcmp(s, lit, n) == 0; }

/* A complete non-string value: JSON of an allowed type, else a string. */
static void args_value(pl_tool_parser *p, size_t a, size_t b) {
    const char *raw = p->text.s + a;
    size_t a2 = a, b2 = b;
    while (a2 < b2 && pl_tp_ws(p->text.s[a2])) a2++;
    while (b2 > a2 && pl_tp_ws(p->text.s[b2 - 1])) b2--;
    const char *t = p->text.s + a2;
    size_t tn = b2 - a2;
    unsigned mask = p->ptypes, jt = pl_json_type_of(t, tn);
    if (jt && (mask == 0 || (jt != PL_JT_STR && (jt & mask)))) {
        pl_tp_args(p, t, tn);
        return;
    }
    if ((mask & PL_JT_BOOL) && (is_text(t, tn, "True") || is_text(t, tn, "False"))) {
        args_str(p, t[0] == 'T' ? "true" : "false");
        return;
    }
    if ((mask & PL_JT_NULL) && is_text(t, tn, "None")) {
        args_str(p, "null");
        return;
    }
    args_str(p, "\"");
    args_escaped(p, (size_t)(raw - p->text.s), b);
    args_str(p, "\"");
}

static int step_value(pl_tool_parser *p) {
    const pl_tool_spec *s = p->spec;
    size_t cn;
    const char *close = pl_tp_trim(s->value_close, &cn);
    bool streamed = p->ptypes == PL_JT_STR;
    size_t at = pl_tp_find(p, p->vscan, close, cn);
    if (at == (size_t)-1) {
        size_t hold = pl_tp_partial(p, p->vstart, close, cn);
        size_t safe = p->text.len - hold;
        p->vscan = safe;
        if (streamed) {
            if (s->strip_nl && safe > p->vemit && p->text.s[safe - 1] == '\n') safe--;
            if (safe > p->vemit) {
                args_escaped(p, p->vemit, safe);
                p->vemit = safe;
            }
        }
        return R_WAIT;
    }
    size_t end = at;
    if (s->strip_nl && end > p->vstart && p->text.s[end - 1] == '\n') end--;
    if (streamed) {
        args_escaped(p, p->vemit, end);
        args_str(p, "\"");
    } else {
        args_value(p, p->vstart, end);
    }
    p->pos = at + cn;
    p->st = P_X_PARAM;
    return R_GO;
}

/* expect a literal: R_GO matched, else waits or botches */
static int need(pl_tool_parser *p, const char *lit, bool skip_ws) {
    int m = pl_tp_expect(p, lit, skip_ws);
    if (m < 0) return R_WAIT;
    if (m == 0) return pl_tp_botch(p, "tool call: expected %s", lit);
    return R_GO;
}

int pl_tp_step_xml(pl_tool_parser *p) {
    const pl_tool_spec *s = p->spec;
    const char *t = p->text.s;
    switch (p->st) {
    case P_X_CALL: {
        bool call;
        int r = pl_tp_next_in_section(p, &call);
        if (call) p->st = P_X_NAME;
        return r;
    }
    case P_X_NAME: {
        size_t j;
        const int r = pl_tp_name(p, &j);
        if (r != R_GO) return r;
        p->args_start = p->pos;
        p->args_end = j;
        p->pos = j;
        p->st = P_X_NAME_CLOSE;
        return R_GO;
    }
    case P_X_NAME_CLOSE: {
        size_t n;
        pl_tp_trim(s->name_close, &n);
        if (n) {
            int r = need(p, s->name_close, true);
            if (r != R_GO) return r;
        }
        if (!pl_tp_call_start(p, p->args_start, p->args_end)) return R_IDLE;
        p->nparams = 0;
        p->st = P_X_PARAM;
        return R_GO;
    }
    case P_X_PARAM: {
        if (!pl_tp_skip_ws(p)) return R_WAIT;
        int m = pl_tp_expect(p, s->param_open, false);
        if (m < 0) return R_WAIT;
        if (m > 0) {
            p->st = P_X_KEY;
            return R_GO;
        }
        int r = need(p, s->call_close, false);
        if (r != R_GO) return r;
        args_str(p, p->nparams ? "}" : "{}");
        pl_tp_call_end(p);
        pl_tp_after_call(p);
        return R_GO;
    }
    case P_X_KEY: {
        size_t j = p->pos;
        while (j < p->text.len && !strchr("<>\"\n\r", t[j])) j++;
        if (j - p->pos > 256) return pl_tp_botch(p, "a tool call's parameter name is too long");
        if (j == p->text.len) return R_WAIT;
        if (j == p->pos) return pl_tp_botch(p, "tool call parameter without a name");
        p->args_start = p->pos;
        p->args_end = j;
        p->pos = j;
        p->st = P_X_KEY_CLOSE;
        return R_GO;
    }
    case P_X_KEY_CLOSE: {
        /* DSML: "p" string="true"> -- the attribute is skipped, the schema types the value */
        int r = s->dsml ? pl_tp_skip_to(p, ">") : need(p, s->key_close, false);
        if (r != R_GO) return r;
        char key[257];
        size_t kn = p->args_end - p->args_start;
        memcpy(key, t + p->args_start, kn);
        key[kn] = 0;
        p->ptypes = p->fn_schema ? pl_tools_param_types(p->fn_schema, key) : 0;
        args_str(p, p->nparams++ ? ", \"" : "{\"");
        args_escaped(p, p->args_start, p->args_end);
        args_str(p, "\": ");
        p->st = P_X_VALUE_OPEN;
        return R_GO;
    }
    case P_X_VALUE_OPEN:
        if (s->value_open) {
            int r = need(p, s->value_open, true);
            if (r != R_GO) return r;
        }
        if (s->strip_nl) {
            if (p->pos == p->text.len) return R_WAIT;
            if (t[p->pos] == '\n') p->pos++;
        }
        p->vstart = p->vemit = p->vscan = p->pos;
        if (p->ptypes == PL_JT_STR) args_str(p, "\"");
        p->st = P_X_VALUE;
        return R_GO;
    case P_X_VALUE: return step_value(p);
    default: return pl_tp_botch(p, "internal error: state %d", p->st);
    }
}
