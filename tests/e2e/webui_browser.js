// webui_browser.js -- the chat page in a real browser (run by
// test_webui.sh): Debian's Chromium, headless, driven by puppeteer-core
// (pinned, scripts/install-test-npm.sh), against `pocketllm serve` on a
// random-weight Qwen3.  It uses the page as a person does -- typing,
// Enter, the Stop button, the settings panel, the sidebar -- and checks
// what the server answered against the server's own non-streamed greedy
// answer for the same request.  Prints "webui: N checks, M failed".
// env: BASE (the server), KEY_BASE (a second one with --api-key sekrit),
// VL_BASE (a third with a Qwen3-VL mmproj) and IMG_A, IMG_B (two PNGs),
// ASR_BASE (a fourth with a Qwen3-ASR mmproj) and SPEECH (a WAV),
// CHROMIUM, SHOT (where the screenshot goes), MODEL (the served name).
'use strict';
const puppeteer = require('puppeteer-core');
const fs = require('fs');
const path = require('path');
const os = require('os');

const BASE = process.env.BASE, KEY_BASE = process.env.KEY_BASE, VL_BASE = process.env.VL_BASE, MODEL = process.env.MODEL;
let checks = 0, failed = 0;
function check(cond, what) {
  checks++;
  if (!cond) {
    failed++;
    console.error('FAIL: ' + what);
  }
  return cond;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// where the script is, for a failure's message (printed as it goes)
let phase = 'start';
function step(name) {
  phase = name;
  console.error('webui: ' + name);
}

async function health(base) {
  return (await fetch(base + '/health')).json();
}

// The server's own answer, not streamed: the reference for the page's.
async function direct(base, body) {
  const res = await fetch(base + '/v1/chat/completions', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(Object.assign({}, body, { stream: false, stream_options: undefined })) });
  const j = await res.json();
  if (!res.ok) throw new Error('direct request: ' + JSON.stringify(j));
  return j;
}

// One page with its listeners: console errors, page errors, dialogs and
// navigations, and the bodies of the chat requests it sends.
async function open(browser, url, opts = {}) {
  const page = await browser.newPage();
  page.setDefaultTimeout(120000); // a loaded 2-core machine runs the browser slowly
  await page.setViewport({ width: 1100, height: 760 });
  const log = { errors: [], dialogs: [], navigations: 0, bodies: [] };
  page.on('console', (m) => {
    if (m.type() === 'error' && !(opts.allow401 && /401/.test(m.text()))) log.errors.push(m.text());
  });
  page.on('pageerror', (e) => log.errors.push('page error: ' + e.message));
  page.on('dialog', async (d) => {
    log.dialogs.push(d.type() + ': ' + d.message());
    if (opts.onDialog) await opts.onDialog(d);
    else await d.dismiss();
  });
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) log.navigations++; });
  page.on('request', (r) => {
    if (r.url().endsWith('/v1/chat/completions') && r.method() === 'POST') log.bodies.push(JSON.parse(r.postData()));
  });
  await page.goto(url, { waitUntil: 'load' });
  return { page, log };
}

async function waitIdle(page, ms = 60000) {
  await page.waitForFunction(() => !document.getElementById('send').hidden, { timeout: ms });
}
async function storedConvs(page) {
  return page.evaluate(() => JSON.parse(localStorage.getItem('pl.convs') || '[]'));
}
async function currentConv(page) {
  return page.evaluate(() => {
    const id = JSON.parse(localStorage.getItem('pl.current'));
    return JSON.parse(localStorage.getItem('pl.convs') || '[]').find((c) => c.id === id);
  });
}
async function say(page, text) {
  await page.click('#input');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('send').hidden, { timeout: 10000 }).catch(() => {});
  await waitIdle(page);
}
async function setSettings(page, values) {
  await page.click('#open-settings');
  for (const [k, v] of Object.entries(values)) {
    await page.$eval('#s-' + k, (e, v) => { e.value = v; }, String(v));
  }
  await page.click('#save-settings');
}
// the page's request and the server's non-streamed answer to it, compared
async function sameAsDirect(base, body, msg, what) {
  const ref = await direct(base, body);
  const want = ref.choices[0].message;
  check(msg.content === (want.content || ''), what + ': the streamed reply ' + JSON.stringify(msg.content) +
        ' is not the server\'s non-streamed answer ' + JSON.stringify(want.content));
  check((msg.reasoning || '') === (want.reasoning_content || ''), what + ': reasoning ' + JSON.stringify(msg.reasoning) +
        ' vs ' + JSON.stringify(want.reasoning_content));
  return ref;
}

async function main() {
  const browser = await puppeteer.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
    userDataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'pl_chromium.')) });
  try {
    step('load');
    // ---- load: no console errors, the model, the context, the bytes ----
    const { page, log } = await open(browser, BASE + '/');
    await page.waitForFunction((m) => document.getElementById('model').textContent === m, { timeout: 10000 }, MODEL)
      .catch(() => {});
    check(await page.$eval('#model', (e) => e.textContent) === MODEL, 'the header names the model');
    check(/context \d+/.test(await page.$eval('#ctx', (e) => e.textContent)), 'the header shows the context size');
    const paint = await page.evaluate(() => {
      const p = performance.getEntriesByType('paint').find((e) => e.name === 'first-contentful-paint') ||
                performance.getEntriesByType('paint')[0];
      return p ? p.startTime : null;
    });
    let bytes = 0;
    for (const u of ['/', '/ui/app.js', '/ui/markdown.js', '/ui/style.css']) bytes += (await (await fetch(BASE + u)).arrayBuffer()).byteLength;
    console.log(`webui: the page and its scripts and style: ${bytes} bytes; first contentful paint ${paint === null ? '?' : paint.toFixed(0) + ' ms'}`);
    check(bytes < 300 * 1024, `the page's bytes (${bytes}) under 300 KB`);
    check(log.errors.length === 0, 'no console errors at load: ' + log.errors.join(' | '));

    step('first message');
    // ---- settings, then a message: streamed = the server's greedy answer ----
    await setSettings(page, { temperature: 0, max_tokens: 24, system: 'You answer briefly.' });
    await say(page, 'Hello there, who are you?');
    let c = await currentConv(page);
    check(c && c.messages.length === 2 && c.messages[1].role === 'assistant', 'the conversation holds the message and a reply');
    const body1 = log.bodies[log.bodies.length - 1];
    check(body1 && body1.stream === true && body1.temperature === 0 && body1.max_tokens === 24 &&
          body1.messages[0].role === 'system' && body1.messages[0].content === 'You answer briefly.',
          'the settings are in the request: ' + JSON.stringify(body1));
    const ref1 = await sameAsDirect(BASE, body1, c.messages[1], 'first reply');
    check(new RegExp('^' + ref1.usage.completion_tokens + ' tokens').test(c.messages[1].stats || ''),
          'the reply shows its token count (' + c.messages[1].stats + ') and tokens/s');
    const shown = await page.$$eval('.msg.assistant', (d) => d.length ? d[d.length - 1].textContent : '');
    check(shown.length > 0, 'the reply is on the page');
    await page.screenshot({ path: process.env.SHOT });
    console.log('webui: screenshot after a reply: ' + process.env.SHOT);

    step('second message');
    // a different max_tokens changes what the server does
    await setSettings(page, { max_tokens: 5 });
    await say(page, 'And again?');
    c = await currentConv(page);
    check(c.messages.length === 4 && /^[0-5] tokens/.test(c.messages[3].stats || ''), 'max_tokens 5 from the settings bounds the reply: ' + (c.messages[3] || {}).stats);
    await sameAsDirect(BASE, log.bodies[log.bodies.length - 1], c.messages[3], 'second reply (history sent back)');
    check(log.bodies[log.bodies.length - 1].messages.length === 4, 'the history goes with the second message');

    step('reload');
    // ---- reload keeps the conversation; settings kept too ----
    const before = JSON.stringify(await currentConv(page));
    await page.reload({ waitUntil: 'load' });
    check(JSON.stringify(await currentConv(page)) === before, 'a reload keeps the conversation');
    check(await page.$$eval('.msg', (d) => d.length) === 4, 'a reload shows the four messages again');
    await page.click('#open-settings');
    check(await page.$eval('#s-max_tokens', (e) => e.value) === '5', 'a reload keeps the settings');
    await page.click('#close-settings');

    step('second conversation');
    // ---- a second conversation does not mix with the first ----
    const firstId = (await currentConv(page)).id;
    await page.click('#new-chat');
    await say(page, 'A separate question.');
    const c2 = await currentConv(page);
    const b2 = log.bodies[log.bodies.length - 1];
    check(c2.id !== firstId && c2.messages.length === 2, 'the second conversation has only its own two messages');
    check(b2.messages.length === 2 && b2.messages[1].content === 'A separate question.', 'the second request carries none of the first conversation');
    await sameAsDirect(BASE, b2, c2.messages[1], 'the second conversation');
    check((await storedConvs(page)).length === 2, 'both conversations are kept');
    await page.click(`#convs li[data-id="${firstId}"]`);
    check(await page.$$eval('.msg.user', (d) => d[0].textContent) === 'Hello there, who are you?', 'the first conversation shows again when picked');

    step('thinking off');
    // ---- thinking off goes into the request ----
    await page.click('#thinking');
    await say(page, 'No thinking now.');
    check(log.bodies[log.bodies.length - 1].chat_template_kwargs.enable_thinking === false, 'the thinking switch turns enable_thinking off');
    await page.click('#thinking');

    step('stop');
    // ---- Stop during a long reply: it ends, the server's sequence is free ----
    await setSettings(page, { max_tokens: 3000 });
    await page.click('#new-chat');
    await page.click('#input');
    await page.keyboard.type('Tell me a very long story.');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => {
      const d = document.querySelectorAll('.msg.assistant');
      return d.length && d[d.length - 1].textContent.length > 0;
    }, { timeout: 30000, polling: 20 });
    const busy = (await health(BASE)).sequences_busy;
    await page.click('#stop');
    await waitIdle(page, 10000);
    let free = false;
    for (let i = 0; i < 50 && !free; i++) {
      free = (await health(BASE)).sequences_busy === 0;
      if (!free) await sleep(100);
    }
    check(busy === 1, 'the reply was running on the server when Stop was pressed (sequences_busy ' + busy + ')');
    check(free, 'after Stop the server\'s sequence is free again (/health)');
    const t1 = (await health(BASE)).tokens_evaluated;
    await sleep(600);
    check((await health(BASE)).tokens_evaluated === t1, 'after Stop the server evaluates nothing more');
    const cs = await currentConv(page);
    const last = cs.messages[cs.messages.length - 1];
    check(last.role === 'assistant' && /^stopped/.test(last.stats || ''), 'the stopped reply is kept, marked stopped: ' + last.stats);

    step('rename, export, import, delete');
    // ---- rename, export, import, delete ----
    const { page: p2, log: log2 } = await open(browser, BASE + '/', {
      onDialog: async (d) => (d.type() === 'prompt' ? d.accept('Renamed chat') : d.accept()),
    });
    const nBefore = (await storedConvs(p2)).length;
    await p2.click('#convs li.current .rename');
    await sleep(200);
    check((await currentConv(p2)).title === 'Renamed chat', 'rename');
    check(await p2.$eval('#convs li.current .title', (e) => e.textContent) === 'Renamed chat', 'the new name in the sidebar');
    // (the download is caught at the anchor's click, its blob where it is made)
    const exported = await p2.evaluate(async () => {
      let name = null, blob = null;
      const click = HTMLAnchorElement.prototype.click, make = URL.createObjectURL;
      HTMLAnchorElement.prototype.click = function () { name = this.download; };
      URL.createObjectURL = (b) => { blob = b; return make(b); };
      document.getElementById('export').click();
      HTMLAnchorElement.prototype.click = click;
      URL.createObjectURL = make;
      return blob && { name: name, text: await blob.text() };
    });
    const ej = exported && JSON.parse(exported.text);
    check(ej && ej.conversations.length === nBefore, 'export writes every conversation as JSON');
    const file = path.join(os.tmpdir(), `pl_import_${process.pid}.json`);
    fs.writeFileSync(file, JSON.stringify({ conversations: [{ title: 'From a file', messages: [
      { role: 'user', content: 'imported question' }, { role: 'assistant', content: 'imported **answer**' }] }] }));
    await (await p2.$('#import')).uploadFile(file);
    await p2.waitForFunction((n) => JSON.parse(localStorage.getItem('pl.convs')).length === n + 1, { timeout: 5000 }, nBefore)
      .catch(() => {});
    fs.unlinkSync(file);
    const afterImport = await storedConvs(p2);
    check(afterImport.length === nBefore + 1 && afterImport.some((x) => x.title === 'From a file'), 'import adds the file\'s conversation');
    const renamedId = (await currentConv(p2)).id;
    await p2.click('#convs li.current .delete');
    await sleep(200);
    check(!(await storedConvs(p2)).some((x) => x.id === renamedId), 'delete removes the conversation');
    check(log2.errors.length === 0, 'no console errors while managing conversations: ' + log2.errors.join(' | '));

    step('xss');
    // ---- XSS: a reply forced (by a grammar) to hold markup runs nothing ----
    const payload = '<script>alert(1)</script> <img src=x onerror="alert(2);document.title=\'pwned\'"> ' +
      '[click](javascript:alert(3)) <a href="javascript:alert(4)">link</a> <svg onload=alert(5)></svg> ' +
      '[data](data:text/html,<script>alert(6)</script>) <iframe src="javascript:alert(7)"></iframe>';
    const gbnf = 'root ::= "' + payload.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
    const { page: p3, log: log3 } = await open(browser, BASE + '/');
    await p3.setRequestInterception(true);
    p3.on('request', (r) => {
      if (r.url().endsWith('/v1/chat/completions') && r.method() === 'POST') {
        const b = JSON.parse(r.postData());
        b.grammar = gbnf;
        b.max_tokens = 400;
        r.continue({ postData: JSON.stringify(b) });
      } else {
        r.continue();
      }
    });
    const navBefore = log3.navigations;
    await p3.click('#new-chat');
    await say(p3, 'Say something dangerous.');
    const cx = await currentConv(p3);
    check(cx.messages[1] && cx.messages[1].content === payload, 'the grammar forced the payload: ' + JSON.stringify(cx.messages[1] && cx.messages[1].content));
    // click every link of the reply too
    for (const a of await p3.$$('.msg.assistant a')) await a.click().catch(() => {});
    await sleep(500);
    const dom = await p3.evaluate(() => {
      const d = [...document.querySelectorAll('.msg.assistant')].pop();
      return {
        scripts: d.querySelectorAll('script, iframe, svg, img').length,
        jsLinks: [...d.querySelectorAll('a')].filter((a) => !/^https?:|^mailto:/.test(a.href)).length,
        handlers: [...d.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).length,
        text: d.textContent,
        title: document.title,
      };
    });
    check(dom.scripts === 0 && dom.jsLinks === 0 && dom.handlers === 0, 'the payload made no element, link or handler: ' + JSON.stringify(dom));
    check(dom.text.includes('<script>alert(1)</script>'), 'the markup shows as text');
    check(dom.title !== 'pwned', 'no payload ran (title)');
    check(log3.dialogs.length === 0, 'no dialog opened: ' + log3.dialogs.join(' | '));
    check(log3.navigations === navBefore, 'no navigation happened');
    check(log3.errors.length === 0, 'no console message from the payload: ' + log3.errors.join(' | '));

    step('api key');
    // ---- an API key: asked for once, then used ----
    const { page: p4, log: log4 } = await open(browser, KEY_BASE + '/', { allow401: true });
    await p4.waitForSelector('#keybox:not([hidden])', { timeout: 10000 }).catch(() => {});
    check(await p4.$eval('#keybox', (e) => !e.hidden), 'the page asks for the API key');
    await p4.type('#key', 'sekrit');
    await p4.click('#save-key');
    await p4.waitForFunction((m) => document.getElementById('model').textContent === m, { timeout: 10000 }, MODEL).catch(() => {});
    check(await p4.$eval('#model', (e) => e.textContent) === MODEL, 'with the key the page reads the model');
    await p4.click('#new-chat');
    await say(p4, 'With a key.');
    const ck = await currentConv(p4);
    check(ck.messages.length === 2 && ck.messages[1].role === 'assistant', 'a reply comes with the key');
    check(log4.bodies.length === 1, 'one request');
    await p4.reload({ waitUntil: 'load' });
    await sleep(500);
    check(await p4.$eval('#keybox', (e) => e.hidden), 'the key is asked for once (kept after a reload)');
    check(log4.errors.length === 0, 'no console errors on the keyed server past the first 401: ' + log4.errors.join(' | '));
    check(log.errors.length === 0, 'no console errors in the whole conversation test: ' + log.errors.join(' | '));

    step('images');
    // ---- images (a server with an mmproj): one picked, one pasted ----
    const { page: p5, log: log5 } = await open(browser, VL_BASE + '/');
    await p5.waitForSelector('#attach-label:not([hidden])', { timeout: 10000 }).catch(() => {});
    check(await p5.$eval('#attach-label', (e) => !e.hidden), 'the page offers attachments when the server has an mmproj');
    check(await page.$eval('#attach-label', (e) => e.hidden), 'and not when it has none');
    await setSettings(p5, { temperature: 0, max_tokens: 8 });
    // a paste of images, as a person pastes screenshots: [[name, path]...]
    const paste = (files) => p5.$eval('#input', (e, list) => {
      const dt = new DataTransfer();
      for (const [name, b64] of list) {
        const bin = atob(b64), bytes = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
        dt.items.add(new File([bytes], name, { type: 'image/png' }));
      }
      e.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true }));
    }, files.map(([name, path]) => [name, fs.readFileSync(path).toString('base64')]));
    const pendingReady = (n) => p5.waitForFunction((k) => document.querySelectorAll('#pending .att').length === k,
      { timeout: 10000 }, n).catch(() => {});
    // attachments keep the order they were given in, whichever file is read
    // first: one paste of a large image and then a small one (read at once)
    await paste([['big.png', process.env.IMG_BIG], ['small.png', process.env.IMG_B]]);
    await pendingReady(2);
    const order = await p5.$$eval('#pending .att img', (d) => d.map((i) => i.alt));
    check(order.join(' ') === 'big.png small.png', 'attachments keep the order they were given in: ' + order.join(' '));
    for (let i = 0; i < 4 && await p5.$('#pending .att button'); i++) await p5.click('#pending .att button');
    check(await p5.$$eval('#pending .att', (d) => d.length) === 0, 'an attachment can be taken back');
    await (await p5.$('#attach')).uploadFile(process.env.IMG_A);
    await paste([['pasted.png', process.env.IMG_B]]);
    await pendingReady(2);
    check(await p5.$$eval('#pending .att', (d) => d.length) === 2, 'a picked and a pasted image wait beside the message');
    await p5.click('#new-chat');
    await say(p5, 'What is in these pictures?');
    const cv = await currentConv(p5);
    const bv = log5.bodies[log5.bodies.length - 1];
    const parts = bv && bv.messages[bv.messages.length - 1].content;
    check(Array.isArray(parts) && parts.filter((x) => x.type === 'image_url').length === 2 &&
          parts[0].image_url.url === 'data:image/png;base64,' + fs.readFileSync(process.env.IMG_A).toString('base64'),
          'the request carries both images as data URLs');
    check(cv.messages.length === 2 && cv.messages[1].role === 'assistant', 'a reply to the images');
    if (cv.messages.length === 2) await sameAsDirect(VL_BASE, bv, cv.messages[1], 'the reply to two images');
    check(await p5.$$eval('.msg.user img.attached', (d) => d.length) === 2, 'the images show in the message');
    check(log5.errors.length === 0, 'no console errors with images: ' + log5.errors.join(' | '));

    step('audio');
    // ---- audio (a server with a Qwen3-ASR mmproj): a WAV picked ----
    const { page: p6, log: log6 } = await open(browser, process.env.ASR_BASE + '/');
    await p6.waitForSelector('#attach-label:not([hidden])', { timeout: 10000 }).catch(() => {});
    check(await p6.$eval('#attach', (e) => e.accept) === 'audio/*', 'an audio-only server takes audio only: ' + await p6.$eval('#attach', (e) => e.accept));
    await setSettings(p6, { temperature: 0, max_tokens: 8 });
    await (await p6.$('#attach')).uploadFile(process.env.SPEECH);
    await p6.waitForFunction(() => document.querySelectorAll('#pending .att').length === 1, { timeout: 5000 }).catch(() => {});
    await p6.click('#new-chat');
    await say(p6, 'What is said?');
    const ca = await currentConv(p6);
    const ba = log6.bodies[log6.bodies.length - 1];
    const ap = ba && ba.messages[ba.messages.length - 1].content;
    check(Array.isArray(ap) && ap[0].type === 'input_audio' && ap[0].input_audio.format === 'wav' &&
          ap[0].input_audio.data === fs.readFileSync(process.env.SPEECH).toString('base64'), 'the request carries the clip as input_audio');
    check(ca.messages.length === 2 && ca.messages[1].role === 'assistant', 'a reply to the clip');
    if (ca.messages.length === 2) await sameAsDirect(process.env.ASR_BASE, ba, ca.messages[1], 'the reply to a spoken clip');
    check(await p6.$$eval('.msg.user audio', (d) => d.length) === 1, 'the clip shows as a player in the message');
    check(log6.errors.length === 0, 'no console errors with audio: ' + log6.errors.join(' | '));
  } finally {
    await browser.close();
  }
}

main().then(() => {
  console.log(`webui: ${checks} checks, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}, (e) => {
  console.error('webui: during "' + phase + '": ' + (e.stack || e));
  console.log(`webui: ${checks} checks, ${failed + 1} failed`);
  process.exit(1);
});
