import fs from 'node:fs';
import path from 'node:path';
import type { RunningWorker } from './helpers/worker';
import { startWorker } from './helpers/worker';

let w: RunningWorker;

beforeAll(async () => {
  w = await startWorker({ persona: 'alice' });
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
});

describe('navigator status', () => {
  test('the browser is up without any call, with SPEC fields and types', async () => {
    const r = await w.call('GET', '/api/v1/system/status', { auth: false });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      initialized: true,
      browser_context_active: true,
      page_pool_active: true,
      max_pages: 5,
      slowmo: 0,
      page_count: 0,
      available_pages: 0,
    });
  });
});

describe('ping', () => {
  test('answers after about 2 s with pong, commit, persona, activity and proxy_errors', async () => {
    const before = Date.now();
    const r = await w.call<Record<string, any>>('GET', '/api/v1/system/ping', { auth: false });
    expect(r.status).toBe(200);
    expect(r.ms).toBeGreaterThan(1500);
    expect(r.ms).toBeLessThan(4000);
    expect(r.body.status).toBe('alive');
    expect(r.body.pong).toBeGreaterThanOrEqual(before);
    expect(Number.isInteger(r.body.pong)).toBe(true);
    expect(r.body.persona).toBe('alice');
    expect(r.body.proxy_errors).toBeNull();
    expect(r.body.activity).toEqual({ in_flight: 0, idle_seconds: expect.any(Number) });
    expect(r.body.commit === null || /^[0-9a-f]{40}$/.test(r.body.commit.hash)).toBe(true);
  });
});

describe('update', () => {
  test('touches .update-trigger at the repository root', async () => {
    const file = path.resolve(__dirname, '..', '..', '.update-trigger');
    fs.rmSync(file, { force: true });
    const r = await w.call('GET', '/api/v1/system/update');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, page_id: null });
    expect(fs.existsSync(file)).toBe(true);
    fs.rmSync(file, { force: true });
  });
});

describe('metrics', () => {
  test('404 with the error envelope when the waker is not running', async () => {
    const r = await w.call('GET', '/api/v1/system/metrics');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({
      success: false,
      error: expect.stringMatching(/waker/),
      page_id: null,
    });
  });
});
