/* markdown.js -- the model's Markdown as DOM nodes, for the chat page.
 *
 * Model output is untrusted: it is never parsed as HTML.  Every node is
 * made with createElement and every piece of text goes in as a text node,
 * so a reply holding <script>, <img onerror=...> or any other markup shows
 * that markup as characters.  Links keep their href only when it is http:,
 * https: or mailto: (a javascript: or data: link is plain text).  What is
 * understood: fenced code blocks, headings, lists, block quotes, rules,
 * paragraphs; inline code, bold, italic and links -- what chat models write.
 */
'use strict';
(function () {
  function el(tag, parent) {
    const e = document.createElement(tag);
    if (parent) parent.appendChild(e);
    return e;
  }

  function safeHref(url) {
    try {
      const u = new URL(url, 'http://invalid.invalid/');
      if ((u.protocol === 'http:' || u.protocol === 'https:') && /^https?:\/\//i.test(url)) return u.href;
      if (u.protocol === 'mailto:' && /^mailto:/i.test(url)) return u.href;
    } catch (e) { /* not a URL: no link */ }
    return null;
  }

  /* inline spans: `code`, **bold**, *italic* / _italic_, [text](url) */
  const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|\*([^*\s][^*]*?)\*|\b_([^_\s][^_]*?)_\b|\[([^\]\n]+)\]\(([^()\s]+)\)/g;

  function inline(text, parent) {
    let last = 0, m;
    INLINE.lastIndex = 0;
    while ((m = INLINE.exec(text)) !== null) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      if (m[1]) {
        el('code', parent).textContent = m[2];
      } else if (m[3] !== undefined || m[4] !== undefined) {
        inline(m[3] !== undefined ? m[3] : m[4], el('strong', parent));
      } else if (m[5] !== undefined || m[6] !== undefined) {
        inline(m[5] !== undefined ? m[5] : m[6], el('em', parent));
      } else {
        const href = safeHref(m[8]);
        if (href) {
          const a = el('a', parent);
          a.href = href;
          a.target = '_blank';
          a.rel = 'noopener noreferrer';
          inline(m[7], a);
        } else {
          parent.appendChild(document.createTextNode(m[0])); /* shown as written, not a link */
        }
      }
      last = INLINE.lastIndex;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  function render(text) {
    const root = document.createDocumentFragment();
    const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if ((m = /^\s*(```+|~~~+)\s*([\w+-]*)/.exec(line))) { /* fenced code, to its closing fence or the end */
        const fence = m[1], body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
        i++;
        const code = el('code', el('pre', root));
        if (m[2]) code.dataset.lang = m[2];
        code.textContent = body.join('\n');
      } else if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
        inline(m[2], el('h' + m[1].length, root));
        i++;
      } else if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
        el('hr', root);
        i++;
      } else if (/^\s*>/.test(line)) {
        const body = [];
        while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ''));
        el('blockquote', root).appendChild(render(body.join('\n')));
      } else if ((m = /^\s*([-*+]|\d{1,9}[.)])\s+/.exec(line))) {
        const ordered = /\d/.test(m[1]);
        const list = el(ordered ? 'ol' : 'ul', root);
        const item = ordered ? /^\s*\d{1,9}[.)]\s+(.*)$/ : /^\s*[-*+]\s+(.*)$/;
        let im;
        while (i < lines.length && (im = item.exec(lines[i]))) {
          inline(im[1], el('li', list));
          i++;
        }
      } else if (line.trim() === '') {
        i++;
      } else {
        const body = [];
        while (i < lines.length && lines[i].trim() !== '' &&
               !/^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d{1,9}[.)]\s)/.test(lines[i])) body.push(lines[i++]);
        if (!body.length) body.push(lines[i++]); /* a line no block takes: a paragraph of its own */
        const p = el('p', root);
        body.forEach(function (b, k) {
          if (k) el('br', p);
          inline(b, p);
        });
      }
    }
    return root;
  }

  window.plMarkdown = render;
})();
