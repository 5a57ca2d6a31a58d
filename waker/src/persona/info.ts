import type { CommitInfo, PersonaInfo, PersonaState, SleepDepth } from '@persona-browser/contracts';
import type { Activity } from './activity';
import type { ProxyStatus } from '../identity';
import type { PersonaSpec } from './folders';

/** What a persona's listing is read from. */
export interface ListedPersona {
  readonly name: string;
  readonly spec: PersonaSpec;
  readonly state: PersonaState;
  readonly depth: SleepDepth | null;
  readonly since: Date;
  readonly commit: CommitInfo | null;
  readonly activity: Activity;
  readonly error: string | null;
  readonly retryAt: Date | null;
  readonly node: string | null;
  nodeProblem(): string | null;
  proxyStatus(): ProxyStatus | null;
}

/**
 * A persona as `GET /api/personas` lists it. While its cluster node is down, the error names
 * the node: that, not the worker's last words, is why it does not answer.
 */
export function personaInfo(p: ListedPersona, now: number): PersonaInfo {
  return {
    name: p.name,
    port: p.spec.port,
    mode: p.spec.mode,
    state: p.state,
    depth: p.depth,
    since: p.since.toISOString(),
    commit: p.commit,
    idle_seconds: p.activity.idleSeconds(now),
    last_request: p.activity.lastRequestIso(),
    error: p.nodeProblem() ?? p.error,
    retry_at: p.retryAt?.toISOString() ?? null,
    proxy: p.proxyStatus(),
    node: p.node,
  };
}
