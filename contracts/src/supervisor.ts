import Joi from 'joi';
import type { CommitInfo } from './ping';
import { commitSchema } from './ping';

/** The supervisor's own port and the route it (and the waker, relaying it) serves. */
export const SUPERVISOR_PATHS = {
  status: '/api/supervisor',
} as const;

/**
 * What the supervisor is doing: `idle` between updates; `updating` and `rolling_back` while it
 * works; `halted` after a rollback failed (it tries nothing more until `.update-trigger` is
 * touched or it is restarted); `starting` until the first waker answers.
 */
export const SUPERVISOR_STATES = [
  'starting',
  'idle',
  'updating',
  'rolling_back',
  'halted',
] as const;
export type SupervisorState = (typeof SUPERVISOR_STATES)[number];

/** How one update ended. `running` while it runs. */
export const UPDATE_RESULTS = [
  'running',
  'ok',
  'rolled_back',
  'rollback_failed',
  'refused',
] as const;
export type UpdateResult = (typeof UPDATE_RESULTS)[number];

/** Steps an update times, in the order they run (ms each; absent when skipped). */
export const UPDATE_STEPS = [
  'fetch',
  'checkout',
  'install',
  'build',
  'image',
  'push',
  'restart',
  'health',
  'rollback',
] as const;
export type UpdateStep = (typeof UPDATE_STEPS)[number];

/**
 * UPDATE_STEPS as an ES module, `UPDATE_STEPS`, which the fleet panel imports from
 * `/update-steps.js`: the panel lists an update's timings in the same order from the same list.
 */
export const UPDATE_STEPS_MODULE = `export const UPDATE_STEPS = ${JSON.stringify(UPDATE_STEPS)};\n`;

export interface UpdateRecord {
  /** Full hash of the commit the fleet ran before, and of the one tried. */
  from: string;
  to: string;
  /** `poll` (upstream moved), `trigger` (.update-trigger), `recovery` (an update cut short). */
  trigger: 'poll' | 'trigger' | 'recovery';
  result: UpdateResult;
  /** Why it was refused or rolled back, else null. */
  reason: string | null;
  started_at: string;
  finished_at: string | null;
  timings: Partial<Record<UpdateStep, number>>;
}

export interface BadCommit {
  hash: string;
  reason: string;
  /** ISO 8601 of the failed health gate. */
  at: string;
}

export interface SupervisorLogEntry {
  at: string;
  level: 'info' | 'warn' | 'error';
  message: string;
}

/**
 * The git remote the supervisor updates from, as seen from where it runs (a container sees
 * only what is mounted in it): checked with `git ls-remote` at start, and again by every fetch.
 */
export interface SupervisorRemote {
  /** The upstream's remote URL (credentials taken out); null when the checkout has no upstream. */
  url: string | null;
  /** Whether it answered; null until it was asked. */
  reachable: boolean | null;
  /** ISO 8601 of the last answer (or failure), null until then. */
  checked_at: string | null;
  /** git's whole message when it did not answer, else null. */
  error: string | null;
}

/** `GET /api/supervisor`. */
export interface SupervisorStatus {
  state: SupervisorState;
  /** The checkout's HEAD: what the waker and its workers run. */
  commit: CommitInfo | null;
  /** The last commit that passed the health gate (rollbacks return to it). */
  healthy_commit: string | null;
  /** The upstream branch polled (`origin/main`), null when the checkout has none. */
  upstream: string | null;
  /** Why the last update could not start (dirty tree, local commits…), else null. */
  refused: string | null;
  /** Why the supervisor stopped trying (a failed rollback), else null. */
  halted: string | null;
  remote: SupervisorRemote;
  last_update: UpdateRecord | null;
  bad_commits: BadCommit[];
  /** The latest lines of the update log, oldest first. */
  log: SupervisorLogEntry[];
  waker: { pid: number | null; running: boolean };
}

const iso = Joi.string().isoDate();

export const updateRecordSchema = Joi.object<UpdateRecord, true>({
  from: Joi.string().required(),
  to: Joi.string().required(),
  trigger: Joi.string().valid('poll', 'trigger', 'recovery').required(),
  result: Joi.string()
    .valid(...UPDATE_RESULTS)
    .required(),
  reason: Joi.string().allow(null).required(),
  started_at: iso.required(),
  finished_at: iso.allow(null).required(),
  timings: Joi.object(
    Object.fromEntries(UPDATE_STEPS.map((s) => [s, Joi.number().integer().min(0)])),
  ).required(),
}).label('UpdateRecord');

export const badCommitSchema = Joi.object<BadCommit, true>({
  hash: Joi.string().required(),
  reason: Joi.string().required(),
  at: iso.required(),
});

export const supervisorStatusSchema = Joi.object<SupervisorStatus, true>({
  state: Joi.string()
    .valid(...SUPERVISOR_STATES)
    .required(),
  commit: commitSchema.allow(null).required(),
  healthy_commit: Joi.string().allow(null).required(),
  upstream: Joi.string().allow(null).required(),
  refused: Joi.string().allow(null).required(),
  halted: Joi.string().allow(null).required(),
  remote: Joi.object<SupervisorRemote, true>({
    url: Joi.string().allow(null).required(),
    reachable: Joi.boolean().allow(null).required(),
    checked_at: iso.allow(null).required(),
    error: Joi.string().allow(null).required(),
  }).required(),
  last_update: updateRecordSchema.allow(null).required(),
  bad_commits: Joi.array().items(badCommitSchema).required(),
  log: Joi.array()
    .items(
      Joi.object<SupervisorLogEntry, true>({
        at: iso.required(),
        level: Joi.string().valid('info', 'warn', 'error').required(),
        message: Joi.string().required(),
      }),
    )
    .required(),
  waker: Joi.object({
    pid: Joi.number().integer().allow(null).required(),
    running: Joi.boolean().required(),
  }).required(),
}).label('SupervisorStatus');
