import crypto from 'node:crypto';
import http from 'node:http';
import { listenLoopback } from '@persona-browser/testkit/loopback';

/**
 * The network-capture benchmark's own loopback site: a page that makes 200 requests, and a page
 * that pulls a given amount of JSON through itself in bodies of about 1 MB.
 */

export interface NetworkSite {
  url: string;
  close(): Promise<void>;
}

const page = (title: string, script: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><script>${script}</script></body></html>`;

/**
 * 200 requests like a busy page makes them: JSON by fetch and XHR, scripts, stylesheets and
 * images (only the first two are captured, all of them are seen by the capture). The time from
 * navigation start until every one of them has arrived lands in `window.__loadedMs`.
 */
const manyScript = (n: number): string => `
(async () => {
  const all = [];
  for (let i = 0; i < ${n}; i++) {
    switch (i % 4) {
      case 0: all.push(fetch('/api/item?i=' + i).then((r) => r.text())); break;
      case 1: all.push(new Promise((resolve) => {
        const x = new XMLHttpRequest(); x.open('GET', '/api/item?x=' + i); x.onloadend = resolve; x.send();
      })); break;
      case 2: all.push(new Promise((resolve) => {
        const s = document.createElement('script'); s.src = '/static/s.js?i=' + i;
        s.onload = s.onerror = resolve; document.head.appendChild(s);
      })); break;
      default: all.push(new Promise((resolve) => {
        const img = new Image(); img.onload = img.onerror = resolve; img.src = '/static/p.gif?i=' + i;
      }));
    }
  }
  await Promise.all(all);
  window.__loadedMs = performance.now();
  document.title = 'many done';
})();`;

/** Fetches `count` bodies of `kb` KB, four at a time, then the title `bulk done`. */
const bulkScript = (count: number, kb: number): string => `
(async () => {
  let next = 0;
  const worker = async () => {
    while (next < ${count}) { const i = next++; await (await fetch('/api/blob?kb=${kb}&i=' + i)).text(); }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  document.title = 'bulk done';
})();`;

const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** About `kb` KB of JSON, half of it random hex: it compresses about 2×, like busy API data. */
function blob(i: number, kb: number): string {
  const rows: string[] = [];
  let size = 0;
  for (let r = 0; size < kb * 1024; r++) {
    const row = `{"id":${i * 100_000 + r},"name":"item ${r}","token":"${crypto.randomBytes(24).toString('hex')}","price":${(r % 997) / 10}}`;
    rows.push(row);
    size += row.length + 1;
  }
  return `[${rows.join(',')}]`;
}

export async function startNetworkSite(): Promise<NetworkSite> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (type: string, body: string | Buffer): void => {
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    switch (url.pathname) {
      case '/many':
        return send(
          'text/html; charset=utf-8',
          page('many', manyScript(Number(url.searchParams.get('n') ?? '200'))),
        );
      case '/bulk':
        return send(
          'text/html; charset=utf-8',
          page(
            'bulk',
            bulkScript(
              Number(url.searchParams.get('count') ?? '200'),
              Number(url.searchParams.get('kb') ?? '1024'),
            ),
          ),
        );
      case '/api/item':
        return send(
          'application/json',
          JSON.stringify({ i: url.searchParams.get('i') ?? url.searchParams.get('x'), ok: true }),
        );
      case '/api/blob':
        return send(
          'application/json',
          blob(Number(url.searchParams.get('i') ?? '0'), Number(url.searchParams.get('kb') ?? '1')),
        );
      case '/static/s.js':
        return send('text/javascript', 'window.__n = (window.__n || 0) + 1;');
      case '/static/p.gif':
        return send('image/gif', GIF);
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        return res.end('not here');
    }
  });
  return listenLoopback(server);
}
