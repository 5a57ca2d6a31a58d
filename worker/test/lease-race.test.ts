import { startFixture } from '@persona-browser/testkit/fixture';
import { seeded } from '@persona-browser/testkit/seeded';
import { useSiteWorker } from '@persona-browser/testkit/site-worker';

/**
 * Many clients on one page for a while, some taking leases: a lease is exclusive from the
 * moment its token is returned. A call of another client that was running when the lease was
 * asked for has finished by then, and no call of another client runs while it is held.
 */

type Body = Record<string, any>;
const CLIENTS = 6;
/** The clients go on for at least this long, and until this many leases were granted. */
const RUN_MS = 20_000;
const LEASES = 10;
/** …but never longer than this. */
const MAX_RUN_MS = 60_000;
/**
 * What every client draws (lease or not, where to point) comes from this seed: printed at the
 * start, and LEASE_RACE_SEED=<n> runs the same draws again.
 */
const SEED = process.env.LEASE_RACE_SEED
  ? Number(process.env.LEASE_RACE_SEED)
  : Math.floor(Math.random() * 2 ** 32);
if (!Number.isInteger(SEED))
  throw new Error(`LEASE_RACE_SEED is not an integer: ${process.env.LEASE_RACE_SEED}`);
const file = useSiteWorker({ site: startFixture, pages: ['shared'] });

beforeAll(async () => {
  const { w, site } = file;
  await w.call('POST', '/api/v1/ops/shared/navigate', { body: { url: `${site.url}/` } });
});

interface Tally {
  leases: number;
  otherCallsRan: number;
  refused: number;
  /** What was running on the page when a client had just been given a lease. */
  runningAtGrant: string[];
  doubleHolders: number;
}

test(
  `${CLIENTS} clients, ${LEASES} leases: nothing of another client runs inside a lease`,
  async () => {
    const tally: Tally = {
      leases: 0,
      otherCallsRan: 0,
      refused: 0,
      runningAtGrant: [],
      doubleHolders: 0,
    };
    let holder: number | null = null;
    const started = Date.now();
    const going = (): boolean =>
      Date.now() - started < MAX_RUN_MS && (Date.now() - started < RUN_MS || tally.leases < LEASES);
    console.log(`lease race: seed ${SEED} (replay with LEASE_RACE_SEED=${SEED})`);

    const client = async (n: number): Promise<void> => {
      // One source per client: its draws do not depend on how the clients interleave.
      const random = seeded(SEED + n);
      const point = () => ({ x: 100 + random() * 800, y: 100 + random() * 400 });
      while (going()) {
        if (random() < 0.35) {
          const lease = await file.w.call<Body>('POST', '/api/v1/ops/shared/lease', {
            body: { ttl: 30 },
          });
          if (lease.status !== 200) {
            tally.refused += 1;
            continue;
          }
          const token = lease.body.lease_token as string;
          if (holder !== null) tally.doubleHolders += 1;
          holder = n;
          tally.leases += 1;
          // The page must be ours alone now: nothing is running on it.
          const pool = await file.w.call<Body>('GET', '/api/v1/system/status/pages', {
            auth: false,
          });
          const entry = (pool.body.pages as Body[]).find((p) => p.page_id === 'shared');
          if (entry?.current_operation)
            tally.runningAtGrant.push(entry.current_operation as string);
          const own = await file.w.call<Body>('POST', '/api/v1/primitive/shared/hover-position', {
            body: point(),
            lease: token,
          });
          expect(own.body.success).toBe(true);
          holder = null;
          const freed = await file.w.call('DELETE', '/api/v1/ops/shared/lease', { lease: token });
          expect(freed.status).toBe(200);
        } else {
          // A long-ish call (a curved mouse move takes most of a second): often running when
          // someone asks for a lease.
          const r = await file.w.call<Body>('POST', '/api/v1/primitive/shared/hover-position', {
            body: point(),
          });
          if (r.status === 200 && r.body.success) tally.otherCallsRan += 1;
          else if ([409, 423].includes(r.status)) tally.refused += 1;
          else throw new Error(`unexpected answer ${r.status} ${JSON.stringify(r.body)}`);
        }
      }
    };

    await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
    console.log(`lease race (seed ${SEED}): ${JSON.stringify(tally)}`);
    expect(tally.leases).toBeGreaterThanOrEqual(LEASES);
    expect(tally.otherCallsRan).toBeGreaterThanOrEqual(5);
    expect(tally.runningAtGrant).toEqual([]);
    expect(tally.doubleHolders).toBe(0);
  },
  MAX_RUN_MS + 30_000,
);
