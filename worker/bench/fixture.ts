import http from 'node:http';
import { listenLoopback } from '@persona-browser/testkit/loopback';

/** The benchmark's fixture site on 127.0.0.1: a content-rich page and a page that freezes. */

export interface Fixture {
  url: string;
  close(): Promise<void>;
}

const page = (title: string, body: string, head = ''): string =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;

const WORDS =
  'persona browser page pool lease navigate screenshot content network capture media plugin worker waker supervisor display render layout paint script style table form list article'.split(
    ' ',
  );

/** Deterministic filler text: the same page on every run. */
function words(seed: number, count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(WORDS[(seed * 7 + i * 13) % WORDS.length] as string);
  return out.join(' ');
}

const STYLE = `<style>
body{font:15px/1.5 sans-serif;margin:0;color:#222}
header{background:#234;color:#fff;padding:12px 24px}
nav a{color:#cde;margin-right:12px}
main{display:grid;grid-template-columns:3fr 1fr;gap:24px;padding:24px}
article p{margin:0 0 10px}
table{border-collapse:collapse;width:100%}
td,th{border:1px solid #ccc;padding:4px 8px}
tr:nth-child(even){background:#f3f6fa}
.card{border-radius:8px;box-shadow:0 1px 4px #0003;padding:12px;margin-bottom:12px;
background:linear-gradient(135deg,#fff,#e8f0ff)}
</style>`;

/**
 * A realistic article page: navigation, paragraphs, a data table, cards, a form (~700
 * elements); `scale` repeats the article and the table (15: ~500 kB, a large site's page).
 */
function contentPage(scale = 1): string {
  const nav = Array.from({ length: 20 }, (_, i) => `<a href="/section/${i}">${words(i, 1)}</a>`);
  const paragraphs = Array.from(
    { length: 60 * scale },
    (_, i) => `<h3>${words(i, 3)}</h3><p>${words(i, 40)} <em>${words(i + 1, 3)}</em>.</p>`,
  );
  const rows = Array.from(
    { length: 50 * scale },
    (_, r) =>
      `<tr>${Array.from({ length: 6 }, (_, c) => `<td>${words(r * 6 + c, 2)} ${r * c}</td>`).join('')}</tr>`,
  );
  const cards = Array.from(
    { length: 12 },
    (_, i) =>
      `<div class="card"><strong>${words(i, 2)}</strong><ul>${Array.from({ length: 4 }, (_, j) => `<li>${words(i + j, 4)}</li>`).join('')}</ul></div>`,
  );
  const form = `<form><label>Name <input name="name"></label><label>Topic <select name="t">${WORDS.map((w) => `<option>${w}</option>`).join('')}</select></label><textarea name="msg"></textarea><button>Send</button></form>`;
  return page(
    'Bench content page',
    `<header><h1>Bench content</h1><nav>${nav.join('')}</nav></header><main><article>${paragraphs.join('')}<table><thead><tr>${Array.from({ length: 6 }, (_, c) => `<th>col ${c}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table></article><aside>${cards.join('')}${form}</aside></main>`,
    STYLE,
  );
}

export async function startFixture(): Promise<Fixture> {
  const content = contentPage();
  const large = contentPage(15);
  // ~200 kB: the size of a typical article page, where the API's fixed costs weigh most.
  const medium = contentPage(6);
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const html = (status: number, body: string): void => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    if (pathname === '/content') return html(200, content);
    if (pathname === '/content-large') return html(200, large);
    if (pathname === '/content-medium') return html(200, medium);
    if (pathname === '/freeze') {
      // The renderer stops answering shortly after load: the worker should mark the page stuck.
      return html(
        200,
        page('Freezer', '<p>freezing soon</p>', '<script>setTimeout(()=>{for(;;){}},300)</script>'),
      );
    }
    return html(404, page('Not here', `<p>no fixture at ${pathname}</p>`));
  });
  return listenLoopback(server);
}
