import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startFixture } from '@persona-browser/testkit/fixture';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';
import { until } from '@persona-browser/testkit/waker';

let w: RunningWorker;
const git = (...args: string[]): string =>
  execFileSync('git', ['-C', w.dir, ...args], { encoding: 'utf8' }).trim();

beforeAll(async () => {
  // A time zone of its own: a persona on a UTC server would list a warning (panel.test.ts).
  w = await startWorker({ persona: 'alice', env: { BROWSER_TIMEZONE: 'Europe/Rome' } });
  // REPO_ROOT is the worker's scratch folder: make it a checkout with a commit of its own,
  // before any ping reads it.
  git('init', '-q');
  git(
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.com',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'fixture: the commit ping reports',
  );
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
});

describe('navigator status', () => {
  test('the browser is up without any call, with the documented fields and types', async () => {
    const r = await w.call('GET', '/api/v1/system/status', { auth: false });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      initialized: true,
      browser_context_active: true,
      page_pool_active: true,
      max_pages: 5,
      slowmo: 0,
      warnings: [],
      page_count: 0,
      available_pages: 0,
    });
  });
});

describe('connections', () => {
  test('an idle keep-alive connection is kept 65 s, and the answer says so: clients close first', async () => {
    const r = await w.call('GET', '/api/v1/system/status', { auth: false });
    expect(r.status).toBe(200);
    expect(r.headers.get('keep-alive')).toBe('timeout=65');
  });
});

describe('ping', () => {
  test('answers after about 2 s with pong, commit, persona, activity and proxy_errors', async () => {
    const hash = git('rev-parse', 'HEAD');
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
    expect(r.body.commit).toEqual({
      hash,
      subject: 'fixture: the commit ping reports',
      date: new Date(git('log', '-1', '--format=%cI')).toISOString(),
    });
  });
});

describe('activity', () => {
  test('counts client calls in flight, and idle time once they finish', async () => {
    const site = await startFixture();
    try {
      await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'act' } });
      const nav = w.call('POST', '/api/v1/ops/act/navigate', {
        body: { url: `${site.url}/slow?ms=4000` },
      });
      const during = await w.call<Record<string, any>>('GET', '/api/v1/system/ping', {
        auth: false,
      });
      expect(during.body.activity).toEqual({ in_flight: 1, idle_seconds: null });
      await nav;
      // The idle time counts up from the call's end.
      const after = await until(
        async () => {
          const r = await w.call<Record<string, any>>('GET', '/api/v1/system/ping', {
            auth: false,
          });
          return r.body.activity.idle_seconds >= 2 ? r : null;
        },
        15_000,
        'idle_seconds to reach 2 after the last call',
      );
      expect(after.body.activity.in_flight).toBe(0);
      expect(after.body.activity.idle_seconds).toBeLessThan(10);
    } finally {
      await w.call('DELETE', '/api/v1/ops/act/destroy-page');
      await site.close();
    }
  });
});

describe('proxy_errors', () => {
  test('becomes a count once the persona has a proxy identity file', async () => {
    const file = path.join(w.dataDir, 'proxy-identity.json');
    fs.writeFileSync(file, '{}');
    try {
      const r = await w.call<Record<string, any>>('GET', '/api/v1/system/ping', { auth: false });
      expect(r.body.proxy_errors).toBe(0);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});

describe('update', () => {
  test('touches .update-trigger at the repository root', async () => {
    const file = path.join(w.dir, '.update-trigger');
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
