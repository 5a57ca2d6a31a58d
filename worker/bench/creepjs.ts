import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { spawn } from 'node:child_process';
import os from 'node:os';
import { startXvfb } from '@persona-browser/xvfb';
import { chromiumArgs, findBrowserBinary, sandboxArgs } from '../src/browser/launch';
import { startWorker, waitInitialized } from './spawn';
import type { BenchWorker } from './spawn';

/**
 * `npm run bench:creepjs -- /path/to/creepjs/docs` (or `CREEPJS_DIR=…`): what the public
 * CreepJS detector makes of a worker's persona. CreepJS is not on the registry; point this at
 * an unpacked copy of its `docs` folder (index.html and creep.js). It is served from loopback
 * with one added script of this bench's own that waits for CreepJS' result
 * (`window.Fingerprint`, in the main world, as a site's own script reads it) and posts the part
 * printed here. The worker is started with this process's environment, so the persona is set
 * as a user sets it: `BROWSER_PLATFORM=windows BROWSER_TIMEZONE=Europe/Rome npm run
 * bench:creepjs -- …`. It prints the lies CreepJS counts (by name), its "like headless",
 * "headless" and "stealth" ratings with the signals behind them, and what it read in a worker.
 * `BENCH_CREEPJS_PLAIN=1` measures, for comparison, a Chromium that no program drives: started
 * with the worker's switches on a display of its own, the page given on its command line, no
 * DevTools at all.
 */

const REPORT_SCRIPT = `(() => {
  const started = Date.now();
  const tick = () => {
    const fp = window.Fingerprint;
    if (!fp && Date.now() - started < 60000) return setTimeout(tick, 250);
    const pick = (o) => (o ? Object.fromEntries(Object.entries(o).filter(([k]) => !k.startsWith('$'))) : null);
    const w = fp && fp.workerScope;
    const body = !fp ? { error: 'CreepJS gave no result within 60 s' } : {
      lies: fp.lies ? { total: fp.lies.totalLies, data: fp.lies.data } : null,
      headless: fp.headless ? {
        likeHeadlessRating: fp.headless.likeHeadlessRating, likeHeadless: pick(fp.headless.likeHeadless),
        headlessRating: fp.headless.headlessRating, headless: pick(fp.headless.headless),
        stealthRating: fp.headless.stealthRating, stealth: pick(fp.headless.stealth),
      } : null,
      worker: w ? { scope: (/(Service|Shared|Dedicated)WorkerGlobalScope/.exec(document.body.innerText) || [null])[0], userAgent: w.userAgent, platform: w.platform,
        device: w.device, lied: w.lied, lies: w.lies } : null,
    };
    fetch('/__bench/report', { method: 'POST', body: JSON.stringify(body) });
  };
  tick();
})();`;

interface CreepReport {
  error?: string;
  lies: { total: number; data: Record<string, string[]> } | null;
  headless: {
    likeHeadlessRating: number;
    likeHeadless: Record<string, unknown>;
    headlessRating: number;
    headless: Record<string, unknown>;
    stealthRating: number;
    stealth: Record<string, unknown>;
  } | null;
  worker: {
    scope: string | null;
    userAgent: string;
    platform: string;
    device: string;
    lied: boolean;
    lies: Record<string, unknown>;
  } | null;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.json': 'application/json',
  '.ico': 'image/x-icon',
};

/** CreepJS' folder served on 127.0.0.1, its index with the reporter added; resolves the report. */
function serveCreep(dir: string): Promise<{
  url: string;
  report: Promise<CreepReport>;
  close(): void;
}> {
  let deliver: (r: CreepReport) => void = () => undefined;
  const report = new Promise<CreepReport>((resolve) => (deliver = resolve));
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://loopback').pathname;
    if (pathname === '/__bench/report' && req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        res.end();
        deliver(JSON.parse(body) as CreepReport);
      });
      return;
    }
    if (pathname === '/__bench/report.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(REPORT_SCRIPT);
      return;
    }
    const file = path.join(
      dir,
      path.normalize(pathname.endsWith('/') ? `${pathname}index.html` : pathname),
    );
    if (!file.startsWith(dir) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end();
      return;
    }
    let body: Buffer | string = fs.readFileSync(file);
    if (path.basename(file) === 'index.html') {
      body = body
        .toString()
        .replace('</body>', '<script src="/__bench/report.js"></script></body>');
    }
    res.writeHead(200, {
      'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
    });
    res.end(body);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://127.0.0.1:${port}/`, report, close: () => server.close() });
    });
  });
}

function persona(): string {
  const set = Object.entries(process.env)
    .filter(([k, v]) => /^(BROWSER_|CHROME_PATH$)/.test(k) && v)
    .map(([k, v]) => `${k}=${v}`);
  return set.length ? set.join(' ') : 'defaults (no BROWSER_* set)';
}

async function visit(w: BenchWorker, url: string): Promise<void> {
  const created = await w.client.json<{ page_id: string }>('POST', '/api/v1/ops/create-page', {});
  if (created.status !== 200) throw new Error(`create-page: ${created.status}`);
  const nav = await w.client.json('POST', `/api/v1/ops/${created.body.page_id}/navigate`, { url });
  if (nav.status !== 200) throw new Error(`navigate: ${nav.status} ${JSON.stringify(nav.body)}`);
}

function print(r: CreepReport): void {
  const out = (s: string): boolean => process.stdout.write(`${s}\n`);
  out(`persona: ${persona()}`);
  if (r.error) return void out(`error: ${r.error}`);
  const lies = Object.entries(r.lies?.data ?? {});
  out(`lies: ${r.lies?.total ?? 'unknown'}`);
  for (const [api, list] of lies) for (const lie of list) out(`  - ${api}: ${lie}`);
  const h = r.headless;
  const flagged = (o: Record<string, unknown> | undefined): string =>
    Object.entries(o ?? {})
      .filter(([, v]) => v === true)
      .map(([k]) => k)
      .join(', ') || 'none';
  out(`like headless: ${h?.likeHeadlessRating ?? '?'} % (${flagged(h?.likeHeadless)})`);
  out(`headless: ${h?.headlessRating ?? '?'} % (${flagged(h?.headless)})`);
  out(`stealth: ${h?.stealthRating ?? '?'} % (${flagged(h?.stealth)})`);
  const w = r.worker;
  if (w) {
    out(`worker (${w.scope ?? 'scope unknown'}): ${w.device} · platform ${w.platform}`);
    out(`  userAgent ${w.userAgent}`);
    out(`  lied: ${w.lied ? JSON.stringify(w.lies) : 'no'}`);
  } else {
    out('worker: no result');
  }
}

async function main(): Promise<void> {
  const dir = path.resolve(process.argv[2] ?? process.env.CREEPJS_DIR ?? '');
  if (!fs.existsSync(path.join(dir, 'index.html')) || !fs.existsSync(path.join(dir, 'creep.js'))) {
    process.stderr.write(
      'usage: npm run bench:creepjs -- <CreepJS docs folder> (or CREEPJS_DIR): it must hold index.html and creep.js\n',
    );
    process.exit(2);
  }
  const site = await serveCreep(dir);
  const timeout = new Promise<CreepReport>((resolve) =>
    setTimeout(
      () => resolve({ error: 'no report within 90 s', lies: null, headless: null, worker: null }),
      90_000,
    ).unref(),
  );
  if (process.env.BENCH_CREEPJS_PLAIN === '1') {
    try {
      await plainChromium(site.url, () => Promise.race([site.report, timeout]));
    } finally {
      site.close();
    }
    return;
  }
  const w = await startWorker();
  try {
    await waitInitialized(w);
    await visit(w, site.url);
    print(await Promise.race([site.report, timeout]));
  } finally {
    await w.stop();
    site.close();
  }
}

/** A Chromium with the worker's switches and a fresh profile, on its own Xvfb, opening `url`. */
async function plainChromium(url: string, report: () => Promise<CreepReport>): Promise<void> {
  const display = await startXvfb();
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-creep-plain-'));
  const browser = spawn(
    findBrowserBinary(process.env.CHROME_PATH ?? null),
    [
      ...chromiumArgs({ window: display.workArea }),
      ...sandboxArgs(false, process.getuid?.() ?? null),
      `--user-data-dir=${profile}`,
      url,
    ],
    { env: { ...process.env, DISPLAY: display.display }, stdio: 'ignore' },
  );
  try {
    const r = await report();
    process.stdout.write("a Chromium no program drives (no DevTools), the worker's switches\n");
    print(r);
  } finally {
    browser.kill('SIGTERM');
    await new Promise((r) => browser.once('exit', r).once('error', r));
    await display.stop();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
