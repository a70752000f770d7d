// serve_embed_client.js -- the official `openai` npm client's
// embeddings.create against `pocketllm serve` (run by
// test_serve_embeddings.sh with NODE_PATH set).  Environment: BASE (the
// /v1 URL of a server whose model pools by its own pooling_type), MODEL
// (its name), MEAN_BASE (a server started with --pooling mean), NOPOOL_BASE
// (a server whose model declares no pooling), DIR (what `pocketllm embed
// --json` printed for the same inputs: one.json, two.json, dims.json,
// ids.json, long.json, mean.json), LONG (the long input's text).  The
// vectors must equal the CLI's float for float.  Prints one line per
// failed check and exits 1 if any failed.
'use strict';
const fs = require('fs');
const path = require('path');
const { check, mkClient, expectError, run } = require('./openai_check');

const client = mkClient(process.env.BASE, 'none', 60000);
const MODEL = process.env.MODEL;
const cli = (name) => JSON.parse(fs.readFileSync(path.join(process.env.DIR, name), 'utf8'));

// float32 for float32: the server and the CLI run the same passes
function sameVectors(got, want, what) {
  check(got.length === want.length, `${what}: ${got.length} vectors, the CLI ${want.length}`);
  for (let i = 0; i < Math.min(got.length, want.length); i++) {
    const a = got[i], b = want[i];
    check(a.length === b.length, `${what}[${i}]: ${a.length} floats, the CLI ${b.length}`);
    let bad = -1;
    for (let k = 0; k < Math.min(a.length, b.length) && bad < 0; k++) if (Math.fround(a[k]) !== Math.fround(b[k])) bad = k;
    check(bad < 0, `${what}[${i}]: float ${bad} is ${a[bad]}, the CLI's ${b[bad]}`);
  }
}

const vectors = (res) => res.data.map((d) => Array.from(d.embedding));
const cliVectors = (j) => j.data.map((d) => d.embedding);

function shape(res, n, what) {
  check(res.object === 'list' && Array.isArray(res.data) && res.data.length === n, `${what}: object/data ${JSON.stringify(res).slice(0, 200)}`);
  res.data.forEach((d, i) => check(d.object === 'embedding' && d.index === i, `${what}: data[${i}] object/index`));
  check(res.model === MODEL, `${what}: model ${res.model}`);
  check(res.usage && res.usage.prompt_tokens === res.usage.total_tokens && res.usage.prompt_tokens > 0, `${what}: usage ${JSON.stringify(res.usage)}`);
}

function unit(v) {
  return Math.abs(Math.sqrt(v.reduce((s, x) => s + x * x, 0)) - 1) < 1e-5;
}

// base64 of little-endian float32s, as OpenAI sends them
function fromBase64(s) {
  const b = Buffer.from(s, 'base64');
  const out = [];
  for (let i = 0; i + 4 <= b.length; i += 4) out.push(b.readFloatLE(i));
  check(b.length % 4 === 0, `base64 of ${b.length} bytes is not whole floats`);
  return out;
}

async function post(base, body) {
  const r = await fetch(base + '/embeddings', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  return { status: r.status, body: await r.text() };
}

// BODY (a string) must get STATUS and an error message naming WORD
async function refused(body, status, word, what) {
  const r = await post(process.env.BASE, body);
  check(r.status === status, `${what}: status ${r.status}, wanted ${status} (${r.body.slice(0, 200)})`);
  let msg = '';
  try { msg = JSON.parse(r.body).error.message; } catch (e) { msg = '(not an OpenAI error) ' + r.body; }
  check(msg.includes(word), `${what}: message '${msg}' does not name '${word}'`);
}

async function main() {
  // a string, encoding float
  const one = await client.embeddings.create({ model: 'anything', input: 'Hello world', encoding_format: 'float' });
  shape(one, 1, 'string');
  sameVectors(vectors(one), cliVectors(cli('one.json')), 'string');
  check(one.usage.prompt_tokens === cli('one.json').usage.prompt_tokens, 'string: usage as the CLI counts');
  check(unit(one.data[0].embedding), 'string: a unit vector');

  // an array of strings, the client's default encoding (it asks for base64 and decodes it)
  const two = await client.embeddings.create({ model: MODEL, input: ['first text', 'second, longer text'], user: 'u1' });
  shape(two, 2, 'array');
  sameVectors(vectors(two), cliVectors(cli('two.json')), 'array (the client decoding base64)');

  // base64 asked for: the string itself
  const b64 = await client.embeddings.create({ model: MODEL, input: ['first text', 'second, longer text'], encoding_format: 'base64' });
  shape(b64, 2, 'base64');
  check(typeof b64.data[0].embedding === 'string', 'base64: a string comes back');
  if (typeof b64.data[0].embedding === 'string')
    sameVectors(b64.data.map((d) => fromBase64(d.embedding)), cliVectors(cli('two.json')), 'base64');

  // dimensions: cut, then normalised
  const dims = await client.embeddings.create({ model: MODEL, input: ['first text', 'second, longer text'], dimensions: 16, encoding_format: 'float' });
  shape(dims, 2, 'dimensions');
  check(dims.data.every((d) => d.embedding.length === 16 && unit(d.embedding)), 'dimensions: 16 floats of a unit vector');
  sameVectors(vectors(dims), cliVectors(cli('dims.json')), 'dimensions');
  const full = cliVectors(cli('two.json'))[0];
  check(!unit(full.slice(0, 16)), 'dimensions: the cut of the full vector is not already a unit vector (normalised after the cut)');

  // token ids: one array, and an array of arrays
  const ids = await client.embeddings.create({ model: MODEL, input: [[1, 2, 3, 4, 5], [42, 43]], encoding_format: 'float' });
  shape(ids, 2, 'token arrays');
  sameVectors(vectors(ids), cliVectors(cli('ids.json')), 'token arrays');
  check(ids.usage.prompt_tokens === 7, 'token arrays: 7 prompt tokens, used as given');
  const ids1 = await client.embeddings.create({ model: MODEL, input: [1, 2, 3, 4, 5], encoding_format: 'float' });
  sameVectors(vectors(ids1), cliVectors(cli('ids.json')).slice(0, 1), 'one token array');

  // longer than the server's batch: embedded in several passes
  const long = await client.embeddings.create({ model: MODEL, input: process.env.LONG, encoding_format: 'float' });
  check(long.usage.prompt_tokens > 64, `long input: ${long.usage.prompt_tokens} tokens, more than the batch`);
  sameVectors(vectors(long), cliVectors(cli('long.json')), 'long input');

  // --pooling mean on a model that declares none; without --pooling, a 400 that says how
  const mean = mkClient(process.env.MEAN_BASE, 'none', 60000);
  const m = await mean.embeddings.create({ model: MODEL, input: 'Hello world', encoding_format: 'float' });
  sameVectors(vectors(m), cliVectors(cli('mean.json')), 'serve --pooling mean');
  await expectError(mkClient(process.env.NOPOOL_BASE, 'none', 60000).embeddings.create({ model: MODEL, input: 'x' }), 400,
                    '--pooling', 'a model without pooling');

  // embeddings beside a completion: the greedy text is the one served alone
  const cparams = { model: MODEL, prompt: 'The sea is', max_tokens: 24, temperature: 0 };
  const alone = (await client.completions.create(cparams)).choices[0].text;
  const gen = client.completions.create(cparams);
  const embs = [];
  for (let i = 0; i < 4; i++) embs.push(client.embeddings.create({ model: MODEL, input: [process.env.LONG, 'Hello world'], encoding_format: 'float' }));
  const [g, ...e] = await Promise.all([gen, ...embs]);
  check(g.choices[0].text === alone, `completion beside embeddings: '${g.choices[0].text}' != alone '${alone}'`);
  e.forEach((r, i) => {
    sameVectors(vectors(r).slice(0, 1), cliVectors(cli('long.json')), `concurrent request ${i}`);
    sameVectors(vectors(r).slice(1), cliVectors(cli('one.json')), `concurrent request ${i}, second input`);
  });

  // refusals: 400s naming the problem, never a crash
  await expectError(client.embeddings.create({ model: MODEL, input: '' }), 400, 'empty', 'empty string');
  await refused('{"input":[]}', 400, 'empty', 'empty array');
  await refused('{"input":[[]]}', 400, 'empty', 'empty token array');
  await refused('{"model":"m"}', 400, 'input', 'no input');
  await refused('{"input":null}', 400, 'input', 'null input');
  await refused('{"input":"x","foo":1}', 400, 'foo', 'unknown field');
  await refused('{"input":"x","embd_normalize":2}', 400, 'embd_normalize', 'llama-server field');
  await refused('{"input":"x","encoding_format":"hex"}', 400, 'encoding_format', 'bad encoding');
  await refused('{"input":"x","dimensions":0}', 400, 'dimensions', 'dimensions 0');
  await refused('{"input":"x","dimensions":100000}', 400, 'dimensions', 'dimensions over the width');
  await refused('{"input":"x","dimensions":2.5}', 400, 'dimensions', 'fractional dimensions');
  await refused('{"input":["a",[1,2]]}', 400, 'mixes', 'mixed inputs');
  await refused('{"input":[1,-2]}', 400, 'token id', 'negative id');
  await refused('{"input":[1,99999999]}', 400, 'token id', 'id past the vocabulary');
  await refused('{"input":[1.5]}', 400, 'token id', 'fractional id');
  await refused('{"input":{"a":1}}', 400, 'input', 'an object');
  await refused('{"input":[true]}', 400, 'input', 'an array of booleans');
  await refused('{"input":"x","model":5}', 400, 'model', 'model not a string');
  await refused('{"input":"x","input":"y"}', 400, 'twice', 'a field twice');
  await refused('{"input":', 400, 'JSON', 'broken JSON');
  await refused('[1,2]', 400, 'object', 'not an object');
  await refused(JSON.stringify({ input: 'word '.repeat(400) }), 400, 'context', 'longer than the context');
  await refused(JSON.stringify({ input: Array.from({ length: 300 }, (_, i) => i + 1) }), 400, 'context', 'ids longer than the context');
  await refused(JSON.stringify({ input: Array.from({ length: 2049 }, () => 'a') }), 400, '2048', 'too many inputs');
  const get = await fetch(process.env.BASE + '/embeddings');
  check(get.status === 405, `GET /v1/embeddings: ${get.status}, wanted 405`);
  // the server is still there
  const after = await client.embeddings.create({ model: MODEL, input: 'Hello world', encoding_format: 'float' });
  sameVectors(vectors(after), cliVectors(cli('one.json')), 'after the refusals');
}

run('openai embeddings client', main);
