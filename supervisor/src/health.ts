import type Joi from 'joi';
import { createPersonaClient, httpTransport, settle } from '@persona-browser/client';
import type { PersonaList, PingResult } from '@persona-browser/contracts';
import { errorMessage } from '@persona-browser/service-kit';
import {
  HttpStatusError,
  WAKER_PATHS,
  getJson,
  personaListSchema,
  pingSchema,
} from '@persona-browser/contracts';
import type { WakerExit } from './waker';

export interface GateOptions {
  wakerPort: number;
  serviceKey: string | null;
  /** The commit every always-on persona must report. */
  hash: string;
  timeoutMs: number;
  /** Settles when the waker ends: the gate fails at once then. */
  wakerEnded: Promise<WakerExit> | null;
  /** Pause between two looks. */
  pollMs?: number;
  /** Only these personas are held to the gate (one node's, in a rolling update). */
  only?: ReadonlySet<string>;
}

export type GateResult = { ok: true; personas: string[] } | { ok: false; reason: string };

const LOCAL = '127.0.0.1';
/**
 * A persona seen crashed this many times (each a new crash, by its `since`) fails the gate at
 * once: a crash loop on the new commit is not waited out to the timeout.
 */
export const CRASH_LIMIT = 3;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The waker's always-on personas (those `only` names, when it names some). The waker's own API,
 * which the persona client does not describe: a call by path.
 */
export async function alwaysOn(
  o: Pick<GateOptions, 'wakerPort' | 'serviceKey' | 'only'>,
): Promise<PersonaList['personas']> {
  const headers: Record<string, string> = o.serviceKey
    ? { authorization: `Bearer ${o.serviceKey}` }
    : {};
  const body = await getJson(
    { host: LOCAL, port: o.wakerPort },
    WAKER_PATHS.personas,
    5_000,
    headers,
  );
  // A waker of another commit (the one an update rolls back to) may list fields this one does
  // not know, or lack some it added: only the fields' types are held to, not their presence.
  const list: Joi.ValidationResult<PersonaList> = personaListSchema.validate(body, {
    allowUnknown: true,
    presence: 'optional',
  });
  if (list.error) throw new Error(`the waker's persona list is invalid: ${list.error.message}`);
  return list.value.personas.filter(
    (p) => p.mode === 'always-on' && (o.only === undefined || o.only.has(p.name)),
  );
}

/** The commit a persona's port answers ping with (through the waker's front door). */
export async function pingHash(port: number): Promise<string | null> {
  const persona = createPersonaClient({
    baseUrl: `http://${LOCAL}:${port}`,
    // Ping is public: no key.
    key: null,
    fetch: httpTransport({ timeoutMs: 10_000 }),
  });
  const r = await settle(persona.GET('/api/v1/system/ping'));
  if (!r.ok) throw new HttpStatusError(r.status, JSON.stringify(r.body ?? r.error));
  // The persona may still run the commit before the update: held to the fields read here.
  const body: unknown = r.data;
  const ping: Joi.ValidationResult<PingResult> = pingSchema.validate(body, { allowUnknown: true });
  return ping.error ? null : (ping.value.commit?.hash ?? null);
}

/** Each persona's crashes seen (by when each began), and the last error a crash showed. */
interface Crashes {
  crashes: Map<string, Set<string>>;
  errors: Map<string, string>;
}

/** How often the crash watch reads the waker's list (a crashed state may last half a second). */
const CRASH_WATCH_MS = 200;

/**
 * Each persona's crashes, read from the waker's list every CRASH_WATCH_MS beside the gate's
 * pings: a crash is a new `since` in state `crashed`, and the back-off's first waits (0.5 s, 1 s)
 * are shorter than one round of pings, which wait about 2 s each.
 */
function watchCrashes(o: GateOptions): Crashes & { stop: () => Promise<void> } {
  const crashes = new Map<string, Set<string>>();
  const errors = new Map<string, string>();
  let on = true;
  const loop = (async () => {
    while (on) {
      try {
        for (const p of await alwaysOn(o)) {
          if (p.state !== 'crashed') continue;
          crashes.set(p.name, (crashes.get(p.name) ?? new Set<string>()).add(p.since));
          if (p.error) errors.set(p.name, p.error);
        }
      } catch {
        // The gate's own look says when the waker does not answer.
      }
      await sleep(CRASH_WATCH_MS);
    }
  })();
  return {
    crashes,
    errors,
    stop: async () => {
      on = false;
      await loop;
    },
  };
}

/**
 * The health gate of an update: the waker answers, and every always-on persona answers ping on
 * its port with `commit.hash` equal to the new commit, within the timeout (each persona is
 * started at once by the waker, so they share the one deadline). Fails at once if the waker
 * ends, or once a persona has crashed CRASH_LIMIT times (the waker's back-off restarts it between
 * crashes, so a commit that cannot start fails in seconds rather than at the timeout). Says, on failure, which personas were not healthy (on which node, in a cluster) and what
 * they last showed.
 */
export async function healthGate(o: GateOptions): Promise<GateResult> {
  const watch = watchCrashes(o);
  try {
    return await gate(o, watch);
  } finally {
    await watch.stop();
  }
}

async function gate(o: GateOptions, { crashes, errors }: Crashes): Promise<GateResult> {
  const deadline = Date.now() + o.timeoutMs;
  const healthy = new Set<string>();
  const seen = new Map<string, string>();
  /** Personas that answer on the commit while the waker's list does not show it yet. */
  const unlisted = new Set<string>();
  // A holder, not a variable: the exit is set from a callback the compiler does not follow.
  const ended: { exit: WakerExit | null } = { exit: null };
  void o.wakerEnded?.then((e) => {
    ended.exit = e;
  });
  let waker = 'the waker did not answer';
  while (Date.now() < deadline) {
    const e = ended.exit;
    if (e) {
      const how = e.signal ? `was killed by ${e.signal}` : `exited with ${e.code}`;
      return { ok: false, reason: `the waker ${how}${e.last ? `: ${e.last}` : ''}` };
    }
    try {
      const personas = await alwaysOn(o);
      waker = '';
      await Promise.all(
        personas
          .filter((p) => !healthy.has(p.name))
          .map(async (p) => {
            // A cluster's persona runs on a node: a failure names it.
            const at = p.node ? `on node ${p.node} ` : '';
            try {
              const hash = await pingHash(p.port);
              if (hash === o.hash) healthy.add(p.name);
              else seen.set(p.name, `${at}answers on commit ${hash?.slice(0, 12) ?? 'unknown'}`);
            } catch (err) {
              const state = p.error ? `${p.state}: ${p.error}` : p.state;
              seen.set(p.name, `${at}${state} (${errorMessage(err)})`);
            }
          }),
      );
      const missing = personas.filter((p) => !healthy.has(p.name));
      // The waker reads a worker's commit with a ping of its own, which may still be under way:
      // the gate passes once the waker's list says the same, so a look at it after the update
      // never shows the commit unknown.
      unlisted.clear();
      for (const p of personas) {
        if (!healthy.has(p.name) || p.commit?.hash === o.hash) continue;
        unlisted.add(p.name);
        const listed = p.commit ? `commit ${p.commit.hash.slice(0, 12)}` : 'no commit yet';
        seen.set(p.name, `answers, but the waker's list shows ${listed}`);
      }
      if (missing.length === 0 && unlisted.size === 0) return { ok: true, personas: [...healthy] };
      for (const p of missing) {
        const times = crashes.get(p.name) ?? new Set<string>();
        if (p.state === 'crashed') crashes.set(p.name, times.add(p.since));
        if (times.size < CRASH_LIMIT) continue;
        const error = p.error ?? errors.get(p.name) ?? null;
        const at = p.node ? ` on node ${p.node}` : '';
        const took = Math.round((Date.now() - (deadline - o.timeoutMs)) / 1000);
        return {
          ok: false,
          reason:
            `not healthy: ${p.name}${at} crashed ${times.size} times in ${took} s` +
            (error ? ` (${error})` : ''),
        };
      }
    } catch (err) {
      waker = `the waker did not answer: ${errorMessage(err)}`;
    }
    await sleep(Math.min(o.pollMs ?? 1_000, Math.max(0, deadline - Date.now())));
  }
  const why =
    waker ||
    [...seen]
      .filter(([name]) => !healthy.has(name) || unlisted.has(name))
      .map(([name, what]) => `${name} ${what}`)
      .join('; ');
  return {
    ok: false,
    reason: `not healthy within ${Math.round(o.timeoutMs / 1000)} s: ${why || 'no answer'}`,
  };
}
