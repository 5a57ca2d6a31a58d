/**
 * Update figures of the supervisor, measured on this machine with the default settings
 *  (UPDATE_INTERVAL 10 s, HEALTH_TIMEOUT 90 s) and two always-on personas (process
 * driver):
 *   - a good commit pushed: push to every always-on persona answering ping on it;
 *   - a bad commit pushed (a worker that exits at start; one that never becomes initialized):
 *     push to the fleet back on the previous commit with every always-on persona healthy, and
 *     whether the bad commit was tried again in the next three polls.
 * Build and run: npm run bench:update (also part of npm run bench).
 * Env: UPDATE_INTERVAL, HEALTH_TIMEOUT (defaults as above).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PingResult } from '@persona-browser/contracts';
import {
  BREAK,
  ROOT,
  call,
  freePort,
  makeFleetRepo,
  marked,
  sleep,
  startSupervisor,
} from '@persona-browser/testkit/fleet-repo';

const INTERVAL_S = Number(process.env.UPDATE_INTERVAL ?? 10);
const HEALTH_S = Number(process.env.HEALTH_TIMEOUT ?? 90);
const MAIN = 'worker/src/main.ts';

async function pingHash(port: number): Promise<string | null> {
  const r = await call<PingResult>(`http://127.0.0.1:${port}/api/v1/system/ping`, { key: null });
  return r.status === 200 ? (r.body.commit?.hash ?? null) : null;
}

/** Seconds from `since` until every persona answers ping on `hash` (and `extra` holds). */
async function until(
  ports: number[],
  hash: string,
  since: number,
  extra: () => Promise<boolean> = async () => true,
): Promise<number> {
  for (;;) {
    const hashes = await Promise.all(ports.map((p) => pingHash(p).catch(() => null)));
    if (hashes.every((h) => h === hash) && (await extra())) return (Date.now() - since) / 1000;
    await sleep(250);
  }
}

async function main(): Promise<void> {
  const original = fs.readFileSync(path.join(ROOT, MAIN), 'utf8');
  const ports = [await freePort(), await freePort()];
  const repo = makeFleetRepo({
    ann: `PORT=${ports[0]}\nMODE=always-on\n`,
    bob: `PORT=${ports[1]}\nMODE=always-on\n`,
  });
  const sup = await startSupervisor(repo, {
    WAKER_DRIVER: 'process',
    FLEET_ID: `bench${process.pid}`,
    UPDATE_INTERVAL: String(INTERVAL_S),
    HEALTH_TIMEOUT: String(HEALTH_S),
  });
  const rows: string[] = [];
  try {
    await sup.waitFor('healthy', (s) => s.healthy_commit === repo.head(), 300_000);
    console.log(`fleet up on ${repo.head().slice(0, 12)}: two always-on personas`);

    let t = Date.now();
    const good = repo.push('Worker: a mark', { [MAIN]: marked(original, 'bench good') });
    const goodS = await until(ports, good, t);
    rows.push(
      `good commit: every always-on persona on it after ${goodS.toFixed(1)} s ` +
        `(goal ≤ UPDATE_INTERVAL + 30 = ${INTERVAL_S + 30} s)`,
    );
    console.log(rows.at(-1));

    for (const [kind, change] of [
      ['exits at start', BREAK.exitsAtStart(original)],
      ['never initialized', BREAK.neverInitialized(original)],
    ] as const) {
      await sup.waitFor('idle', (s) => s.state === 'idle');
      t = Date.now();
      const bad = repo.push(`Worker: ${kind}`, { [MAIN]: change });
      const rolledBack = async (): Promise<boolean> => {
        const s = await sup.status();
        return s.last_update?.to === bad && s.last_update.result === 'rolled_back';
      };
      const backS = await until(ports, good, t, rolledBack);
      const first = (await sup.status()).last_update?.started_at;
      await sleep(INTERVAL_S * 3 * 1000);
      const again = (await sup.status()).last_update?.started_at !== first;
      rows.push(
        `bad commit (${kind}): back on the previous commit, all healthy, after ` +
          `${backS.toFixed(1)} s (goal ≤ HEALTH_TIMEOUT + 30 = ${HEALTH_S + 30} s); ` +
          `tried again in the next three polls: ${again ? 'YES' : 'no'}`,
      );
      console.log(rows.at(-1));
    }
  } finally {
    await sup.stop();
    repo.remove();
  }
  console.log('\nsupervisor update figures');
  for (const r of rows) console.log(`  ${r}`);
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
