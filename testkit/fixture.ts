import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { INPUT_PAGE } from './input-page';

export interface Fixture {
  url: string;
  server: http.Server;
  /** Requests the fixture has seen, as `METHOD path`. */
  seen: string[];
  /**
   * How many times the fixture has served GET `pathname`. The /input page carries its own
   * number (`window.__served`): a reader can tell the document a navigation loaded from the
   * one before it without comparing two processes' clocks.
   */
  served(pathname: string): number;
  close(): Promise<void>;
}

const page = (title: string, body: string, head = ''): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title>${head}</head><body>${body}</body></html>`;

/** The title and the text of the fixture's /awkward page (a script adds the last characters). */
export const AWKWARD_TITLE = 'Café "quoted" \\ back ✓ 😀';
export const AWKWARD_TEXT = 'naïve "q" \\ \u2028 😀 <tag>\n\n\tend';
const AWKWARD_BODY =
  `<p id="awkward">${AWKWARD_TEXT.replace('<tag>', '&lt;tag&gt;')}</p>` +
  `<pre>${'line\n'.repeat(2000)}</pre>` +
  `<script>document.getElementById('awkward').append(String.fromCharCode(1, 31, 127, 0xd800))</script>`;

/**
 * The fixture site on 127.0.0.1: plain pages, a tall page, redirects, error statuses, a slow
 * and a hanging response, and pages that hang or crash their renderer on demand.
 */
export async function startFixture(): Promise<Fixture> {
  const seen: string[] = [];
  const served = (pathname: string): number => seen.filter((s) => s === `GET ${pathname}`).length;
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    seen.push(`${req.method} ${url.pathname}`);
    const html = (status: number, body: string): void => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(body);
    };
    switch (url.pathname) {
      case '/':
        return html(
          200,
          page(
            'Fixture home',
            '<h1 id="greeting">Hello from the fixture</h1><a href="/second">next</a>',
          ),
        );
      case '/second':
        return html(200, page('Second page', '<p id="second">second</p>'));
      case '/awkward':
        // Text that JSON escapes in every way: quotes, backslashes, beyond ASCII, an emoji (two
        // UTF-16 units), a line separator, newlines, control characters and a lone surrogate.
        return html(200, page(AWKWARD_TITLE, AWKWARD_BODY));
      case '/large': {
        // A page past the size whose later reads go by the document's node, a comment around
        // its root, the awkward characters in it, and a tag in the title and text.
        const tag = url.searchParams.get('tag') ?? '';
        const rows = Array.from({ length: 400 }, (_, i) => `<p class="row">${tag} row ${i}</p>`);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          `<!doctype html><!-- before the root --><html><head><meta charset="utf-8">` +
            `<title>Large ${tag} ${AWKWARD_TITLE}</title></head><body>` +
            `<h1 id="tag">${tag}</h1>${AWKWARD_BODY}${rows.join('\n')}</body></html><!-- after -->`,
        );
        return;
      }
      case '/tall':
        return html(
          200,
          page(
            'Tall page',
            '<div id="top">top</div><div style="height:5000px;background:linear-gradient(#fff,#09f)"></div><div id="bottom">bottom</div>',
          ),
        );
      case '/link':
        // One link, to the `to` path of this site (a page that answers slowly, say).
        return html(
          200,
          page(
            'Link',
            `<a id="link" href="${(url.searchParams.get('to') ?? '/').replace(/"/g, '&quot;')}" style="display:block;width:200px;height:40px;margin:100px">go</a>`,
          ),
        );
      case '/redirect':
        res.writeHead(302, { location: '/second' });
        return res.end();
      case '/missing':
        return html(404, page('Not here', '<p>404</p>'));
      case '/slow': {
        const ms = Number(url.searchParams.get('ms') ?? '1000');
        setTimeout(() => html(200, page('Slow page', `<p>after ${ms} ms</p>`)), ms);
        return;
      }
      case '/late-body': {
        // The headers at once, the body `ms` later: a page's fetch resolves before it ends.
        const ms = Number(url.searchParams.get('ms') ?? '500');
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.flushHeaders();
        setTimeout(() => res.end(`late body after ${ms} ms`), ms);
        return;
      }
      case '/hang':
        // Never answers: the navigation can only end by timing out.
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      case '/input':
        return html(
          200,
          INPUT_PAGE.replace(
            '<head>',
            `<head><script>window.__served=${served('/input')}</script>`,
          ),
        );
      case '/visibility':
        // The title tells whether this tab is the one in front.
        return html(
          200,
          page(
            'pending',
            '<p>visibility</p>',
            '<script>const t=()=>{document.title=document.visibilityState};t();document.addEventListener("visibilitychange",t)</script>',
          ),
        );
      case '/cookie': {
        // Sets the cookie `persona` to the `v` query (when given); the title shows the cookies.
        const v = url.searchParams.get('v');
        if (v)
          res.setHeader('set-cookie', `persona=${encodeURIComponent(v)}; Max-Age=3600; Path=/`);
        return html(
          200,
          page(
            'cookies',
            '<p>cookie</p>',
            '<script>document.title="cookies:"+document.cookie</script>',
          ),
        );
      }
      case '/tells':
        // What the page's first script saw of the system it runs on, kept in `window.tells`.
        return html(
          200,
          page(
            'tells',
            '<p>tells</p>',
            '<script>window.tells={ua:navigator.userAgent,platform:navigator.platform,hint:navigator.userAgentData?navigator.userAgentData.platform:null,locale:Intl.DateTimeFormat().resolvedOptions().locale}</script>',
          ),
        );
      case '/remember':
        // Stores the `v` query in localStorage (when given) and shows what is stored as the title.
        return html(
          200,
          page(
            'pending',
            '<p>remember</p>',
            '<script>const v=new URLSearchParams(location.search).get("v");if(v)localStorage.setItem("v",v);document.title="stored:"+localStorage.getItem("v")</script>',
          ),
        );
      case '/freeze':
        // The renderer stops answering shortly after load.
        return html(
          200,
          page(
            'Freezer',
            '<p>freezing soon</p>',
            '<script>setTimeout(() => { for (;;) {} }, 300)</script>',
          ),
        );
      case '/freeze-on-click':
        // The renderer stops answering when the button is pressed.
        return html(
          200,
          page(
            'Freeze on click',
            '<button id="freeze" style="position:absolute;left:200px;top:200px;width:200px;height:80px" onmousedown="for (;;) {}">freeze</button>',
          ),
        );
      default:
        return html(404, page('Unknown', `<p>no fixture at ${url.pathname}</p>`));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    seen,
    served,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port that nothing listens on (for a refused connection, or a server to start). */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as AddressInfo;
  await new Promise((r) => srv.close(r));
  return port;
}
