import { SYSTEM_PATHS, requestCountsBodySchema } from '@persona-browser/contracts';
import { requestsPerHour } from '@persona-browser/service-kit';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

/**
 * The worker's own request counts per hour, which the waker asks for where the request log is
 * on another node: the same figures the waker reads from the log's files on one server.
 */
let w: RunningWorker;

beforeAll(async () => {
  w = await startWorker({ persona: 'counted' });
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
});

type Counts = { hours: number; requests: Array<{ hour: string; count: number }> };

test('counts the requests this worker began per hour, as the log files say', async () => {
  const before = await w.call<Counts>('GET', `${SYSTEM_PATHS.requests}?hours=3`);
  expect(before.status).toBe(200);
  expect(requestCountsBodySchema.validate(before.body).error).toBeUndefined();
  const sum = (c: Counts): number => c.requests.reduce((s, h) => s + h.count, 0);
  for (let i = 0; i < 5; i++) expect((await w.call('GET', '/api/v1/plugins')).status).toBe(200);
  const after = await w.call<Counts>('GET', `${SYSTEM_PATHS.requests}?hours=3`);
  expect(after.body.hours).toBe(3);
  expect(after.body.requests).toHaveLength(3);
  expect(sum(after.body) - sum(before.body)).toBe(5);
  // The hours end with the current one, and agree with the files read directly.
  const now = new Date().toISOString().slice(0, 13);
  expect(after.body.requests[2]?.hour.slice(0, 13)).toBe(now);
  expect(after.body.requests).toEqual(await requestsPerHour(w.dataDir, 3));
});

test('a bad hours value is refused by name; the key is required', async () => {
  for (const hours of ['0', '1201', '1.5', 'x']) {
    const r = await w.call<{ success: boolean; error: string }>(
      'GET',
      `${SYSTEM_PATHS.requests}?hours=${hours}`,
    );
    expect(r.status).toBe(400);
    expect(r.body.success).toBe(false);
    expect(r.body.error).toContain('hours');
  }
  expect((await w.call('GET', SYSTEM_PATHS.requests, { auth: false })).status).toBe(401);
});
