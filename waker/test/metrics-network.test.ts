import fs from 'node:fs';
import type { InstanceSample } from '@persona-browser/contracts';
import { createLogger } from '@persona-browser/service-kit';
import { cmdlineOf, descendantsOf } from '@persona-browser/testkit/procs';
import { KEY, ROOT, freePort, makePersonas, until } from '@persona-browser/testkit/waker';
import { ProcessDriver } from '../src/drivers/process';
import { Fleet } from '../src/fleet';
import { MetricsSampler } from '../src/metrics';
import type { SamplerOptions } from '../src/metrics';

/**
 * A persona's tree figures read from its worker over the network (what the waker does where it
 * cannot see a persona's processes) against the same tree read from this host's /proc. The
 * persona is a real worker run by the process driver, so both sources can see it.
 */
const logger = createLogger({ secrets: [], level: 'error' });
let fleet: Fleet;
let errors: unknown[] = [];
const samplers: MetricsSampler[] = [];

function sampler(o: Omit<SamplerOptions, 'intervalS' | 'windowS' | 'onError'>): MetricsSampler {
  const s = new MetricsSampler({
    intervalS: 60,
    windowS: 600,
    onError: (err) => errors.push(err),
    ...o,
  });
  samplers.push(s);
  return s;
}

const ppidOf = (pid: number): number =>
  Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);

/** The worker's browser, found in /proc: the Chromium under the worker whose parent is not one. */
function browserUnder(workerPid: number): number {
  const chromium = descendantsOf(workerPid).filter((pid) =>
    cmdlineOf(pid).includes('--user-data-dir='),
  );
  const roots = chromium.filter((pid) => !chromium.includes(ppidOf(pid)));
  expect(roots).toHaveLength(1);
  return roots[0]!;
}

beforeAll(async () => {
  const port = await freePort();
  const { personasDir } = makePersonas({ far: `PORT=${port}\nMODE=always-on\n` });
  fleet = new Fleet({
    personasDir,
    wakerPort: 1,
    driver: new ProcessDriver({
      fleetId: `netmetrics${process.pid}`,
      command: ProcessDriver.defaultCommand(ROOT),
      wakerPort: 1,
      logger,
    }),
    logger,
    workerEnv: { SERVICE_KEY: KEY, BROWSER_SLOWMO: '0' },
    commit: null,
  });
  await fleet.start();
  await until(
    async () => (fleet.get('far').state === 'running' ? true : null),
    90_000,
    'the persona running',
  );
});
afterAll(async () => {
  for (const s of samplers.splice(0)) s.stop();
  await fleet?.stop();
});
beforeEach(() => {
  errors = [];
});

describe('tree figures from the worker over the network', () => {
  test('the same browser pid and process count as /proc shows for it, and its memory', async () => {
    const [instance] = fleet.instances();
    expect(instance).toMatchObject({ name: 'far' });
    expect(instance!.worker).not.toBeNull();
    const browser = browserUnder(instance!.pid!);
    const network = sampler({
      instances: () => fleet.instances(),
      overNetwork: () => true,
      serviceKey: KEY,
    });
    const proc = sampler({ instances: () => [{ name: 'far', pid: browser }] });
    // Chromium may start or end a helper between two readings: take the pair that agrees.
    const [net, local] = await until(
      async (): Promise<[InstanceSample, InstanceSample] | null> => {
        const a = (await network.sampleNow()).instances.far!;
        const b = (await proc.sampleNow()).instances.far!;
        return a.procs === b.procs ? [a, b] : null;
      },
      20_000,
      'two readings of the same tree',
    );
    expect(net.pid).toBe(browser);
    expect(net.pid).toBe(local.pid);
    expect(net.procs).toBe(local.procs);
    expect(net.procs).toBeGreaterThanOrEqual(2);
    expect(net.rss_mb).toBeGreaterThan(local.rss_mb * 0.8);
    expect(net.rss_mb).toBeLessThan(local.rss_mb * 1.25);
    // The driver's pid roots the worker's whole tree on this host: the browser is a part of it.
    const whole = sampler({ instances: () => fleet.instances() });
    expect((await whole.sampleNow()).instances.far!.procs).toBeGreaterThan(net.procs);
    expect(errors).toEqual([]);
  });

  test('a worker that refuses the key, or is not running, reads as down', async () => {
    const wrongKey = sampler({
      instances: () => fleet.instances(),
      overNetwork: () => true,
      serviceKey: 'not-the-key',
    });
    expect((await wrongKey.sampleNow()).instances).toEqual({ far: null });
    const asleep = sampler({
      instances: () => [{ name: 'far', pid: 1, worker: null }],
      overNetwork: () => true,
      serviceKey: KEY,
    });
    expect((await asleep.sampleNow()).instances).toEqual({ far: null });
  });
});
