import fs from 'node:fs';
import path from 'node:path';
import { freePort, startFixture } from '@persona-browser/testkit/fixture';
import { useSite } from '@persona-browser/testkit/site-worker';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { alive, browserPids, startWorker, xvfbPid } from '@persona-browser/testkit/worker';
import { until } from '@persona-browser/testkit/waker';

/**
 * A worker that dies outright (SIGKILL, the OOM killer, a power cut of its container) takes its
 * browser and display with it, and its persona can be started again at once. A persona held by
 * a live worker is never taken from it.
 */

type Body = Record<string, any>;
const file = useSite(startFixture);

async function gone(pids: number[], timeoutMs: number): Promise<number[]> {
  const until = Date.now() + timeoutMs;
  let left = pids.filter(alive);
  while (left.length && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    left = left.filter(alive);
  }
  return left;
}

/** What the profile recorded of the browser's last exit (Chromium's own bookkeeping). */
function exitType(w: RunningWorker): unknown {
  const prefs = JSON.parse(
    fs.readFileSync(path.join(w.profileDir, 'Default', 'Preferences'), 'utf8'),
  ) as { profile?: { exit_type?: unknown } };
  return prefs.profile?.exit_type;
}

async function remember(w: RunningWorker, value: string | null): Promise<string> {
  await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'mem' } });
  const query = value === null ? '' : `?v=${value}`;
  await w.call('POST', '/api/v1/ops/mem/navigate', {
    body: { url: `${file.site.url}/remember${query}` },
  });
  const r = await w.call<Body>('POST', '/api/v1/ops/mem/extract-content');
  return r.body.title as string;
}

/**
 * Waits until Chromium has written `value` into the profile's local storage on disk: it commits
 * storage a moment after the page wrote it, and what a power cut meets is what is on disk.
 */
async function storedOnDisk(w: RunningWorker, value: string): Promise<void> {
  const dir = path.join(w.profileDir, 'Default', 'Local Storage', 'leveldb');
  const needle = Buffer.from(value, 'latin1');
  await until(
    async () =>
      fs.existsSync(dir) &&
      fs.readdirSync(dir).some((f) => fs.readFileSync(path.join(dir, f)).includes(needle))
        ? true
        : null,
    30_000,
    `"${value}" in ${dir}`,
  );
}

test('SIGKILL of the worker ends its browser, display and VNC server; the persona starts again at once, its profile intact', async () => {
  const first = await startWorker({
    persona: 'kill9',
    env: { VNC_PORT: String(await freePort()) },
  });
  await first.waitInitialized();
  expect(await remember(first, 'kept')).toBe('stored:kept');
  await storedOnDisk(first, 'kept');
  const vnc = first.logs.find((l) => l.includes('vnc listening on localhost'));
  const vncPid = (JSON.parse(vnc as string) as { pid: number }).pid;
  expect(alive(vncPid)).toBe(true);
  const pids = [...browserPids(first), xvfbPid(first), vncPid];
  expect(pids.length).toBeGreaterThan(3);

  first.proc.kill('SIGKILL');
  await first.exited;
  expect(await gone(pids, 5_000)).toEqual([]);
  // The browser shut down by itself, without recording a crash.
  expect(['Normal', 'SessionEnded']).toContain(exitType(first));

  const again = await startWorker({ persona: 'kill9', dir: first.dir });
  try {
    await again.waitInitialized();
    expect(await remember(again, null)).toBe('stored:kept');
  } finally {
    await again.stop();
  }
});

test('a browser that outlived its dead worker is cleared at the next start', async () => {
  const first = await startWorker({ persona: 'orphan' });
  await first.waitInitialized();
  const pids = browserPids(first);
  const main = pids.find(
    (pid) => !fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type='),
  );
  // A browser that cannot notice its worker is gone (hung): frozen, then the worker is killed.
  process.kill(main as number, 'SIGSTOP');
  first.proc.kill('SIGKILL');
  await first.exited;
  expect(alive(main as number)).toBe(true);

  const again = await startWorker({ persona: 'orphan', dir: first.dir });
  try {
    await again.waitInitialized();
    expect(pids.filter(alive)).toEqual([]);
    expect((await again.call('POST', '/api/v1/ops/create-page', { body: {} })).status).toBe(200);
  } finally {
    await again.stop();
  }
});

test('a persona held by a live worker is refused by a second one, and the first keeps working', async () => {
  const first = await startWorker({ persona: 'owned' });
  try {
    await first.waitInitialized();
    const second = startWorker({ persona: 'owned', dir: first.dir });
    await expect(second).rejects.toThrow(
      new RegExp(`exited with 2[\\s\\S]*in use by the worker with pid ${first.proc.pid}`),
    );
    expect(await remember(first, 'still-mine')).toBe('stored:still-mine');
  } finally {
    await first.stop();
  }
});
