import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The recording fixture on 127.0.0.1: one target button that the bench moves between trials,
 * a text input, a tall body to scroll, and a script that logs every input event with its
 * timing, position, isTrusted and the target's rect into `window.__events`.
 */

export interface RecordServer {
  /** Base URL of the recording page; add `?tab=NAME` to tell tabs apart. */
  url: string;
  close(): Promise<void>;
}

// Plain browser JavaScript, kept as a string: it runs in the page, not in Node.
const RECORDER = `
(() => {
  const log = [];
  window.__events = log;
  const rectOf = (el) => {
    if (!el || !el.getBoundingClientRect) return null;
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, width: r.width, height: r.height };
  };
  const nameOf = (el) => (el && (el.id || (el.tagName || '').toLowerCase())) || 'document';
  const onInput = (e) => {
    const entry = {
      type: e.type,
      t: performance.now(),
      ts: e.timeStamp,
      x: typeof e.clientX === 'number' ? e.clientX : NaN,
      y: typeof e.clientY === 'number' ? e.clientY : NaN,
      trusted: e.isTrusted,
      target: nameOf(e.target),
      rect: e.type === 'scroll' ? null : rectOf(e.target),
      scrollY: window.scrollY,
    };
    if (e.type === 'keydown' || e.type === 'keyup') entry.key = e.key;
    if (e.type === 'pointermove') {
      // The raw samples the browser merged into this frame's event.
      const raw = e.getCoalescedEvents ? e.getCoalescedEvents() : [];
      entry.raw = raw.map((c) => [c.timeStamp, c.clientX, c.clientY]);
      entry.rect = null;
    }
    if (e.type === 'wheel') {
      entry.deltaY = e.deltaY;
      entry.deltaMode = e.deltaMode;
    }
    log.push(entry);
  };
  for (const type of ['mousemove', 'pointermove', 'mousedown', 'mouseup', 'click', 'keydown', 'keyup', 'wheel']) {
    window.addEventListener(type, onInput, { capture: true, passive: true });
  }
  document.addEventListener('scroll', onInput, { passive: true });
  window.__mark = (label, extra) => {
    log.push(Object.assign({
      type: 'mark',
      t: performance.now(),
      label,
      rect: rectOf(document.getElementById('target')),
      scrollY: window.scrollY,
      visible: document.visibilityState === 'visible',
    }, extra || {}));
  };
  window.__place = (x, y, size, label, d) => {
    const el = document.getElementById('target');
    el.style.left = (x - size / 2) + 'px';
    el.style.top = (y - size / 2) + 'px';
    el.style.width = size + 'px';
    el.style.height = size + 'px';
    window.__mark(label, { d, w: size });
  };
})();
`;

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Recording page</title>
<style>
html,body{margin:0;padding:0}
body{height:20000px;font:14px sans-serif;
background:repeating-linear-gradient(#fff 0 190px,#eef 190px 200px)}
#target{position:fixed;left:0;top:0;width:20px;height:20px;margin:0;padding:0;border:0;
box-sizing:border-box;background:#c33;cursor:pointer}
#text{position:fixed;left:40px;top:30px;width:640px;height:30px;box-sizing:border-box;font:14px monospace}
#hint{position:fixed;left:700px;top:36px;color:#555}
</style></head><body>
<input id="text" autocomplete="off" spellcheck="false" aria-label="text">
<span id="hint">recording page: every input event is logged</span>
<button id="target" aria-label="target"></button>
<script>${RECORDER}</script>
</body></html>`;

export async function startRecordServer(): Promise<RecordServer> {
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    if (pathname === '/record') {
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      });
      res.end(PAGE);
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/record`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
