import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FrameBudget } from '../src/recording/frame-budget';
import type { Grab, Recording } from '../src/recording/recorder';
import { Recorder } from '../src/recording/recorder';
import { RecordingStore } from '../src/recording/recording-store';

/**
 * RECORDING_MEMORY_MB: the frames of every recording under way in the worker come out of one
 * budget. The real Recorder and store, with a screen of our own: each grab is a new screen of
 * noise (a frame that deflate cannot shrink), so every frame costs its full size.
 */

const WIDTH = 200;
const HEIGHT = 150;
/** One frame of noise: RGB scanlines with a filter byte a row, deflated (it stays as big). */
const FRAME_BYTES = HEIGHT * (1 + WIDTH * 3);
const CAP = 1024 * 1024;
/** The per-recording cap, far above the shared one: only the shared one can stop them here. */
const PER_RECORDING = 64 * 1024 * 1024;

/** An XWD dump (version 7, ZPixmap, 32 bits a pixel, least significant byte first). */
function xwdOf(pixels: Buffer): Buffer {
  const header = Buffer.alloc(100);
  const fields: Record<number, number> = {
    0: 100, // header size
    1: 7, // version
    2: 2, // ZPixmap
    3: 24, // depth
    4: WIDTH,
    5: HEIGHT,
    7: 0, // LSBFirst
    11: 32, // bits a pixel
    12: WIDTH * 4, // bytes a row
    14: 0xff0000,
    15: 0x00ff00,
    16: 0x0000ff,
    19: 0, // colours
  };
  for (const [i, v] of Object.entries(fields)) header.writeUInt32BE(v, Number(i) * 4);
  return Buffer.concat([header, pixels]);
}

let grabs = 0;
/** A new screen of noise each time. */
const noise: Grab = async () => {
  grabs += 1;
  return xwdOf(crypto.randomBytes(WIDTH * HEIGHT * 4));
};

let dir: string;
let store: RecordingStore;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-recording-memory-'));
  store = new RecordingStore({ dir, capBytes: 1024 * 1024 * 1024, maxAgeMs: 86_400_000 });
  grabs = 0;
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const fileBytes = (id: string): number => store.file(id)?.length ?? 0;

test('recordings under way together stop at the one cap, truncated, and give the memory back', async () => {
  const budget = new FrameBudget(CAP);
  // The plugin calls' recorder and the leases' share the worker's budget.
  const opts = { store, grab: noise, fps: 10, maxBytes: PER_RECORDING, budget };
  const calls = new Recorder(opts);
  const leases = new Recorder(opts);
  const running: Recording[] = [
    calls.start({ kind: 'plugin', plugin: 'demo/a', pageId: 'a' }),
    leases.start({ kind: 'lease', plugin: '', pageId: 'b' }),
    leases.start({ kind: 'lease', plugin: '', pageId: 'c' }),
  ];
  // Until each has met the full budget and stopped, or (without a shared cap) until they took
  // three times the cap's worth.
  await until(
    () => running.every((r) => r.atCap) || grabs * FRAME_BYTES > 3 * CAP,
    'the recordings to stop at the cap',
  );
  expect(budget.heldBytes).toBeLessThanOrEqual(CAP);
  expect(budget.heldBytes + FRAME_BYTES).toBeGreaterThan(CAP);
  const withheld = async (): Promise<null> => null;
  await Promise.all(running.map((r) => r.finish('ok', withheld)));

  const metas = running.map((r) => store.meta(r.id));
  for (const meta of metas) {
    expect(meta).toMatchObject({ truncated: true, missing: null });
    expect(meta?.frames).toBeGreaterThan(0);
  }
  // What they wrote together is what the cap let them hold, a file's own bytes aside.
  const written = running.reduce((sum, r) => sum + fileBytes(r.id), 0);
  expect(written).toBeLessThanOrEqual(CAP + 64 * 1024);
  expect(written).toBeGreaterThan(CAP - 4 * FRAME_BYTES);
  // Written, they hold nothing of the budget: a new recording grows again.
  expect(budget.heldBytes).toBe(0);
  const next = calls.start({ kind: 'plugin', plugin: 'demo/b', pageId: 'a' });
  const before = grabs;
  await until(() => grabs >= before + 3, 'frames of the next recording');
  await next.finish('ok', withheld);
  expect(store.meta(next.id)).toMatchObject({ truncated: false, missing: null });
  expect(store.meta(next.id)?.frames).toBeGreaterThanOrEqual(2);
  expect(budget.heldBytes).toBe(0);
});

test('a recording dropped without a file gives its memory back too', async () => {
  const budget = new FrameBudget(CAP);
  const recorder = new Recorder({ store, grab: noise, fps: 10, maxBytes: PER_RECORDING, budget });
  const recording = recorder.start({ kind: 'lease', plugin: '', pageId: 'a' });
  await until(() => budget.heldBytes >= 2 * FRAME_BYTES, 'two frames');
  await recording.finish('released', async () => 'a secret was on the page');
  expect(store.meta(recording.id)).toMatchObject({ missing: 'a secret was on the page' });
  expect(store.file(recording.id)).toBeNull();
  expect(budget.heldBytes).toBe(0);
});
