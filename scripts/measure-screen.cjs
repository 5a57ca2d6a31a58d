// Measures what a worker's page sees of its screen, colours and WebGL, and CreepJS' "like headless"
// rating (CreepJS is not in the repository: CREEPJS_DIR names an unpacked copy, served from
// loopback for the measurement only). Needs the build. Usage:
//   CREEPJS_DIR=<CreepJS docs> node scripts/measure-screen.cjs '[{}, {"BROWSER_PLATFORM":"windows"}]'
/* global console, setTimeout */
const http = require('node:http');
const fs = require('node:fs');
const path = require('node:path');
const { startWorker } = require(path.join(__dirname, '..', 'testkit', 'dist', 'worker.js'));
const CREEP = process.env.CREEPJS_DIR;
if (!CREEP || !fs.existsSync(path.join(CREEP, 'index.html'))) {
  console.error('CREEPJS_DIR must name an unpacked CreepJS docs folder (with index.html)');
  process.exit(2);
}
const PROBE = `<!doctype html><html><body><div id=x></div><script>
(async () => {
  const el = document.getElementById('x');
  const sys = {};
  for (const c of ['ActiveText','Canvas','CanvasText','Field','ButtonFace','Highlight','LinkText']) {
    el.style.backgroundColor = c; sys[c] = getComputedStyle(el).backgroundColor; }
  const gl = (ctx) => { if (!ctx) return null; const e = ctx.getExtension('WEBGL_debug_renderer_info');
    return { vendor: ctx.getParameter(ctx.VENDOR), renderer: ctx.getParameter(ctx.RENDERER),
      unmaskedVendor: e && ctx.getParameter(e.UNMASKED_VENDOR_WEBGL), unmaskedRenderer: e && ctx.getParameter(e.UNMASKED_RENDERER_WEBGL) }; };
  const c = document.createElement('canvas');
  const r = {
    screen: { width: screen.width, height: screen.height, availWidth: screen.availWidth, availHeight: screen.availHeight, availLeft: screen.availLeft, availTop: screen.availTop },
    window: { screenX, screenY, outerWidth, outerHeight, innerWidth, innerHeight, dpr: devicePixelRatio },
    dark: matchMedia('(prefers-color-scheme: dark)').matches, light: matchMedia('(prefers-color-scheme: light)').matches,
    sys, body: getComputedStyle(document.body).backgroundColor,
    webgl: gl(c.getContext('webgl')), webgl2: gl(document.createElement('canvas').getContext('webgl2')),
    platform: navigator.platform,
  };
  await fetch('/report', { method: 'POST', body: JSON.stringify(r) });
})();
</script></body></html>`;
let waiting = null;
const server = http.createServer((req, res) => {
  if (req.url === '/probe') {
    res.setHeader('content-type', 'text/html');
    return res.end(PROBE);
  }
  if (req.url === '/report') {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      res.end('ok');
      waiting?.(JSON.parse(b));
    });
    return;
  }
  const file = path.join(
    CREEP,
    decodeURIComponent(req.url.split('?')[0].replace(/^\/creep\/?/, '/')) || '/',
  );
  const f =
    fs.existsSync(file) && fs.statSync(file).isDirectory() ? path.join(file, 'index.html') : file;
  if (!fs.existsSync(f)) {
    res.statusCode = 404;
    return res.end();
  }
  const type = f.endsWith('.html')
    ? 'text/html'
    : f.endsWith('.js')
      ? 'text/javascript'
      : f.endsWith('.css')
        ? 'text/css'
        : 'application/octet-stream';
  res.setHeader('content-type', type);
  fs.createReadStream(f).pipe(res);
});
(async () => {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const envs = JSON.parse(process.argv[2] || '[{}]');
  for (const env of envs) {
    const w = await startWorker({ env: { BROWSER_TIMEZONE: 'Europe/Berlin', ...env } });
    try {
      await w.waitInitialized(60_000);
      await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'm' } });
      const got = new Promise((r) => (waiting = r));
      await w.call('POST', '/api/v1/ops/m/navigate', { body: { url: `${base}/probe` } });
      const probe = await got;
      await w.call('POST', '/api/v1/ops/m/navigate', { body: { url: `${base}/creep/` } });
      let rating = null,
        flags = null;
      for (let i = 0; i < 40 && rating === null; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        const html =
          (await w.call('POST', '/api/v1/ops/m/extract-content', { body: {} })).body.content || '';
        const m = /(\d+)% like headless/.exec(html);
        if (m) {
          rating = Number(m[1]);
          const block = /Like Headless<\/strong><br><br>(.*?)<\/div>/s.exec(html);
          flags = block ? block[1].split('<br>').filter((l) => / true$/.test(l)) : null;
        }
      }
      console.log(
        JSON.stringify({ env, probe, creepLikeHeadless: rating, trueFlags: flags }, null, 1),
      );
    } finally {
      await w.stop();
    }
  }
  server.close();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
