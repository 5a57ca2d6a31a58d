import http from 'node:http';
import type {
  CommitInfo,
  PersonaInfo,
  PersonaState,
  ProxyIdentity,
} from '@persona-browser/contracts';
import { Activity } from './activity';
import type { IdentitySettings } from './config';
import type { Address, ExitInfo, InstanceHandle, RuntimeDriver } from './drivers/types';
import { makeIdentity, readIdentityFile, removeIdentity, writeIdentity } from './identity';
import type { ProxyStatus } from './identity';
import { ProxyErrorReadings } from './identity';
import type { Logger } from '@persona-browser/service-kit';
import { errnoCode, errorMessage } from '@persona-browser/service-kit';
import type { PersonaSpec } from './personas';
import { isReady, pingWorker } from './worker-client';

export interface PersonaOptions {
  driver: RuntimeDriver;
  logger: Logger;
  /** Variables every worker gets (`.env`, SERVICE_KEY, COMMIT_INFO). */
  workerEnv: Record<string, string>;
  /** Sleepy personas: pause this long after IDLE_TIMEOUT before stopping (0: stop at once). */
  pauseSeconds: number;
  /** How long a start may take to reach `initialized` (a cold container, a slow disk). */
  readyTimeoutMs: number;
  /** Consecutive failed health checks before a running worker is restarted. */
  healthFailures: number;
  /** How long one health check (status) may take. */
  healthTimeoutMs: number;
  /** The proxy gateway, account and GeoIP service, for personas with PROXY_COUNTRY. */
  identity?: IdentitySettings | null;
}

/** A start that did not succeed; `fatal` ones (a port conflict) are never retried. */
export class WakeError extends Error {}

/** A wake that failed because no proxy identity could be made (the proxy, or the GeoIP). */
export class IdentityWakeError extends WakeError {}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const MAX_BACKOFF_MS = 60_000;
/** A worker up this long resets the crash-loop backoff. */
const STABLE_MS = 60_000;

/**
 * One persona: the single owner of its state, its worker handle and its activity. Every state
 * change runs through `serial`, so a wake, an idle sleep and an API restart never interleave.
 */
export class Persona {
  state: PersonaState;
  since = new Date();
  error: string | null = null;
  commit: CommitInfo | null = null;
  private handle: InstanceHandle | null = null;
  private paused = false;
  private pausedAt = 0;
  private runningSince = 0;
  /** A configuration error (port conflict): this persona never starts. */
  private fatal = false;
  private queue: Promise<unknown> = Promise.resolve();
  /** Counted by the front door. */
  readonly activity = new Activity();
  private failures = 0;
  private healthFails = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private exitDuringStart: ExitInfo | null = null;
  private closed = false;
  /** Keep-alive connections to the current worker; replaced with each instance. */
  agent = new http.Agent({ keepAlive: true });
  /** The proxy identity the current (or last) worker wears; null without PROXY_COUNTRY. */
  private identity: ProxyIdentity | null = null;
  /** The worker's `proxy_errors`, read from its ping. */
  private readonly proxyErrors = new ProxyErrorReadings();
  private pinging = false;

  constructor(
    readonly spec: PersonaSpec,
    private readonly opts: PersonaOptions,
  ) {
    this.state = spec.mode === 'always-on' ? 'waking' : 'sleeping';
  }

  get name(): string {
    return this.spec.name;
  }

  private get log(): Logger {
    return this.opts.logger.child({ persona: this.name });
  }

  private setState(state: PersonaState, error: string | null = this.error): void {
    if (state !== this.state) {
      this.state = state;
      this.since = new Date();
      this.log.info('persona state', { state, ...(error ? { error } : {}) });
    }
    this.error = error;
  }

  /** Runs state changes one after another. */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  info(now = Date.now()): PersonaInfo {
    return {
      name: this.name,
      port: this.spec.port,
      mode: this.spec.mode,
      state: this.state,
      since: this.since.toISOString(),
      commit: this.commit,
      idle_seconds: this.activity.idleSeconds(now),
      last_request: this.activity.lastRequestIso(),
      error: this.error,
      proxy: this.proxyStatus(),
    };
  }

  /** The persona's proxy for the API: never a credential. Null without PROXY_COUNTRY. */
  proxyStatus(): ProxyStatus | null {
    const country = this.spec.proxyCountry;
    if (!country) return null;
    return {
      country,
      exit_ip: this.identity?.exit_ip ?? null,
      session: this.identity?.session ?? null,
      proxy_errors: this.proxyErrors.value,
      failing: this.proxyErrors.failing,
    };
  }

  /** The host pid of the worker's process tree root; null while down. */
  pid(): number | null {
    return this.handle?.pid ?? null;
  }

  isPaused(): boolean {
    return this.paused;
  }

  // --- life cycle ----------------------------------------------------------------------------

  /** Marks a configuration error: the persona stays crashed and is never started. */
  markFatal(error: string): void {
    this.fatal = true;
    this.setState('crashed', error);
  }

  /** Where the worker answers right now, or null while it is not running (the fast path). */
  runningAddress(): Address | null {
    return this.state === 'running' && this.handle && !this.paused ? this.handle.address : null;
  }

  /** Where the worker answers, waking it first if needed (what a client request waits for). */
  async ensureRunning(): Promise<Address> {
    const now = this.runningAddress();
    if (now) return now;
    await this.wake();
    if (!this.handle) throw new WakeError(`persona ${this.name} is not running`);
    return this.handle.address;
  }

  wake(): Promise<void> {
    return this.serial(() => this.doWake());
  }

  private async doWake(): Promise<void> {
    if (this.fatal) throw new WakeError(this.error ?? `persona ${this.name} cannot start`);
    if (this.closed) throw new WakeError('the waker is shutting down');
    this.clearRestart();
    if (this.handle && this.paused) {
      await this.opts.driver.unpause?.(this.handle);
      this.paused = false;
      this.activity.touch();
      this.setState('running', null);
      return;
    }
    if (this.handle && this.state === 'running') return;
    this.setState('waking');
    this.exitDuringStart = null;
    // Connections kept alive to an earlier instance lead nowhere now.
    this.agent.destroy();
    this.agent = new http.Agent({ keepAlive: true });
    this.proxyErrors.reset();
    if (this.spec.proxyCountry) await this.newIdentity(this.spec.proxyCountry);
    let handle: InstanceHandle | null = null;
    try {
      handle = await this.opts.driver.start({
        name: this.name,
        personaDir: this.spec.dir,
        env: this.opts.workerEnv,
        memoryLimitMb: this.spec.memoryLimitMb,
        cpus: this.spec.cpus,
      });
      this.handle = handle;
      await this.waitReady(handle);
    } catch (err) {
      const message = errorMessage(err);
      if (handle) {
        this.handle = null;
        await this.opts.driver.stop(handle).catch(() => undefined);
      }
      this.failures += 1;
      this.setState('crashed', `start failed: ${message}`);
      if (this.spec.mode === 'always-on') this.scheduleRestart();
      throw new WakeError(`persona ${this.name} did not start: ${message}`);
    }
    this.runningSince = Date.now();
    this.healthFails = 0;
    this.activity.touch();
    this.setState('running', null);
    this.readCommit(handle);
  }

  /**
   * A fresh proxy identity (a new session) written into the persona folder before the worker
   * starts. On failure the worker is not started: no identity file stays behind (an old one
   * would be a dead session), the persona shows the error, and the wake fails with it.
   */
  private async newIdentity(country: string): Promise<void> {
    const settings = this.opts.identity;
    try {
      if (!settings?.proxyUsername || !settings.proxyPassword) {
        throw new Error(
          'PROXY_USERNAME and PROXY_PASSWORD must be set in the waker for PROXY_COUNTRY',
        );
      }
      const identity = await makeIdentity({
        country,
        proxyServer: settings.proxyServer,
        usernameTemplate: settings.usernameTemplate,
        username: settings.proxyUsername,
        password: settings.proxyPassword,
        geoipBaseUrl: settings.geoipBaseUrl,
        geoipToken: settings.geoipToken,
      });
      writeIdentity(this.spec.dir, identity);
      this.identity = identity;
      this.log.info('proxy identity made', {
        country: identity.country,
        session: identity.session,
        exit_ip: identity.exit_ip,
        timezone: identity.timezone,
        locale: identity.locale,
      });
    } catch (err) {
      const message = `proxy identity failed: ${errorMessage(err)}`;
      this.identity = null;
      try {
        removeIdentity(this.spec.dir);
      } catch (rmErr) {
        this.log.error('cannot remove the old proxy identity', {
          error: errnoCode(rmErr) ?? String(rmErr),
        });
      }
      this.failures += 1;
      this.setState('crashed', message);
      throw new IdentityWakeError(`persona ${this.name} did not start: ${message}`);
    }
  }

  private async waitReady(handle: InstanceHandle): Promise<void> {
    const until = Date.now() + this.opts.readyTimeoutMs;
    while (Date.now() < until) {
      if (this.exitDuringStart) throw new Error(`worker ${this.exitDuringStart.reason}`);
      if (this.closed) throw new Error('the waker is shutting down');
      const ready = await isReady(handle.address, 2_000).catch(() => false);
      if (ready) return;
      await sleep(50);
    }
    throw new Error(`worker not ready within ${Math.round(this.opts.readyTimeoutMs / 1000)} s`);
  }

  private readCommit(handle: InstanceHandle): void {
    this.pinging = true;
    pingWorker(handle.address)
      .then((ping) => {
        if (this.handle !== handle) return;
        this.commit = ping.commit;
        if (this.spec.proxyCountry) this.proxyErrors.record(ping.proxy_errors);
      })
      .catch((err: unknown) => this.log.warn('ping failed', { error: errorMessage(err) }))
      .finally(() => {
        this.pinging = false;
      });
  }

  /**
   * Reads `proxy_errors` from the worker's ping (with the health checks): nothing else pings a
   * running worker. One ping at a time; a failed one keeps the last reading.
   */
  private readProxyErrors(handle: InstanceHandle): void {
    if (this.pinging || !this.spec.proxyCountry) return;
    this.pinging = true;
    pingWorker(handle.address, this.opts.healthTimeoutMs + 3_000)
      .then((ping) => {
        if (this.handle === handle && this.state === 'running') {
          this.proxyErrors.record(ping.proxy_errors);
          if (this.proxyErrors.failing) {
            this.log.warn('proxy failing', { proxy_errors: ping.proxy_errors });
          }
        }
      })
      .catch(() => undefined)
      .finally(() => {
        this.pinging = false;
      });
  }

  /** Stops the worker (an API call, or idle); the persona sleeps until a request or a wake. */
  sleep(): Promise<void> {
    return this.serial(() => this.doStop('sleeping'));
  }

  private async doStop(after: PersonaState): Promise<void> {
    this.clearRestart();
    const handle = this.handle;
    if (handle) {
      this.setState('stopping');
      try {
        await this.opts.driver.stop(handle);
      } finally {
        this.handle = null;
        this.paused = false;
        this.commit = null;
        this.proxyErrors.reset();
        this.agent.destroy();
        this.agent = new http.Agent({ keepAlive: true });
      }
    }
    if (!this.fatal) this.setState(after, null);
  }

  restart(): Promise<void> {
    if (this.fatal) return Promise.reject(new WakeError(this.error ?? 'cannot start'));
    return this.serial(async () => {
      await this.doStop('sleeping');
      await this.doWake();
    });
  }

  /** Takes over a worker an earlier waker left running (found by labels). */
  adopt(handle: InstanceHandle, paused: boolean): void {
    this.handle = handle;
    this.paused = paused;
    this.pausedAt = Date.now();
    this.runningSince = Date.now();
    this.activity.touch();
    // The identity the adopted worker wears is the one in its folder.
    if (this.spec.proxyCountry) this.identity = readIdentityFile(this.spec.dir);
    this.setState(paused ? 'sleeping' : 'running', null);
    if (!paused) this.readCommit(handle);
  }

  /** The driver's notice that this persona's worker ended without being asked to. */
  onExit(handle: InstanceHandle, info: ExitInfo): void {
    if (this.handle?.id !== handle.id) return;
    if (this.state === 'waking') {
      this.exitDuringStart = info;
      return;
    }
    this.handle = null;
    this.paused = false;
    this.commit = null;
    this.proxyErrors.reset();
    this.log.warn('worker ended', { reason: info.reason });
    if (this.closed) return;
    if (this.spec.mode === 'always-on') {
      this.failures += 1;
      this.setState('crashed', `worker died: ${info.reason}`);
      this.scheduleRestart();
    } else {
      // A sleepy persona sleeps; its next request wakes it.
      this.setState('sleeping', `worker died: ${info.reason}`);
    }
  }

  private scheduleRestart(): void {
    if (this.closed || this.fatal || this.restartTimer) return;
    const delay = Math.min(MAX_BACKOFF_MS, 500 * 2 ** Math.max(0, this.failures - 1));
    this.log.info('restart scheduled', { in_ms: delay, failures: this.failures });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      this.wake().catch((err: unknown) =>
        this.log.error('restart failed', { error: errorMessage(err) }),
      );
    }, delay);
  }

  private clearRestart(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }

  /**
   * The fleet's periodic look: idle sleep (or pause, then stop), health checks and the reset of
   * the crash-loop backoff. `checkHealth` is set on every few ticks.
   */
  async tick(checkHealth: boolean, now = Date.now()): Promise<void> {
    if (this.closed || !this.handle) return;
    const busy = this.activity.busy();
    if (this.state === 'running' && now - this.runningSince > STABLE_MS) this.failures = 0;
    if (this.spec.mode === 'sleepy' && !busy && this.state === 'running' && !this.paused) {
      if (this.activity.idleMs(now) >= (this.spec.idleTimeoutS ?? Infinity) * 1000) {
        await this.serial(() => this.sleepIfIdle()).catch((err: unknown) =>
          this.log.error('sleep failed', { error: errorMessage(err) }),
        );
        return;
      }
    }
    if (this.paused && !busy && now - this.pausedAt >= this.opts.pauseSeconds * 1000) {
      await this.serial(() => this.doStop('sleeping')).catch(() => undefined);
      return;
    }
    if (checkHealth && this.state === 'running' && !this.paused) {
      const handle = this.handle;
      this.readProxyErrors(handle);
      const ok = await isReady(handle.address, this.opts.healthTimeoutMs).catch(() => false);
      if (ok || this.handle !== handle || this.state !== 'running') {
        this.healthFails = 0;
        return;
      }
      this.healthFails += 1;
      this.log.warn('health check failed', { failures: this.healthFails });
      if (this.healthFails >= this.opts.healthFailures) {
        this.healthFails = 0;
        this.failures += 1;
        await this.restart().catch((err: unknown) =>
          this.log.error('restart failed', { error: errorMessage(err) }),
        );
      }
    }
  }

  /** Re-checked inside the queue: a request may have arrived since the tick looked. */
  private async sleepIfIdle(): Promise<void> {
    if (this.activity.busy() || this.state !== 'running' || this.paused || !this.handle) return;
    if (this.activity.idleMs() < (this.spec.idleTimeoutS ?? Infinity) * 1000) return;
    if (this.opts.pauseSeconds > 0 && this.opts.driver.canPause && this.opts.driver.pause) {
      await this.opts.driver.pause(this.handle);
      this.paused = true;
      this.pausedAt = Date.now();
      this.setState('sleeping', null);
      return;
    }
    await this.doStop('sleeping');
  }

  /** Stops the worker for good (waker shutdown). */
  shutdown(): Promise<void> {
    this.closed = true;
    this.clearRestart();
    return this.serial(() => this.doStop(this.fatal ? 'crashed' : 'sleeping')).finally(() =>
      this.agent.destroy(),
    );
  }
}
