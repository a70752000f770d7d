// serve_openai_client.js -- the official `openai` npm client against
// `pocketllm serve` (run by test_serve_openai.sh with NODE_PATH set to the
// pinned install of scripts/install-test-npm.sh).  Environment: BASE (the
// server's /v1 URL), API_KEY, MODEL (the served name), THINK_BASE (a second
// server whose template opens a think block).  Prints one line per failed
// check and exits 1 if any failed.
'use strict';
const { check, mkClient, streamChat, expectError, run } = require('./openai_check');

const client = mkClient(process.env.BASE, process.env.API_KEY, 60000);
const MODEL = process.env.MODEL;
const user = (text) => [{ role: 'user', content: text }];

async function streamText(params) {
  const stream = await client.completions.create({ ...params, stream: true });
  let text = '', finish = null;
  for await (const chunk of stream) {
    for (const ch of chunk.choices) {
      text += ch.text;
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  return { text, finish };
}

async function main() {
  // the model list
  const models = [];
  for await (const m of client.models.list()) models.push(m);
  check(models.length === 1 && models[0].id === MODEL, 'models.list: ' + JSON.stringify(models));
  const one = await client.models.retrieve(MODEL);
  check(one.id === MODEL && one.object === 'model', 'models.retrieve: ' + JSON.stringify(one));

  // chat, whole and streamed: the same greedy answer
  const params = { model: MODEL, messages: user('Tell me about the sea.'), max_tokens: 24, temperature: 0 };
  const whole = await client.chat.completions.create(params);
  const msg = whole.choices[0].message;
  check(whole.object === 'chat.completion' && whole.choices.length === 1, 'chat object/choices');
  check(msg.role === 'assistant' && typeof msg.content === 'string', 'chat message: ' + JSON.stringify(msg));
  check(['stop', 'length'].includes(whole.choices[0].finish_reason), 'chat finish_reason');
  check(whole.usage.prompt_tokens > 5 && whole.usage.completion_tokens >= 1 && whole.usage.completion_tokens <= 24 &&
        whole.usage.total_tokens === whole.usage.prompt_tokens + whole.usage.completion_tokens, 'chat usage ' + JSON.stringify(whole.usage));
  const streamed = await streamChat(client, params);
  check(streamed.content === msg.content, `streamed chat '${streamed.content}' != whole '${msg.content}'`);
  check(streamed.reasoning === (msg.reasoning_content || ''), 'streamed reasoning differs');
  check(streamed.finish === whole.choices[0].finish_reason, 'streamed finish_reason');
  check(streamed.roles === 1, 'the role comes once');
  check(streamed.usage && streamed.usage.completion_tokens === whole.usage.completion_tokens &&
        streamed.usage.prompt_tokens === whole.usage.prompt_tokens, 'streamed usage ' + JSON.stringify(streamed.usage));

  // a long greedy answer, then a stop string taken from its middle: the
  // text ends right before it, streamed or not, and never contains it
  const long = await client.chat.completions.create({ ...params, max_tokens: 40, messages: user('Count to twenty.') });
  const full = long.choices[0].message.content;
  check(full.length >= 8, 'an answer long enough to cut: ' + JSON.stringify(full));
  if (full.length >= 8) {
    const at = Math.floor(full.length / 2);
    const stop = full.slice(at, at + 3);
    const want = full.slice(0, full.indexOf(stop));
    const cut = await client.chat.completions.create({ ...params, max_tokens: 40, messages: user('Count to twenty.'), stop: [stop, 'never-seen'] });
    check(cut.choices[0].message.content === want, `stop '${stop}': '${cut.choices[0].message.content}' != '${want}'`);
    check(cut.choices[0].finish_reason === 'stop', 'stop: finish_reason ' + cut.choices[0].finish_reason);
    const cs = await streamChat(client, { ...params, max_tokens: 40, messages: user('Count to twenty.'), stop });
    check(cs.content === want, `streamed stop '${stop}': '${cs.content}' != '${want}'`);
  }

  // n choices, seeded sampling: deterministic, and the choices differ
  const sampled = { model: MODEL, messages: user('Hello'), max_tokens: 12, temperature: 1.0, top_k: 40, seed: 42, n: 3 };
  const s1 = await client.chat.completions.create(sampled);
  const s2 = await client.chat.completions.create(sampled);
  check(s1.choices.length === 3 && s1.choices.map((c) => c.index).join() === '0,1,2', 'n=3 choices');
  check(JSON.stringify(s1.choices.map((c) => c.message.content)) === JSON.stringify(s2.choices.map((c) => c.message.content)),
        'the same seed gives the same choices');
  check(new Set(s1.choices.map((c) => c.message.content)).size > 1, 'seed + k: choices differ');

  // log-probabilities
  const lp = await client.chat.completions.create({ ...params, max_tokens: 6, logprobs: true, top_logprobs: 3 });
  const content = lp.choices[0].logprobs && lp.choices[0].logprobs.content;
  check(Array.isArray(content) && content.length >= 1, 'chat logprobs.content');
  if (Array.isArray(content))
    for (const t of content) {
      check(t.logprob <= 0 && t.top_logprobs.length === 3 && Array.isArray(t.bytes), 'logprob entry ' + JSON.stringify(t));
      // greedy: the chosen token is the most likely
      check(Math.abs(t.top_logprobs[0].logprob - t.logprob) < 1e-6, 'greedy picks the top token');
    }

  // completions, whole and streamed
  const cp = { model: MODEL, prompt: 'Once upon a time', max_tokens: 16, temperature: 0 };
  const tw = await client.completions.create(cp);
  check(tw.object === 'text_completion' && typeof tw.choices[0].text === 'string', 'completion object');
  const ts = await streamText(cp);
  check(ts.text === tw.choices[0].text, `streamed completion '${ts.text}' != '${tw.choices[0].text}'`);
  check(ts.finish === tw.choices[0].finish_reason, 'streamed completion finish_reason');
  const tl = await client.completions.create({ ...cp, logprobs: 2, echo: false });
  check(tl.choices[0].logprobs && tl.choices[0].logprobs.tokens.length === tl.choices[0].logprobs.token_logprobs.length,
        'completion logprobs');
  const te = await client.completions.create({ ...cp, echo: true });
  check(te.choices[0].text === 'Once upon a time' + tw.choices[0].text, 'echo');
  const tes = await streamText({ ...cp, echo: true });
  check(tes.text === 'Once upon a time' + tw.choices[0].text, `streamed echo '${tes.text}'`);
  const tp = await client.completions.create({ model: MODEL, prompt: ['Once', 'Twice'], max_tokens: 4, temperature: 0 });
  check(tp.choices.length === 2 && tp.usage.prompt_tokens >= 2, 'two prompts');

  // refusals come back as the client's errors
  await expectError(client.chat.completions.create({ ...params, max_tokens: -1 }), 400, 'max_tokens', 'negative max_tokens');
  await expectError(client.chat.completions.create({ ...params, tools: [{ type: 'function', function: { name: 'no spaces' } }] }),
                    400, 'tools', 'a bad tool name');
  await expectError(client.chat.completions.create({ ...params, response_format: { type: 'yaml' } }), 400,
                    'response_format', 'an unknown response_format');
  const noKey = mkClient(process.env.BASE, 'wrong-key', 60000);
  await expectError(noKey.chat.completions.create(params), 401, 'API key', 'wrong key');

  // a template whose generation prompt opens a think block: the reply is
  // reasoning_content, streamed or not
  const think = mkClient(process.env.THINK_BASE, 'unused', 60000);
  const tparams = { model: MODEL, messages: user('Think about it.'), max_tokens: 10, temperature: 0,
                    chat_template_kwargs: { enable_thinking: true } };
  const tw2 = await think.chat.completions.create(tparams);
  const tm = tw2.choices[0].message;
  check(typeof tm.reasoning_content === 'string' && tm.reasoning_content.length > 0, 'reasoning_content: ' + JSON.stringify(tm));
  const ts2 = await streamChat(think, tparams);
  check(ts2.reasoning === tm.reasoning_content && ts2.content === tm.content, 'streamed reasoning_content differs');

}

run('openai client', main);
