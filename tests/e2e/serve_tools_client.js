// serve_tools_client.js -- tool calling through the official `openai`
// client (run by test_serve_tools.sh).  Environment: SERVERS, a JSON list
// of {name, base, parallel, think} -- one server per chat template (Qwen3's
// Hermes-style calls, Llama 3's JSON calls, Qwen3-Coder's XML calls, QwQ's
// Hermes calls after an open think block) -- and NOTOOLS, the /v1 URL of a
// server whose template takes no tools.  On each: tool_choice required and
// named always yield calls (forced by the grammar); streamed deltas
// reassemble into exactly the non-streamed tool_calls; parallel calls; a
// round trip with role "tool" messages; auto; a call cut by max_tokens;
// refusals.
'use strict';
const { check, mkClient, expectError, run } = require('./openai_check');

const servers = JSON.parse(process.env.SERVERS);
// (no string lengths: the XML formats write raw values, where they cannot
// be held, and refuse them -- the budget still ends every call)
const TOOLS = [
  { type: 'function', function: { name: 'get_weather', description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city', 'unit'], additionalProperties: false } } },
  { type: 'function', function: { name: 'get_time', description: 'The time in a time zone',
    parameters: { type: 'object', properties: { tz: { type: 'string' },
      seconds: { type: 'boolean' } }, required: ['tz'], additionalProperties: false } } },
  { type: 'function', function: { name: 'set_mode', description: 'Switch the mode',
    parameters: { type: 'object', properties: { mode: { type: 'string', enum: ['eco', 'fast', 'off'] } },
      required: ['mode'], additionalProperties: false } } },
];
const NAMES = TOOLS.map((t) => t.function.name);
// the same tools with every free string argument bounded (s.bounded)
const BOUNDED = JSON.parse(JSON.stringify(TOOLS));
for (const t of BOUNDED)
  for (const p of Object.values(t.function.parameters.properties))
    if (p.type === 'string' && !p.enum) p.maxLength = 12;
const MARKUP = ['<tool_call>', '</tool_call>', '<function=', '<parameter=', '[TOOL_CALLS]', '"parameters"'];
const user = (text) => [{ role: 'user', content: text }];

function checkCalls(what, calls, onlyName) {
  check(Array.isArray(calls) && calls.length >= 1, `${what}: no tool_calls`);
  const ids = new Set();
  for (const c of calls || []) {
    check(typeof c.id === 'string' && c.id.length > 0 && !ids.has(c.id), `${what}: bad or repeated id ${c.id}`);
    ids.add(c.id);
    check(c.type === 'function', `${what}: type ${c.type}`);
    check(NAMES.includes(c.function.name), `${what}: unknown name ${c.function.name}`);
    if (onlyName) check(c.function.name === onlyName, `${what}: called ${c.function.name}, not ${onlyName}`);
    let args = null;
    try { args = JSON.parse(c.function.arguments); } catch (e) { check(false, `${what}: arguments not JSON: ${c.function.arguments}`); continue; }
    const need = { get_weather: ['city', 'unit'], get_time: ['tz'], set_mode: ['mode'] }[c.function.name] || [];
    for (const k of need) check(args && k in args, `${what}: arguments lack ${k}: ${c.function.arguments}`);
    if (c.function.name === 'get_weather') check(['celsius', 'fahrenheit'].includes(args.unit), `${what}: unit ${args.unit}`);
  }
}

function noMarkup(what, text, s) {
  for (const m of MARKUP) check(!(text || '').includes(m), `${what}: tool-call markup '${m}' in content: ${text}`);
  // Functionary v3.2: ">>>" heads each part, "all\n" marks a text part
  if (s && s.name === 'functionary') {
    check(!(text || '').includes('>>>'), `${what}: '>>>' in content: ${text}`);
    check(!(text || '').startsWith('all\n'), `${what}: the text marker 'all' in content: ${text}`);
  }
}

// a streamed chat: content, reasoning, and the tool calls rebuilt from their deltas
async function streamTools(client, params) {
  const stream = await client.chat.completions.create({ ...params, stream: true });
  let content = '', reasoning = '', finish = null;
  const calls = [];
  for await (const chunk of stream) {
    for (const ch of chunk.choices) {
      if (ch.delta.content) content += ch.delta.content;
      if (ch.delta.reasoning_content) reasoning += ch.delta.reasoning_content;
      for (const d of ch.delta.tool_calls || []) {
        if (!calls[d.index]) {
          check(d.id && d.type === 'function' && d.function && d.function.name && d.function.arguments === '',
                `the first delta of call ${d.index} lacks id/type/name or has arguments: ${JSON.stringify(d)}`);
          calls[d.index] = { id: d.id, type: d.type, function: { name: d.function.name, arguments: '' } };
        } else {
          check(!d.id && !d.type && !(d.function && d.function.name), `a later delta of call ${d.index} repeats its head: ${JSON.stringify(d)}`);
          calls[d.index].function.arguments += (d.function && d.function.arguments) || '';
        }
      }
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  return { content, reasoning, finish, calls };
}

async function onServer(s) {
  const client = mkClient(s.base, 'none', 120000);
  const base = { model: 'm', messages: user('What is the weather in Paris?'), tools: s.bounded ? BOUNDED : TOOLS, max_tokens: 160,
                 temperature: 0.8, seed: 3 };
  // QwQ's template opens the think block in the prompt only when told to
  // think (otherwise it closes it at once)
  if (s.think) base.chat_template_kwargs = { enable_thinking: true };

  // required: a call, forced; streamed == whole
  // (s.onebias: where nothing closes the calls, the tokens that would
  // start another are biased away, so the one call ends the reply)
  const req = { ...base, tool_choice: 'required', logit_bias: s.onebias || {} };
  const whole = await client.chat.completions.create(req);
  const ch = whole.choices[0];
  checkCalls(`${s.name} required`, ch.message.tool_calls);
  check(ch.finish_reason === 'tool_calls', `${s.name} required: finish_reason ${ch.finish_reason}`);
  noMarkup(`${s.name} required`, ch.message.content, s);
  if (s.think) check(typeof ch.message.reasoning_content === 'string', `${s.name}: no reasoning_content before the call`);
  const st = await streamTools(client, req);
  check(st.finish === 'tool_calls', `${s.name} streamed: finish_reason ${st.finish}`);
  noMarkup(`${s.name} streamed`, st.content, s);
  const strip = (calls) => JSON.stringify((calls || []).map((c) => [c.type, c.function.name, c.function.arguments]));
  check(strip(st.calls) === strip(ch.message.tool_calls),
        `${s.name}: streamed calls ${strip(st.calls)} != whole ${strip(ch.message.tool_calls)}`);
  check((st.content || null) === (ch.message.content || null), `${s.name}: streamed content '${st.content}' != '${ch.message.content}'`);
  if (s.think) check(st.reasoning === ch.message.reasoning_content, `${s.name}: streamed reasoning differs`);

  // a named function: only that one
  for (const seed of [1, 2]) {
    const r = await client.chat.completions.create({ ...base, seed, tool_choice: { type: 'function', function: { name: 'get_time' } } });
    checkCalls(`${s.name} named seed ${seed}`, r.choices[0].message.tool_calls, 'get_time');
  }

  // parallel calls: with the end of generation biased away, the grammar's
  // "one or more" is taken more than once (and the budget still closes it)
  if (s.parallel) {
    // (the vocabulary's three end-of-generation tokens biased away;
    // thinking off: a random model's think block would spend the budget;
    // set_mode's one enum argument keeps each call short; where the calls
    // are a JSON list, s.bias also biases away the tokens that close it)
    const par = { ...base, tool_choice: { type: 'function', function: { name: 'set_mode' } }, parallel_tool_calls: true,
      max_tokens: 200, logit_bias: { '151643': -100, '151645': -100, '128247': -100, ...(s.bias || {}) },
      chat_template_kwargs: { enable_thinking: false } };
    const r = await client.chat.completions.create(par);
    checkCalls(`${s.name} parallel`, r.choices[0].message.tool_calls, 'set_mode');
    check((r.choices[0].message.tool_calls || []).length >= 2, `${s.name} parallel: ${JSON.stringify(r.choices[0].message)}`);
    const st2 = await streamTools(client, par);
    check(strip(st2.calls) === strip(r.choices[0].message.tool_calls), `${s.name} parallel streamed differs`);
    const one = await client.chat.completions.create({ ...par, parallel_tool_calls: false });
    check((one.choices[0].message.tool_calls || []).length === 1, `${s.name} parallel_tool_calls false: ${JSON.stringify(one.choices[0].message)}`);
  }

  // the round trip: the calls and their results go back through the template
  const calls = ch.message.tool_calls || [];
  const msgs = [...user('What is the weather in Paris?'), { role: 'assistant', content: ch.message.content, tool_calls: calls },
    ...calls.map((c, i) => ({ role: 'tool', tool_call_id: c.id, content: JSON.stringify({ result: 'sunny ' + i }) }))];
  const back = await client.chat.completions.create({ ...base, messages: msgs, tool_choice: 'auto', max_tokens: 24 });
  check(['stop', 'length', 'tool_calls'].includes(back.choices[0].finish_reason), `${s.name} round trip: ${back.choices[0].finish_reason}`);
  check(back.usage.prompt_tokens > whole.usage.prompt_tokens, `${s.name} round trip: the tool results did not reach the prompt`);
  noMarkup(`${s.name} round trip`, back.choices[0].message.content, s);
  const backSt = await streamTools(client, { ...base, messages: msgs, tool_choice: 'auto', max_tokens: 24 });
  check(strip(backSt.calls) === strip(back.choices[0].message.tool_calls) && (backSt.content || null) === (back.choices[0].message.content || null),
        `${s.name} round trip streamed differs`);

  // auto: text or calls, never markup in the text
  for (const seed of [4, 5, 6]) {
    const r = await client.chat.completions.create({ ...base, seed, tool_choice: 'auto', max_tokens: 48, temperature: 1 });
    const m = r.choices[0].message;
    noMarkup(`${s.name} auto seed ${seed}`, m.content, s);
    if (m.tool_calls) checkCalls(`${s.name} auto seed ${seed}`, m.tool_calls);
  }
  // none: no calls
  const none = await client.chat.completions.create({ ...base, tool_choice: 'none', max_tokens: 16 });
  check(!none.choices[0].message.tool_calls && typeof none.choices[0].message.content === 'string', `${s.name} none: ${JSON.stringify(none.choices[0].message)}`);
  noMarkup(`${s.name} none`, none.choices[0].message.content, s);
  // no tools at all: a plain chat (the reply still parsed where the prompt opens its first part)
  const plain = await client.chat.completions.create({ ...base, tools: undefined, max_tokens: 16 });
  noMarkup(`${s.name} no tools`, plain.choices[0].message.content, s);
  const plainSt = await streamTools(client, { ...base, tools: undefined, max_tokens: 16 });
  check(plainSt.content === (plain.choices[0].message.content || ''), `${s.name} no tools streamed '${plainSt.content}' != '${plain.choices[0].message.content}'`);
  // a call cut by max_tokens: text and "length", never a 500
  const cut = await client.chat.completions.create({ ...req, max_tokens: 3 });
  check(cut.choices[0].finish_reason === 'length', `${s.name} cut: finish_reason ${cut.choices[0].finish_reason}`);
  // refusals
  await expectError(client.chat.completions.create({ ...base, tool_choice: { type: 'function', function: { name: 'nope' } } }),
                    400, 'nope', `${s.name} unknown named function`);
  await expectError(client.chat.completions.create({ ...base, tools: [{ type: 'function', function: { name: 'f',
    parameters: { type: 'object', properties: { a: { not: { type: 'string' } } } } } }], tool_choice: 'required' }),
                    400, 'not', `${s.name} unsupported schema keyword`);
  await expectError(client.chat.completions.create({ ...base, tools: undefined, tool_choice: 'required' }),
                    400, 'tool_choice', `${s.name} required without tools`);
}

async function main() {
  for (const s of servers) await onServer(s);
  const nt = mkClient(process.env.NOTOOLS, 'none', 60000);
  await expectError(nt.chat.completions.create({ model: 'm', messages: user('hi'), tools: TOOLS }), 400, 'tools',
                    'a template without tools');
}

run('tools client', main);
