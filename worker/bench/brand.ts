import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type {
  BrandReport,
  DetectorSite,
  FingerprintReport,
  HeadlessDetectorReport,
  Signal,
} from '@persona-browser/testkit/detector-site';
import { fingerprintClaims, startDetectorSite } from '@persona-browser/testkit/detector-site';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { sleep, startWorker } from '@persona-browser/testkit/worker';

/**
 * `npm run bench:brand`: which brand a persona's Chromium should tell. The worker runs a
 * default persona (its own zone and language) once telling the truth (`BROWSER_BRAND=real`:
 * Chromium) and once claiming Google Chrome (`BROWSER_BRAND=google-chrome`), and, where one is
 * installed (`CHROME_PATH`, /usr/bin/google-chrome), a real Google Chrome as the reference.
 * Each visits every detector page of the repository and the `/brand` page, which reads what a
 * claim of Google Chrome is checked against. A cell is what the detector flagged ("-": nothing);
 * the last row counts the giveaways. Printed, never asserted. With CREEPJS_DIR set to an
 * unpacked CreepJS (index.html, creep.js), its like-headless and stealth ratings are read too,
 * served from loopback for this measurement only. BENCH_BRAND_PLATFORM=windows runs the
 * persona with that `BROWSER_PLATFORM`.
 */

interface Column {
  label: string;
  env: Record<string, string>;
}

type Cell = { flags: string[]; note?: string };

/** The persona: its own zone and language, and BENCH_BRAND_PLATFORM's system when set. */
const PERSONA: Record<string, string> = {
  BROWSER_TIMEZONE: 'Europe/Berlin',
  BROWSER_LOCALE: 'de-DE',
  ...(process.env.BENCH_BRAND_PLATFORM
    ? { BROWSER_PLATFORM: process.env.BENCH_BRAND_PLATFORM }
    : {}),
};

/** A Google Chrome binary on this machine, or null. */
function googleChrome(): string | null {
  const given = process.env.CHROME_PATH;
  if (given && /google-chrome|chrome$/.test(given) && fs.existsSync(given)) return given;
  for (const p of ['/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'])
    if (fs.existsSync(p)) return p;
  return null;
}

/** Serves `dir` on loopback: CreepJS as unpacked, for a measurement. */
async function serveDir(dir: string): Promise<{ url: string; close(): Promise<void> }> {
  const types: Record<string, string> = {
    '.html': 'text/html; charset=utf-8',
    '.js': 'text/javascript',
    '.css': 'text/css',
    '.json': 'application/json',
  };
  const server = http.createServer((req, res) => {
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const file = path.join(dir, pathname.endsWith('/') ? `${pathname}index.html` : pathname);
    if (!file.startsWith(dir) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
    res.end(fs.readFileSync(file));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const flagged = (items: string[]): Cell => ({ flags: items });

async function measure(
  site: DetectorSite,
  creep: string | null,
  env: Record<string, string>,
): Promise<Map<string, Cell>> {
  const w: RunningWorker = await startWorker({ env: { ...PERSONA, ...env } });
  const cells = new Map<string, Cell>();
  try {
    await w.waitInitialized(60_000);
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'b' } });
    const visit = async <T>(name: string): Promise<T> => {
      site.forget(name);
      const nav = await w.call('POST', '/api/v1/ops/b/navigate', {
        body: { url: `${site.url}/${name}` },
      });
      if (nav.status !== 200) throw new Error(`navigate ${name}: ${JSON.stringify(nav.body)}`);
      return site.waitFor<T>(name);
    };
    const own = await visit<Signal[]>('own');
    cells.set('own checks (12 signals)', flagged(own.filter((s) => !s.pass).map((s) => s.name)));
    const botd = await visit<{ bot: boolean; flagged: string[] }>('botd');
    cells.set('BotD', flagged(botd.bot ? ['bot', ...botd.flagged] : []));
    const fp = await visit<{ details: Record<string, { detected: boolean; severity: string }> }>(
      'fpscanner',
    );
    cells.set(
      'fpscanner',
      flagged(
        Object.entries(fp.details)
          .filter(([, v]) => v.detected)
          .map(([k, v]) => `${k} (${v.severity})`),
      ),
    );
    const hd = await visit<HeadlessDetectorReport>('headless-detector');
    cells.set('headless-detector', {
      flags: hd.score > 0.15 ? [`score ${hd.score}`] : [],
      note: `score ${Math.round(hd.score * 100) / 100}; checks: ${hd.detections.join(', ') || '-'}`,
    });
    const first = await visit<FingerprintReport>('fingerprintjs');
    const second = await visit<FingerprintReport>('fingerprintjs');
    const claims = fingerprintClaims(first);
    const systems = new Set(Object.values(claims.systems));
    cells.set('FingerprintJS (agreement, stable id)', {
      flags: [
        ...(systems.size === 1 ? [] : ['systems disagree']),
        ...(claims.timezone === PERSONA.BROWSER_TIMEZONE ? [] : ['zone']),
        ...(second.visitorId === first.visitorId ? [] : ['visitor id changed']),
      ],
      note: `brands: ${claims.brands.join(', ')}`,
    });
    const brand = await visit<BrandReport>('brand');
    if (brand.error) throw new Error(`brand page: ${brand.error}`);
    const claim = brand.claimsGoogleChrome;
    // A check a claim of Google Chrome fails: the feature is missing where the brand says Chrome.
    const lacks = (has: boolean, what: string): string[] => (claim && !has ? [what] : []);
    cells.set('rebrowser-bot-detector: brands name Google Chrome', {
      flags: claim ? [] : ['Chromium brand'],
      note: brand.brands.join(', '),
    });
    cells.set('Widevine (com.widevine.alpha)', {
      flags: lacks(brand.widevine, 'no Widevine'),
      note: brand.widevine ? 'available' : `none (${brand.widevineError ?? ''})`,
    });
    const h264 = brand.h264.mse && brand.h264.canPlay === 'probably';
    const aac = brand.aac.mse && brand.aac.canPlay === 'probably';
    cells.set('H.264 and AAC (MediaSource, canPlayType)', {
      flags: [...lacks(h264, 'no H.264'), ...lacks(aac, 'no AAC')],
      note: `H.264 ${h264 ? 'yes' : 'no'}, AAC ${aac ? 'yes' : 'no'}`,
    });
    cells.set('WebRTC H.264', {
      flags: lacks(brand.rtcH264, 'no WebRTC H.264'),
      note: brand.rtcH264 ? 'yes' : 'no',
    });
    cells.set('speech voices (Google’s own)', {
      flags: lacks(brand.googleVoices > 0, 'no Google voices'),
      note: `${brand.voices} voices, ${brand.googleVoices} Google`,
    });
    if (creep) {
      const nav = await w.call('POST', '/api/v1/ops/b/navigate', { body: { url: creep } });
      if (nav.status !== 200) throw new Error(`navigate CreepJS: ${JSON.stringify(nav.body)}`);
      await sleep(15_000);
      const text = await w.call<{ content?: string; text?: string }>(
        'POST',
        '/api/v1/ops/b/extract-content',
      );
      const content = JSON.stringify(text.body);
      const headless = /(\d+)% like headless/.exec(content)?.[1] ?? '?';
      const stealth = /(\d+)% stealth/.exec(content)?.[1] ?? '?';
      // Ratings, not verdicts: printed beside the others, never counted as a giveaway.
      cells.set('CreepJS (ratings)', {
        flags: [],
        note: `${headless}% like headless, ${stealth}% stealth`,
      });
    }
  } finally {
    await w.stop();
  }
  return cells;
}

function printTable(columns: Column[], results: Array<Map<string, Cell>>): void {
  const rows = [...new Set(results.flatMap((r) => [...r.keys()]))];
  const cellText = (c: Cell | undefined): string =>
    !c ? 'n/a' : `${c.flags.length ? c.flags.join(', ') : '-'}${c.note ? ` [${c.note}]` : ''}`;
  const lines = [
    ['detector', ...columns.map((c) => c.label)],
    ...rows.map((row) => [row, ...results.map((r) => cellText(r.get(row)))]),
    [
      'giveaways (rows flagged)',
      ...results.map((r) => String([...r.values()].filter((c) => c.flags.length > 0).length)),
    ],
  ];
  console.log(`| ${lines[0]!.join(' | ')} |`);
  console.log(`|${lines[0]!.map(() => '---').join('|')}|`);
  for (const line of lines.slice(1)) console.log(`| ${line.join(' | ')} |`);
}

async function main(): Promise<void> {
  const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => fs.existsSync(p));
  if (!chromium) throw new Error('no Chromium at /usr/bin/chromium or /usr/bin/chromium-browser');
  const columns: Column[] = [
    {
      label: `Chromium, truth (BROWSER_BRAND=real)`,
      env: { BROWSER_BRAND: 'real', CHROME_PATH: chromium },
    },
    {
      label: `Chromium, claims Google Chrome (BROWSER_BRAND=google-chrome)`,
      env: { BROWSER_BRAND: 'google-chrome', CHROME_PATH: chromium },
    },
  ];
  const chrome = googleChrome();
  if (chrome) columns.push({ label: `Google Chrome (${chrome})`, env: { CHROME_PATH: chrome } });
  console.log(
    `browser: ${chromium}; Google Chrome: ${chrome ?? 'not installed here (set CHROME_PATH)'}; ` +
      `persona: ${JSON.stringify(PERSONA)}`,
  );
  const site = await startDetectorSite();
  const creepDir = process.env.CREEPJS_DIR ? path.resolve(process.env.CREEPJS_DIR) : null;
  const creep = creepDir ? await serveDir(creepDir) : null;
  try {
    const results: Array<Map<string, Cell>> = [];
    for (const column of columns) results.push(await measure(site, creep?.url ?? null, column.env));
    printTable(columns, results);
  } finally {
    await creep?.close();
    await site.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
