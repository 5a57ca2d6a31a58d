import http from 'node:http';
import { WAKER_PATHS } from '@persona-browser/contracts';
import { errorMessage } from '@persona-browser/service-kit';
import { alwaysOn, healthGate, pingHash } from './health';
import type { GateOptions, GateResult } from './health';
import type { WakerExit } from './waker';

export interface RollOptions extends GateOptions {
  /** Says, as each node's turn comes, what is restarted there (for the update log). */
  say?(line: string): void;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Asks the waker to restart one persona; resolves when it answered, whatever it answered. */
function restartPersona(o: RollOptions, name: string): Promise<void> {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: o.wakerPort,
        path: `${WAKER_PATHS.personas}/${encodeURIComponent(name)}/restart`,
        method: 'POST',
        headers: o.serviceKey ? { authorization: `Bearer ${o.serviceKey}` } : {},
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve());
      },
    );
    // A restart that fails or hangs is the gate's to judge: it looks at the persona itself.
    req.setTimeout(o.timeoutMs, () => req.destroy());
    req.on('error', () => resolve());
    req.end();
  });
}

/**
 * The health gate of an update on a cluster, rolled node by node. The new waker holds the
 * workers the last one handed over (still on the last commit); one node after another (in name
 * order) each always-on persona there that runs but not on the new commit is restarted
 * through the waker's API, which runs it on the new image, and that node's personas are held to
 * the gate before the next node's turn. A node that fails ends the roll: the nodes after it never
 * ran the new commit, and a rollback, rolled the same way, puts back only the nodes that did.
 */
export async function rollingGate(o: RollOptions): Promise<GateResult> {
  const deadline = Date.now() + o.timeoutMs;
  const ended: { exit: WakerExit | null } = { exit: null };
  void o.wakerEnded?.then((e) => {
    ended.exit = e;
  });
  let personas: Awaited<ReturnType<typeof alwaysOn>> | null = null;
  while (personas === null) {
    try {
      personas = await alwaysOn(o);
    } catch (err) {
      const e = ended.exit;
      if (e) {
        const how = e.signal ? `was killed by ${e.signal}` : `exited with ${e.code}`;
        return { ok: false, reason: `the waker ${how}${e.last ? `: ${e.last}` : ''}` };
      }
      if (Date.now() > deadline) {
        const within = Math.round(o.timeoutMs / 1000);
        return {
          ok: false,
          reason: `the waker did not answer within ${within} s: ${errorMessage(err)}`,
        };
      }
      await sleep(500);
    }
  }
  const byNode = new Map<string, typeof personas>();
  for (const p of personas) byNode.set(p.node ?? '', [...(byNode.get(p.node ?? '') ?? []), p]);
  const healthy: string[] = [];
  for (const node of [...byNode.keys()].sort()) {
    const here = byNode.get(node) ?? [];
    const stale: string[] = [];
    for (const p of here) {
      // A persona still starting runs the new image already (this waker started it): left be.
      const hash = await pingHash(p.port).catch(() => null);
      if (hash === null ? p.state === 'running' : hash !== o.hash) stale.push(p.name);
    }
    const where = node ? `node ${node}` : 'no node';
    const what = stale.length ? `restarting ${stale.join(', ')}` : 'already on it';
    o.say?.(`rolling ${o.hash.slice(0, 12)} onto ${where}: ${what}`);
    await Promise.all(stale.map((name) => restartPersona(o, name)));
    const gate = await healthGate({ ...o, only: new Set(here.map((p) => p.name)) });
    if (!gate.ok) return gate;
    healthy.push(...gate.personas);
  }
  return { ok: true, personas: healthy };
}
