import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker, xvfbPid } from '@persona-browser/testkit/worker';
import { until } from '@persona-browser/testkit/waker';
import { fileGrab } from '../src/recording/recorder';
import { parseXwd } from '../src/recording/xwd';
import { decodeApng, share, shareOf } from './apng-decode';

/**
 * With RECORDING_LEASES on, a lease leaves one recording of the screen from the lease taken to
 * its end: what the leased page showed meanwhile is in its frames; a release ends it, and so
 * does an expiry. A page shown without a lease, or after it, is not recorded.
 */

type Body = Record<string, any>;
type Rgb = [number, number, number];
const RED: Rgb = [255, 0, 0];
const BLUE: Rgb = [0, 0, 255];
/** CSS `green`. */
const GREEN: Rgb = [0, 128, 0];
const YELLOW: Rgb = [255, 255, 0];
const COLOURS: Record<string, Rgb> = { red: RED, blue: BLUE, green: GREEN, yellow: YELLOW };

let w: RunningWorker;
let site: http.Server;
let siteUrl: string;

beforeAll(async () => {
  // A page of one colour per path: /red, /blue, /green.
  site = http.createServer((req, res) => {
    const colour = (req.url ?? '/').slice(1);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><html style="background:${colour}"><body></body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  w = await startWorker({ env: { RECORDING_LEASES: 'true', RECORDING_FPS: '5' } });
  await w.waitInitialized();
  for (const page_id of ['a', 'b']) {
    expect((await w.call('POST', '/api/v1/ops/create-page', { body: { page_id } })).status).toBe(
      200,
    );
  }
}, 60_000);
afterAll(async () => {
  await w?.stop();
  await new Promise((resolve) => site?.close(resolve));
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const recordings = async (): Promise<Body[]> =>
  (await w.call<Body>('GET', '/api/v1/recordings')).body.recordings as Body[];

/** The lease recordings of a page, once `n` are written (their end is written a moment after it). */
const leaseRecordingsOf = (pageId: string, n: number): Promise<Body[]> =>
  until(
    async () => {
      const list = (await recordings()).filter((r) => r.kind === 'lease' && r.page_id === pageId);
      return list.length >= n ? list : null;
    },
    10_000,
    `${n} lease recordings of page ${pageId}`,
  );

/**
 * The share of the worker's screen that is (close to) `rgb`, read where the recorder reads it:
 * the file its Xvfb keeps the screen in (`-fbdir`).
 */
async function onScreen(rgb: Rgb): Promise<number> {
  const args = fs.readFileSync(`/proc/${xvfbPid(w)}/cmdline`, 'utf8').split('\0');
  const dir = args[args.indexOf('-fbdir') + 1] as string;
  const s = parseXwd(await fileGrab(path.join(dir, 'Xvfb_screen0'))());
  const at = (x: number, y: number): Rgb => {
    const i = y * s.stride + x * 4;
    return [s.pixels[i + s.r] ?? 0, s.pixels[i + s.g] ?? 0, s.pixels[i + s.b] ?? 0];
  };
  return shareOf(s.width, s.height, at, rgb);
}

async function show(pageId: string, colour: string, lease: string): Promise<void> {
  const r = await w.call<Body>('POST', `/api/v1/ops/${pageId}/navigate`, {
    body: { url: `${siteUrl}/${colour}` },
    lease,
  });
  expect(r.body.success).toBe(true);
}

/**
 * Waits until the screen shows `colour`, for a page in front: its load ends before the browser
 * has drawn it, and a lease taken meanwhile rightly records the colour before (CI saw that).
 */
const drawn = (colour: string): Promise<true> =>
  until(
    async () => ((await onScreen(COLOURS[colour]!)) > 0.3 ? true : null),
    10_000,
    `the ${colour} page on the screen`,
  );

async function take(pageId: string, ttl: number): Promise<string> {
  const r = await w.call<Body>('POST', `/api/v1/ops/${pageId}/lease`, { body: { ttl } });
  expect(r.status).toBe(200);
  return r.body.lease_token as string;
}

/** The colours the recording's frames show, in order (a frame mostly one colour counts). */
async function colours(id: string): Promise<string[]> {
  const res = await fetch(`${w.url}/api/v1/recordings/${id}/recording.png`, {
    headers: { authorization: 'Bearer test-service-key' },
  });
  expect(res.status).toBe(200);
  const apng = decodeApng(Buffer.from(await res.arrayBuffer()));
  const seen: string[] = [];
  for (const f of apng.frames) {
    const c =
      share(apng, f, RED) > 0.3
        ? 'red'
        : share(apng, f, BLUE) > 0.3
          ? 'blue'
          : share(apng, f, GREEN) > 0.3
            ? 'green'
            : share(apng, f, YELLOW) > 0.3
              ? 'yellow'
              : 'other';
    if (seen.at(-1) !== c) seen.push(c);
  }
  return seen.filter((c) => c !== 'other');
}

test('a lease is recorded from its start to its release: the page as leased, red, then blue', async () => {
  await show('a', 'green', '');
  // A gesture brings the page to the front (the other test's page may be there), drawn green.
  const rest = await w.call('POST', '/api/v1/primitive/a/hover-position', {
    body: { x: 20, y: 20 },
  });
  expect(rest.status).toBe(200);
  await drawn('green');
  const before = Date.now();
  const token = await take('a', 60);
  await show('a', 'red', token);
  // Time itself is tested: each colour is on screen for 700 ms, several frames at 5 fps.
  await sleep(700);
  await show('a', 'blue', token);
  // Time itself is tested: as above.
  await sleep(700);
  const released = await w.call<Body>('DELETE', '/api/v1/ops/a/lease', { lease: token });
  expect(released.status).toBe(200);
  const after = Date.now();

  const [rec] = await leaseRecordingsOf('a', 1);
  expect(rec).toMatchObject({ kind: 'lease', plugin: '', page_id: 'a', outcome: 'released' });
  expect(rec!.missing).toBeNull();
  // Its times are the lease's: from the lease taken to its release.
  const started = Date.parse(rec!.time);
  expect(started).toBeGreaterThanOrEqual(before - 1000);
  expect(started + rec!.duration_ms).toBeLessThanOrEqual(after + 1000);
  expect(rec!.duration_ms).toBeGreaterThanOrEqual(1400);
  // The screen from the lease taken (the page was green then) to its release.
  expect(await colours(rec!.id as string)).toEqual(['green', 'red', 'blue']);
  const meta = (await w.call<Body>('GET', `/api/v1/recordings/${rec!.id}`)).body.recording;
  expect(meta).toMatchObject({ kind: 'lease', page_id: 'a', outcome: 'released' });

  // Ended: a page shown after the release is not in it, and starts no recording (as the green
  // one shown before the lease started none): the next lease's recording is the only other one,
  // and it is where the yellow page is.
  await show('a', 'yellow', '');
  // In front since its lease.
  await drawn('yellow');
  const next = await take('a', 60);
  expect((await w.call('DELETE', '/api/v1/ops/a/lease', { lease: next })).status).toBe(200);
  const list = await leaseRecordingsOf('a', 2);
  expect(list).toHaveLength(2);
  expect(list).toContainEqual(rec);
  const other = list.find((r) => r.id !== rec!.id);
  expect(await colours(other!.id as string)).toEqual(['yellow']);
  expect(await colours(rec!.id as string)).toEqual(['green', 'red', 'blue']);
});

test('a lease that expires ends its recording', async () => {
  await show('b', 'green', '');
  const token = await take('b', 3);
  await show('b', 'red', token);
  const shown = Date.now();
  const [rec] = await leaseRecordingsOf('b', 1);
  expect(rec).toMatchObject({ kind: 'lease', page_id: 'b', outcome: 'expired', missing: null });
  // It ended once the ttl had passed after the last call, and soon after (the table is asked
  // twice a second).
  const ended = Date.parse(rec!.time) + rec!.duration_ms;
  expect(ended).toBeGreaterThanOrEqual(shown + 1000);
  expect(rec!.duration_ms).toBeGreaterThanOrEqual(3000);
  expect(rec!.duration_ms).toBeLessThan(3000 + 4000);
  expect(await colours(rec!.id as string)).toContain('red');
});
