import type {
  CommitInfo,
  SupervisorState,
  SupervisorStatus,
  UpdateRecord,
} from '@persona-browser/contracts';
import { errorMessage, UPDATE_TRIGGER_FILE } from '@persona-browser/service-kit';
import type { SupervisorConfig } from './config';
import { consumeTrigger, decide } from './decide';
import type { Git } from './git';
import { healthGate } from './health';
import type { GateResult } from './health';
import type { UpdateLog } from './log';
import { timedStep } from './prepare';
import type { Preparer } from './prepare';
import { RemoteWatch } from './remote';
import { rollingGate } from './rolling';
import type { StateFile } from './state';
import { WakerProcess } from './waker';

const TRIGGER_POLL_MS = 500;
const WAKER_RESTART_MS = 5_000;
type Trigger = UpdateRecord['trigger'];

export interface SupervisorParts {
  config: SupervisorConfig;
  git: Git;
  state: StateFile;
  log: UpdateLog;
  preparer: Preparer;
  /** Each line the waker prints. */
  onWakerLine(line: string): void;
}

const short = (hash: string): string => hash.slice(0, 12);

/**
 * The update loop. It owns the checkout's HEAD, the waker process and the update record: polls
 * the upstream (and the trigger file), moves the checkout forward, prepares and restarts the
 * waker, and holds the new commit to the health gate; a failed gate rolls back to the last
 * healthy commit and marks the tried one bad. One update at a time; a failed rollback halts.
 */
export class Supervisor {
  private state: SupervisorState = 'starting';
  private commit: CommitInfo | null = null;
  private upstream: string | null = null;
  private refused: string | null = null;
  private halted: string | null = null;
  private waker: WakerProcess;
  private readonly remote: RemoteWatch;
  /** The commit and persona image the current waker was started on. */
  private running: { hash: string; image: string | null } | null = null;
  private busy: Promise<void> | null = null;
  private again: 'poll' | 'trigger' | null = null;
  private timers: NodeJS.Timeout[] = [];
  private restartTimer: NodeJS.Timeout | null = null;
  private closed = false;
  /** The last refusal said, so a poll every few seconds does not repeat it. */
  private lastSaid = '';

  constructor(private readonly p: SupervisorParts) {
    const { config } = p;
    this.remote = new RemoteWatch(p.git, p.log);
    this.waker = new WakerProcess({
      command: config.wakerCommand,
      cwd: config.repoRoot,
      env: {
        REPO_ROOT: config.repoRoot,
        WAKER_PORT: String(config.wakerPort),
        SUPERVISOR_URL: `http://127.0.0.1:${config.port}`,
      },
      onLine: (line) => p.onWakerLine(line),
    });
    this.waker.whenExits((exit) => this.onWakerExit(exit.code, exit.last));
  }

  status(): SupervisorStatus {
    const saved = this.p.state.get();
    return {
      state: this.state,
      commit: this.commit,
      healthy_commit: saved.healthy,
      upstream: this.upstream,
      refused: this.refused,
      halted: this.halted,
      remote: this.remote.get(),
      last_update: saved.lastUpdate,
      bad_commits: saved.bad,
      log: this.p.log.latest(),
      waker: { pid: this.waker.pid, running: this.waker.running },
    };
  }

  /** Brings the fleet up on HEAD (or finishes an update cut short), then starts watching. */
  async start(): Promise<void> {
    const { git, state, log } = this.p;
    if (await WakerProcess.stopLeftover(state.get().wakerPid)) {
      log.warn('stopped the waker an earlier supervisor left running');
    }
    this.upstream = await git.upstream();
    if (!this.upstream) {
      log.warn(`the checkout's branch has no upstream: updates are off until it has one`);
    }
    // Whether the remote answers from here shows in the status while the fleet comes up.
    void this.remote.check(this.upstream);
    const pending = state.get().pending;
    if (pending) {
      log.warn(
        `an update from ${short(pending.from)} to ${short(pending.to)} was cut short: finishing it`,
      );
      // A rollback cut short is finished; an update cut short is done again from the start.
      if (pending.rollingBack) await this.update(pending.from, pending.to, 'recovery', true);
      else if (this.isBad(pending.to))
        await this.update(pending.to, pending.from, 'recovery', true);
      else await this.update(pending.from, pending.to, 'recovery');
    } else {
      await this.bringUp();
    }
    if (this.closed) return;
    const { updateIntervalS } = this.p.config;
    this.timers.push(setInterval(() => this.check('poll'), updateIntervalS * 1000));
    this.timers.push(setInterval(() => this.watchTrigger(), TRIGGER_POLL_MS));
    this.check('poll');
  }

  /** Start without an update: HEAD as it is, prepared, its waker started and checked. */
  private async bringUp(): Promise<void> {
    const { git, log, state } = this.p;
    const head = await git.head();
    this.commit = await git.info(head);
    log.info(`starting the fleet on ${short(head)} (${this.commit.subject})`);
    const timings: UpdateRecord['timings'] = {};
    const gate = await this.prepareAndGate(head, timings);
    if (gate.ok) {
      state.update({ healthy: head });
      log.info(`fleet healthy on ${short(head)}`, { timings });
    } else {
      log.error(`the fleet is not healthy on ${short(head)}: ${gate.reason}`);
      if (!this.waker.running) {
        // Nothing else runs: a waker on what there is (the configured image) serves what it can.
        log.warn('starting the waker anyway, on the build and image at hand');
        await this.restartWaker(head, this.p.config.docker?.image ?? null).catch((err: unknown) =>
          log.error(`cannot start the waker: ${errorMessage(err)}`),
        );
      }
    }
    this.setState('idle');
  }

  /** Polls now (a poll tick, or the trigger file); a check during an update runs after it. */
  check(trigger: 'poll' | 'trigger'): void {
    if (this.closed) return;
    if (this.busy) {
      if (this.again !== 'trigger') this.again = trigger;
      return;
    }
    this.busy = this.checkOnce(trigger)
      .catch((err: unknown) => {
        this.sayOnce('error', `update check failed: ${errorMessage(err)}`);
      })
      .finally(() => {
        this.busy = null;
        const next = this.again;
        this.again = null;
        if (next) this.check(next);
      });
  }

  private watchTrigger(): void {
    if (!consumeTrigger(this.p.config.repoRoot)) return;
    this.p.log.info('update trigger found: checking the upstream now');
    if (this.halted) {
      this.p.log.warn(`trying again after the halt, as the trigger asks (${this.halted})`);
      this.halted = null;
      this.setState('idle');
    }
    this.check('trigger');
  }

  private async checkOnce(trigger: 'poll' | 'trigger'): Promise<void> {
    const { git, log } = this.p;
    if (this.halted || this.state === 'starting') return;
    this.upstream = await git.upstream();
    if (!this.upstream) return this.refuse(`the checkout's branch has no upstream to update from`);
    const started = Date.now();
    const target = await this.remote.fetch(this.upstream);
    const fetchMs = Date.now() - started;
    const d = await decide(git, this.upstream, target, (hash) => this.isBad(hash));
    if (d.kind === 'current') {
      if (trigger === 'trigger') log.info(`already on the newest commit of ${this.upstream}`);
      this.refused = null;
    } else if (d.kind === 'bad') {
      this.sayOnce(
        'warn',
        `${short(d.target)} failed its health gate before: waiting for a newer commit`,
      );
    } else if (d.kind === 'refuse') {
      this.refuse(d.reason, d.target ? { from: d.head, to: d.target, trigger } : null);
    } else {
      this.refused = null;
      this.lastSaid = '';
      await this.update(d.head, d.target, trigger, false, fetchMs);
    }
  }

  /** Says why no update runs (once), and records a refused update when there was one to run. */
  private refuse(
    reason: string,
    attempt: { from: string; to: string; trigger: Trigger } | null = null,
  ): void {
    this.refused = reason;
    if (this.sayOnce('warn', reason) && attempt) {
      const at = new Date().toISOString();
      this.p.state.update({
        lastUpdate: {
          ...attempt,
          result: 'refused',
          reason,
          started_at: at,
          finished_at: at,
          timings: {},
        },
      });
    }
  }

  /** Logs a line unless it is the one said last; answers whether it was said. */
  private sayOnce(level: 'info' | 'warn' | 'error', message: string): boolean {
    if (this.lastSaid === message) return false;
    this.lastSaid = message;
    this.p.log.say(level, message);
    return true;
  }

  private isBad(hash: string): boolean {
    return this.p.state.get().bad.some((b) => b.hash === hash);
  }

  private setState(next: SupervisorState): void {
    this.state = this.halted ? 'halted' : next;
  }

  /**
   * One update from `from` to `to`, or (`rollingBack`, after a cut-short rollback) straight back
   * to `to`. A failed gate marks `to` bad and rolls back to `from`; a failed rollback halts.
   */
  private async update(
    from: string,
    to: string,
    trigger: Trigger,
    rollingBack = false,
    fetchMs?: number,
  ): Promise<void> {
    const { state, log } = this.p;
    const record: UpdateRecord = {
      from,
      to,
      trigger,
      result: 'running',
      reason: null,
      started_at: new Date().toISOString(),
      finished_at: null,
      timings: fetchMs === undefined ? {} : { fetch: fetchMs },
    };
    if (rollingBack) {
      // A rollback cut short: `from` is the bad commit, `to` the healthy one to return to.
      record.result = await this.rollBack(from, to, record, 'the rollback was cut short');
      return this.finish(record);
    }
    this.setState('updating');
    state.update({ pending: { from, to, rollingBack: false }, lastUpdate: record });
    log.info(`update ${short(from)} → ${short(to)} (${trigger})`);
    const gate = await this.prepareAndGate(to, record.timings);
    if (gate.ok) {
      record.result = 'ok';
      state.update({ healthy: to });
      log.info(`update to ${short(to)} is healthy`, { timings: record.timings });
      return this.finish(record);
    }
    record.reason = gate.reason;
    state.update({
      bad: [
        ...state.get().bad.filter((b) => b.hash !== to),
        { hash: to, reason: gate.reason, at: new Date().toISOString() },
      ],
      pending: { from: to, to: from, rollingBack: true },
    });
    log.error(`update to ${short(to)} failed: ${gate.reason}; rolling back to ${short(from)}`);
    record.result = await this.rollBack(to, from, record, gate.reason);
    this.finish(record);
  }

  private async rollBack(
    bad: string,
    good: string,
    record: UpdateRecord,
    why: string,
  ): Promise<UpdateRecord['result']> {
    const { state, log } = this.p;
    this.setState('rolling_back');
    record.reason = why;
    state.update({ pending: { from: bad, to: good, rollingBack: true }, lastUpdate: record });
    const started = Date.now();
    const gate = await this.prepareAndGate(good, {});
    record.timings.rollback = Date.now() - started;
    if (gate.ok) {
      state.update({ healthy: good });
      log.warn(
        `rolled back to ${short(good)}: healthy again; ${short(bad)} will not be tried again`,
      );
      return 'rolled_back';
    }
    this.halted = `the rollback to ${short(good)} failed too: ${gate.reason}. Updates stop until ${UPDATE_TRIGGER_FILE} is touched or the supervisor restarts`;
    log.error(this.halted);
    return 'rollback_failed';
  }

  private finish(record: UpdateRecord): void {
    record.finished_at = new Date().toISOString();
    this.p.state.update({ pending: null, lastUpdate: record });
    this.setState('idle');
  }

  /**
   * Checks `hash` out, prepares it and holds it to the health gate; a step that fails is a
   * failed gate with that step's error. The waker is restarted unless it already runs this very
   * commit and image (a rollback after a failed build finds the old waker still running the old
   * code, and keeps it).
   */
  private prepareAndGate(hash: string, timings: UpdateRecord['timings']): Promise<GateResult> {
    return this.tryGate(hash, timings).catch((err: unknown) => ({
      ok: false,
      reason: errorMessage(err),
    }));
  }

  private async tryGate(hash: string, timings: UpdateRecord['timings']): Promise<GateResult> {
    const { git, preparer, config, log } = this.p;
    const step = timedStep(timings);
    await step('checkout', () => git.moveTo(hash));
    this.commit = await git.info(hash);
    const image = await preparer.prepare(step, hash);
    const current = this.running;
    const keep =
      this.waker.running && current !== null && current.hash === hash && current.image === image;
    // A cluster (its image in a registry) is rolled node by node: the waker hands over its workers.
    const rolling = config.docker?.registry != null;
    if (!keep) await step('restart', () => this.restartWaker(hash, image, rolling));
    log.info(
      `${keep ? 'waker kept' : 'waker started'}: health gate on ${short(hash)} (${config.healthTimeoutS} s)`,
    );
    const gate = {
      wakerPort: config.wakerPort,
      serviceKey: config.serviceKey,
      hash,
      timeoutMs: config.healthTimeoutS * 1000,
      wakerEnded: this.waker.ended(),
    };
    return step('health', () =>
      rolling ? rollingGate({ ...gate, say: (line) => log.info(line) }) : healthGate(gate),
    );
  }

  private async restartWaker(hash: string, image: string | null, handOver = false): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    await this.waker.stop(handOver);
    const pid = this.waker.start(image ? { PERSONA_IMAGE: image } : {});
    this.running = { hash, image };
    this.p.state.update({ wakerPid: pid });
  }

  /** A waker that ended on its own between updates (or while halted) starts again after a pause. */
  private onWakerExit(code: number | null, last: string): void {
    if (this.closed) return;
    this.p.log.error(`the waker ended (exit ${code})${last ? `: ${last}` : ''}`);
    // During an update the gate sees it and the update (or its rollback) starts the next one.
    const between = (): boolean => this.state === 'idle' || this.state === 'halted';
    if (!between() || this.restartTimer) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.closed || !between() || this.waker.running) return;
      this.p.log.info('starting the waker again');
      const last = this.running;
      if (!last) return;
      this.restartWaker(last.hash, last.image).catch((err: unknown) =>
        this.p.log.error(`cannot start the waker: ${errorMessage(err)}`),
      );
    }, WAKER_RESTART_MS);
  }

  /** Stops watching and stops the waker (which stops its workers). An update under way is left
   * recorded as pending, so the next start finishes it. */
  async stop(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    await this.waker.stop();
  }
}
