// openai_check.js -- shared by the tests that drive `pocketllm serve` with
// the official `openai` npm client (serve_openai_client.js,
// serve_images_client.js): the check accounting, a client, a streamed chat
// collected, an expected HTTP error, and the run that prints the count
// ("NAME: N checks, F failed", which the shell tests grep) and sets the
// exit status.
'use strict';
const { OpenAI } = require('openai');

let checks = 0, failures = 0;
function check(cond, what) {
  checks++;
  if (!cond) {
    failures++;
    console.error('FAIL: ' + what);
  }
}

const mkClient = (baseURL, apiKey, timeout) => new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout });

async function streamChat(c, params) {
  const stream = await c.chat.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  let content = '', reasoning = '', finish = null, usage = null, roles = 0, chunks = 0;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    for (const ch of chunk.choices) {
      if (ch.delta.role) roles++;
      if (ch.delta.content) content += ch.delta.content;
      if (ch.delta.reasoning_content) reasoning += ch.delta.reasoning_content;
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  return { content, reasoning, finish, usage, roles, chunks };
}

// PROMISE must fail with STATUS and a message that names WORD
async function expectError(promise, status, word, what) {
  try {
    await promise;
    check(false, what + ': no error');
  } catch (e) {
    check(e.status === status, `${what}: status ${e.status}, wanted ${status} (${e.message})`);
    check(String(e.message).includes(word), `${what}: message '${e.message}' does not name '${word}'`);
  }
}

function run(name, main) {
  main().then(() => {
    console.log(`${name}: ${checks} checks, ${failures} failed`);
    process.exit(failures ? 1 : 0);
  }).catch((e) => {
    console.error('FAIL: ' + (e && e.stack ? e.stack : e));
    process.exit(1);
  });
}

module.exports = { check, mkClient, streamChat, expectError, run };
