/* app.js -- the chat page: conversations kept in the browser's local
 * storage, replies streamed from the server's own /v1/chat/completions
 * (SSE), a Stop that aborts the request (the server notices the closed
 * connection and frees the sequence), Qwen3 reasoning apart from the
 * answer, the sampling settings, images and audio when the server takes
 * them, and the API key when the server wants one.  Everything the model
 * writes reaches the page as text nodes or through markdown.js, never as
 * HTML. */
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const DEFAULTS = { system: '', temperature: 0.7, top_p: 0.95, top_k: 40, min_p: 0.05, max_tokens: '', seed: '', thinking: true };
  const FIELDS = ['system', 'temperature', 'top_p', 'top_k', 'min_p', 'max_tokens', 'seed'];

  function load(key, fallback) {
    try {
      const v = localStorage.getItem(key);
      return v === null ? fallback : JSON.parse(v);
    } catch (e) {
      return fallback;
    }
  }
  function store(key, value) {
    try {
      localStorage.setItem(key, JSON.stringify(value));
    } catch (e) {
      note('could not save in the browser: ' + e.message);
    }
  }

  let settings = Object.assign({}, DEFAULTS, load('pl.settings', {}));
  let convs = load('pl.convs', []);
  if (!Array.isArray(convs)) convs = [];
  let current = load('pl.current', null);
  let apiKey = load('pl.key', '');
  let pending = [];          /* attachments of the message being written */
  let running = null;        /* {ctrl} while a reply streams */
  let modelId = 'model';
  let caps = { vision: false, audio: false };

  function newId() {
    return Date.now().toString(36) + Math.random().toString(36).slice(2, 8);
  }
  function conv() {
    return convs.find((c) => c.id === current);
  }
  function saveConvs() {
    store('pl.convs', convs);
    store('pl.current', current);
  }
  function headers() {
    const h = { 'Content-Type': 'application/json' };
    if (apiKey) h.Authorization = 'Bearer ' + apiKey;
    return h;
  }

  /* ---- the sidebar ---------------------------------------------------- */
  /* a conversation's rename or delete button (its click does not pick the conversation) */
  function smallButton(cls, label, action) {
    const b = document.createElement('button');
    b.type = 'button';
    b.className = cls;
    b.title = cls;
    b.textContent = label;
    b.onclick = function (ev) {
      ev.stopPropagation();
      action();
    };
    return b;
  }
  function renderConvs() {
    const ul = $('convs');
    ul.textContent = '';
    convs.forEach(function (c) {
      const li = document.createElement('li');
      li.className = c.id === current ? 'conv current' : 'conv';
      li.dataset.id = c.id;
      const t = document.createElement('span');
      t.className = 'title';
      t.textContent = c.title || 'New chat';
      li.appendChild(t);
      li.appendChild(smallButton('rename', '✎', function () {
        const name = prompt('Name of the conversation', c.title || '');
        if (name !== null) {
          c.title = name.slice(0, 200);
          saveConvs();
          renderConvs();
        }
      }));
      li.appendChild(smallButton('delete', '×', function () {
        if (!confirm('Delete "' + (c.title || 'New chat') + '"?')) return;
        convs = convs.filter((x) => x.id !== c.id);
        if (current === c.id) current = convs.length ? convs[0].id : null;
        saveConvs();
        renderAll();
      }));
      li.onclick = function () {
        if (running) return;
        current = c.id;
        saveConvs();
        renderAll();
      };
      ul.appendChild(li);
    });
  }

  function newChat() {
    if (running) return;
    const c = { id: newId(), title: '', created: Date.now(), messages: [] };
    convs.unshift(c);
    current = c.id;
    saveConvs();
    renderAll();
    $('input').focus();
  }

  /* ---- the messages --------------------------------------------------- */
  function note(text) {
    const d = document.createElement('div');
    d.className = 'msg error';
    d.textContent = text;
    $('messages').appendChild(d);
    d.scrollIntoView({ block: 'end' });
  }

  function fillAssistant(div, m) {
    div.textContent = '';
    if (m.reasoning) {
      const det = document.createElement('details');
      const sum = document.createElement('summary');
      sum.textContent = 'Thinking';
      const r = document.createElement('div');
      r.className = 'reasoning';
      r.textContent = m.reasoning;
      det.appendChild(sum);
      det.appendChild(r);
      div.appendChild(det);
    }
    const content = document.createElement('div');
    content.className = 'content';
    content.appendChild(window.plMarkdown(m.content || ''));
    div.appendChild(content);
    if (m.stats) {
      const s = document.createElement('div');
      s.className = 'stats';
      s.textContent = m.stats;
      div.appendChild(s);
    }
  }

  function messageDiv(m) {
    const div = document.createElement('div');
    div.className = 'msg ' + (m.role === 'user' ? 'user' : 'assistant');
    if (m.role === 'user') {
      div.appendChild(document.createTextNode(m.content));
      (m.attachments || []).forEach(function (a) {
        if (a.kind === 'image') {
          const img = document.createElement('img');
          img.className = 'attached';
          img.alt = a.name || 'image';
          img.src = a.url;
          div.appendChild(img);
        } else {
          const au = document.createElement('audio');
          au.controls = true;
          au.src = 'data:audio/' + a.format + ';base64,' + a.data;
          div.appendChild(au);
        }
      });
    } else {
      fillAssistant(div, m);
    }
    return div;
  }

  function renderMessages() {
    const box = $('messages');
    box.textContent = '';
    const c = conv();
    if (!c) return;
    c.messages.forEach((m) => box.appendChild(messageDiv(m)));
    box.scrollTop = box.scrollHeight;
  }

  function renderAll() {
    renderConvs();
    renderMessages();
  }

  /* ---- sending -------------------------------------------------------- */
  function apiMessages(c) {
    const out = [];
    if (settings.system) out.push({ role: 'system', content: settings.system });
    c.messages.forEach(function (m) {
      if (m.role === 'assistant') {
        out.push({ role: 'assistant', content: m.content || '' });
        return;
      }
      if (!m.attachments || !m.attachments.length) {
        out.push({ role: 'user', content: m.content });
        return;
      }
      const parts = [];
      m.attachments.forEach(function (a) {
        if (a.kind === 'image') parts.push({ type: 'image_url', image_url: { url: a.url } });
        else parts.push({ type: 'input_audio', input_audio: { data: a.data, format: a.format } });
      });
      if (m.content) parts.push({ type: 'text', text: m.content });
      out.push({ role: 'user', content: parts });
    });
    return out;
  }

  function request(c) {
    const r = { model: modelId, messages: apiMessages(c), stream: true, stream_options: { include_usage: true } };
    ['temperature', 'top_p', 'min_p'].forEach(function (k) {
      const v = parseFloat(settings[k]);
      if (!isNaN(v)) r[k] = v;
    });
    ['top_k', 'max_tokens', 'seed'].forEach(function (k) {
      const v = parseInt(settings[k], 10);
      if (!isNaN(v)) r[k] = v;
    });
    r.chat_template_kwargs = { enable_thinking: !!settings.thinking };
    return r;
  }

  function setRunning(on) {
    $('send').hidden = on;
    $('stop').hidden = !on;
    document.body.classList.toggle('running', on);
  }

  async function send() {
    const text = $('input').value;
    if (running || (!text.trim() && !pending.length)) return;
    if (pending.some((a) => a.loading)) {
      note('an attachment is still being read: send again in a moment');
      return;
    }
    if (!conv()) newChat();
    const c = conv();
    c.messages.push({ role: 'user', content: text, attachments: pending.length ? pending : undefined });
    if (!c.title) c.title = (text.trim() || 'Attachment').slice(0, 48);
    pending = [];
    renderPending();
    $('input').value = '';
    saveConvs();
    renderAll();
    await reply(c);
  }

  async function reply(c) {
    const m = { role: 'assistant', content: '', reasoning: '' };
    const div = messageDiv(m);
    $('messages').appendChild(div);
    const ctrl = new AbortController();
    running = { ctrl: ctrl };
    setRunning(true);
    const t0 = performance.now();
    let tFirst = 0, usage = null, stopped = false, failed = '';
    try {
      const res = await fetch('/v1/chat/completions', { method: 'POST', headers: headers(), body: JSON.stringify(request(c)), signal: ctrl.signal });
      if (res.status === 401) {
        askKey();
        throw new Error('this server needs an API key: enter it, then send again');
      }
      if (!res.ok) {
        let msg = 'HTTP ' + res.status;
        try {
          msg = (await res.json()).error.message || msg;
        } catch (e) { /* not JSON */ }
        throw new Error(msg);
      }
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = '', done = false, lastPaint = 0;
      while (!done) {
        const r = await reader.read();
        if (r.done) break;
        buf += dec.decode(r.value, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const event = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          for (const line of event.split('\n')) {
            if (!line.startsWith('data:')) continue;
            const data = line.slice(5).trim();
            if (data === '[DONE]') {
              done = true;
              break;
            }
            const j = JSON.parse(data);
            if (j.error) throw new Error(j.error.message || 'the server reported an error');
            if (j.usage) usage = j.usage;
            const d = j.choices && j.choices[0] && j.choices[0].delta;
            if (!d) continue;
            if (!tFirst && (d.content || d.reasoning_content)) tFirst = performance.now();
            if (d.reasoning_content) m.reasoning += d.reasoning_content;
            if (d.content) m.content += d.content;
          }
        }
        const now = performance.now();
        if (now - lastPaint > 50) { /* repaint at most 20 times a second */
          lastPaint = now;
          fillAssistant(div, m);
          div.scrollIntoView({ block: 'end' });
        }
      }
    } catch (e) {
      if (e.name === 'AbortError') stopped = true;
      else failed = e.message;
    }
    const t1 = performance.now();
    const n = usage ? usage.completion_tokens : null;
    const secs = (t1 - (tFirst || t0)) / 1000;
    m.stats = (stopped ? 'stopped · ' : '') + (n !== null ? n + ' tokens · ' + (secs > 0 && n > 1 ? ((n - 1) / secs).toFixed(1) + ' tokens/s' : '') : ((t1 - t0) / 1000).toFixed(1) + ' s');
    if (!m.reasoning) delete m.reasoning;
    if (m.content || m.reasoning || stopped) c.messages.push(m);
    running = null;
    setRunning(false);
    saveConvs();
    if (c.messages[c.messages.length - 1] === m) fillAssistant(div, m);
    else div.remove();
    if (failed) note(failed);
  }

  function stop() {
    if (running) running.ctrl.abort();
  }

  /* ---- attachments ---------------------------------------------------- */
  /* an attachment taken out of the message being written (by the person,
   * or because its file could not be read) */
  function dropPending(a) {
    const k = pending.indexOf(a);
    if (k >= 0) pending.splice(k, 1);
  }

  function renderPending() {
    const box = $('pending');
    box.textContent = '';
    pending.forEach(function (a) {
      if (a.loading) return; /* shown once read */
      const s = document.createElement('span');
      s.className = 'att';
      if (a.kind === 'image') {
        const img = document.createElement('img');
        img.src = a.url;
        img.alt = a.name;
        s.appendChild(img);
      } else {
        s.appendChild(document.createTextNode('♪ ' + a.name));
      }
      const x = document.createElement('button');
      x.type = 'button';
      x.textContent = '×';
      x.onclick = function () {
        dropPending(a);
        renderPending();
      };
      s.appendChild(x);
      box.appendChild(s);
    });
  }

  function addFile(file) {
    const image = file.type.startsWith('image/'), audio = file.type.startsWith('audio/');
    if ((image && !caps.vision) || (audio && !caps.audio) || (!image && !audio)) {
      note(file.name + ': this server takes ' + (caps.vision && caps.audio ? 'images and audio' : caps.vision ? 'images' : caps.audio ? 'audio' : 'no attachments (it runs without --mmproj)'));
      return;
    }
    /* the slot is taken now, so the attachments keep the order they were
     * given in whichever read finishes first */
    const slot = { kind: image ? 'image' : 'audio', name: file.name, loading: true };
    pending.push(slot);
    const rd = new FileReader();
    rd.onload = function () {
      const url = String(rd.result);
      if (image) slot.url = url;
      else {
        slot.format = /mp3|mpeg/.test(file.type) ? 'mp3' : 'wav';
        slot.data = url.slice(url.indexOf(',') + 1);
      }
      delete slot.loading;
      renderPending();
    };
    rd.onerror = function () {
      dropPending(slot);
      note(file.name + ': could not be read');
      renderPending();
    };
    rd.readAsDataURL(file);
  }

  /* ---- settings, key, import and export ------------------------------- */
  function openSettings() {
    FIELDS.forEach((f) => { $('s-' + f).value = settings[f]; });
    $('settings').hidden = false;
  }
  function saveSettings() {
    FIELDS.forEach((f) => { settings[f] = $('s-' + f).value; });
    store('pl.settings', settings);
    $('settings').hidden = true;
  }
  function askKey() {
    $('keybox').hidden = false;
    $('key').focus();
  }
  function saveKey() {
    apiKey = $('key').value.trim();
    store('pl.key', apiKey);
    $('keybox').hidden = true;
    loadModel();
  }

  function exportAll() {
    const blob = new Blob([JSON.stringify({ pocketllm_conversations: 1, conversations: convs }, null, 1)], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'pocketllm-conversations.json';
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }

  function importFile(file) {
    file.text().then(function (text) {
      const j = JSON.parse(text);
      const list = Array.isArray(j) ? j : j.conversations;
      if (!Array.isArray(list)) throw new Error('no conversations in it');
      let n = 0;
      list.forEach(function (c) {
        if (!c || !Array.isArray(c.messages)) return;
        const msgs = c.messages.filter((m) => m && (m.role === 'user' || m.role === 'assistant') && typeof m.content === 'string');
        convs.push({ id: newId(), title: String(c.title || 'Imported').slice(0, 200), created: Date.now(), messages: msgs });
        n++;
      });
      saveConvs();
      renderAll();
      if (!n) note(file.name + ': no conversation in it');
    }).catch((e) => note(file.name + ': not an export of this page (' + e.message + ')'));
  }

  /* ---- the server ----------------------------------------------------- */
  async function loadModel() {
    try {
      const h = await (await fetch('/health')).json();
      caps = h.modalities || caps;
      $('ctx').textContent = h.n_ctx ? 'context ' + h.n_ctx : '';
      $('attach-label').hidden = !(caps.vision || caps.audio);
      $('attach').accept = [caps.vision ? 'image/*' : '', caps.audio ? 'audio/*' : ''].filter(Boolean).join(',');
      const res = await fetch('/v1/models', { headers: headers() });
      if (res.status === 401) {
        $('model').textContent = 'API key needed';
        askKey();
        return;
      }
      const j = await res.json();
      modelId = j.data[0].id;
      $('model').textContent = modelId;
      document.title = modelId + ' · PocketLLM';
    } catch (e) {
      $('model').textContent = 'server unreachable';
    }
  }

  function init() {
    $('thinking').checked = !!settings.thinking;
    $('thinking').onchange = function () {
      settings.thinking = this.checked;
      store('pl.settings', settings);
    };
    $('new-chat').onclick = newChat;
    $('composer').onsubmit = function (ev) {
      ev.preventDefault();
      send();
    };
    $('input').addEventListener('keydown', function (ev) {
      if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        send();
      }
    });
    $('input').addEventListener('paste', function (ev) {
      const files = Array.from((ev.clipboardData && ev.clipboardData.files) || []);
      if (files.length) {
        ev.preventDefault();
        files.forEach(addFile);
      }
    });
    $('attach').onchange = function () {
      Array.from(this.files).forEach(addFile);
      this.value = '';
    };
    $('stop').onclick = stop;
    $('open-settings').onclick = openSettings;
    $('close-settings').onclick = () => { $('settings').hidden = true; };
    $('save-settings').onclick = saveSettings;
    $('reset-settings').onclick = function () {
      const thinking = settings.thinking;
      settings = Object.assign({}, DEFAULTS, { thinking: thinking });
      openSettings();
    };
    $('save-key').onclick = saveKey;
    $('key').addEventListener('keydown', (ev) => { if (ev.key === 'Enter') saveKey(); });
    $('export').onclick = exportAll;
    $('import').onchange = function () {
      if (this.files[0]) importFile(this.files[0]);
      this.value = '';
    };
    if (!conv()) current = convs.length ? convs[0].id : null;
    renderAll();
    loadModel();
  }

  init();
})();
