import fs from 'node:fs';
import path from 'node:path';
import type { SupervisorStatus } from '@persona-browser/contracts';
import { fleetPids } from '@persona-browser/testkit/fleet-procs';
import { git, makeFleetRepo, startSupervisor } from '@persona-browser/testkit/fleet-repo';
import type { FleetRepo, RunningSupervisor } from '@persona-browser/testkit/fleet-repo';

/**
 * The remote as the supervisor sees it from where it runs. A server's checkout whose origin is
 * a path the supervisor cannot see (as a host path is to a supervisor in a container) is the
 * case here: the bare repository is removed before the supervisor starts. No persona: the fleet
 * is the waker alone, and UPDATE_INTERVAL is an hour, so fetches are the start's and the
 * trigger's.
 */
const FLEET = `supr${process.pid}`;
const GIT_REASON = 'does not appear to be a git repository';
const GIT_LAST_LINE = 'and the repository exists.';

let repo: FleetRepo;
let sup: RunningSupervisor;

const messages = (s: SupervisorStatus): string[] => s.log.map((l) => l.message);

beforeAll(async () => {
  repo = makeFleetRepo({});
  fs.mkdirSync(repo.personasDir, { recursive: true });
  fs.rmSync(repo.remote, { recursive: true, force: true });
  sup = await startSupervisor(repo, {
    WAKER_DRIVER: 'process',
    FLEET_ID: FLEET,
    UPDATE_INTERVAL: '3600',
    HEALTH_TIMEOUT: '40',
  });
}, 120_000);

afterAll(async () => {
  expect(await sup?.stop()).toBe(0);
  expect(fleetPids(FLEET)).toEqual([]);
  repo?.remove();
}, 120_000);

test("a remote the supervisor cannot see shows unreachable, with git's whole reason", async () => {
  const s = await sup.waitFor('the remote asked', (x) => x.remote.reachable !== null, 60_000);
  expect(s.remote).toMatchObject({ url: repo.remote, reachable: false });
  expect(Date.parse(s.remote.checked_at ?? '')).not.toBeNaN();
  // All of git's message, not its last line alone.
  expect(s.remote.error).toContain(`'${repo.remote}' ${GIT_REASON}`);
  expect(s.remote.error).toContain(GIT_LAST_LINE);
  expect(
    messages(s).some((m) => m.includes('cannot be reached from here') && m.includes(GIT_REASON)),
  ).toBe(true);

  // The fleet still comes up on what it has; the fetch that follows fails with the same words.
  const after = await sup.waitFor(
    'the fetch failed',
    (x) => x.state === 'idle' && messages(x).some((m) => m.startsWith('update check failed')),
    120_000,
  );
  const failed = messages(after).find((m) => m.startsWith('update check failed')) ?? '';
  expect(failed).toContain(GIT_REASON);
  expect(failed).toContain(GIT_LAST_LINE);
  expect(after.remote.reachable).toBe(false);
}, 180_000);

test('a reachable bare remote shows reachable, from the next fetch on', async () => {
  const before = (await sup.status()).remote.checked_at ?? '';
  git(path.dirname(repo.remote), 'init', '--quiet', '--bare', '--initial-branch=main', repo.remote);
  git(repo.dev, 'push', '--quiet', 'origin', 'main');
  fs.writeFileSync(path.join(repo.checkout, '.update-trigger'), '');
  const s = await sup.waitFor('the remote reached', (x) => x.remote.reachable === true, 60_000);
  expect(s.remote).toMatchObject({ url: repo.remote, reachable: true, error: null });
  expect(Date.parse(s.remote.checked_at ?? '')).toBeGreaterThan(Date.parse(before));
  expect(messages(s).some((m) => m.endsWith('is reachable'))).toBe(true);
}, 120_000);
