import type { Browser } from 'puppeteer-core';
import type { NavigatorStatus, PageState } from '@persona-browser/contracts';
import { NotInitialized } from '../errors';
import type { BrandClaim, PlatformName } from '../identity/platform';
import type { PlatformDisguise } from '../identity/platform-browser';
import { agentSwitchFor, disguisePlatform } from '../identity/platform-browser';
import type { Logger } from '@persona-browser/service-kit';
import { browserProcess, browserWire } from '../devtools/chromium-launcher';
import { groupEnded } from './process-group';
import type { CookieRepair } from './cookie-keep';
import { keepCookies, keptCookies, readCookies, restoreCookies } from './cookie-keep';
import { GuestMux } from '../devtools/guest-mux';
import type { GuestCommand } from '../devtools/guest-policy';
import { launchBrowser, takeStartupTab } from './launch';
import type { LaunchOptions } from './launch';
import { settleWindow } from './window-settle';
import { LeaseTable } from './leases';
import type { PoolHooks } from './page-pool';
import { MAX_PAGES, PagePool } from './page-pool';
import type { ManagedPage } from './managed-page';
import type { PageTiming } from './timing';
import { DEFAULT_TIMING } from './timing';

/**
 * How the browser is launched, as browser/launch.ts takes it (the window placed and sized on the
 * work area as a maximised one; the switches and environment of a proxy identity:
 * worker/src/identity/apply.ts), and what the navigator adds around it.
 */
export interface NavigatorOptions extends Pick<
  LaunchOptions,
  | 'executablePath'
  | 'profileDir'
  | 'display'
  | 'window'
  | 'gpu'
  | 'devtoolsPort'
  | 'noSandbox'
  | 'extraArgs'
  | 'extraEnv'
> {
  /** What the persona gives away by its settings (a UTC clock...): the status lists them. */
  warnings?: readonly string[];
  /** The system pages tell instead of the machine's (BROWSER_PLATFORM); null: the real one. */
  platform?: PlatformName | null;
  /** The brand pages claim (BROWSER_BRAND); `real` (the default) tells the browser's own. */
  brand?: BrandClaim;
  slowmoMs: number;
  /** The waits of page calls (default: the documented ones). */
  timing?: PageTiming;
  logger: Logger;
  hooks?: PoolHooks;
  /**
   * What the page of an outside DevTools client is given on its session before it runs, beside
   * the platform's user agent: the pool pages' position and locale (identity/page.ts).
   */
  guestPageSetup?: GuestCommand[];
  /** Takes secrets out of what status shows of a page (its URL and title). */
  redact?: (text: string) => string;
}

export type { NavigatorStatus } from '@persona-browser/contracts';

const RELAUNCH_DELAY_MS = 1_000;
const RELAUNCH_ATTEMPTS = 5;
/**
 * How long a closing browser has to write its profile (cookies set in the last seconds are in
 * memory until it does) and exit before its processes are killed: under the 20 s a container is
 * given to stop, and a busy machine's close takes a few seconds.
 */
const BROWSER_CLOSE_MS = 15_000;
/** How long a closing browser has to give its cookies (a frozen one gives none, the close goes on). */
const COOKIE_READ_MS = 2_000;

/** Owns the browser process and the pool on top of it; start, stop and restart (docs/api.md). */
export class Navigator {
  private browser: Browser | null = null;
  private pool: PagePool | null = null;
  private running = false;
  private queue: Promise<unknown> = Promise.resolve();
  readonly leases = new LeaseTable();
  /** The outside DevTools clients of the running browser (one mux per browser). */
  private guests: { browser: Browser; mux: GuestMux } | null = null;
  /** The platform the pool's pages tell instead of the machine's, or null. */
  private disguise: PlatformDisguise | null = null;
  /** The platform's user-agent switch as read once (see agentSwitch). */
  private agentSwitchRead: Promise<string | null> | null = null;

  constructor(private readonly opts: NavigatorOptions) {}

  get initialized(): boolean {
    return this.running && this.browser !== null && this.pool !== null;
  }

  /** A page's URL or title as status may show it: no secret in it. */
  redact(text: string): string {
    return this.opts.redact ? this.opts.redact(text) : text;
  }

  get slowmoMs(): number {
    return this.opts.slowmoMs;
  }

  /** The pool, or 500 when the navigator is not up. */
  requirePool(): PagePool {
    if (!this.initialized || !this.pool) throw new NotInitialized();
    return this.pool;
  }

  /** The outside DevTools clients' connections to the running browser; 500 when it is down. */
  guestMux(): GuestMux {
    const browser = this.browser;
    if (!this.initialized || !browser) throw new NotInitialized();
    if (this.guests?.browser !== browser) {
      const wire = browserWire(browser);
      if (!wire) throw new Error('the browser was not started by this worker');
      this.guests = { browser, mux: new GuestMux(wire) };
    }
    return this.guests.mux;
  }

  /**
   * The commands an outside client's page session gets before the page runs, so that it tells
   * what the pool's pages tell: the platform's user agent and client hints, the position, the
   * locale.
   */
  guestPageSetup(): GuestCommand[] {
    const o = this.disguise?.override;
    const agent: GuestCommand[] = o
      ? [
          {
            method: 'Network.setUserAgentOverride',
            params: {
              userAgent: o.userAgent,
              platform: o.platform,
              userAgentMetadata: o.userAgentMetadata,
            },
          },
        ]
      : [];
    return [...agent, ...(this.opts.guestPageSetup ?? [])];
  }

  /** The pool page on DevTools target `targetId`, or null. */
  pageOfTarget(targetId: string): ManagedPage | null {
    return this.pool?.list().find((p) => p.targetId === targetId) ?? null;
  }

  /**
   * What the browser says of itself at DevTools' `/json/version`, with the user agent the
   * persona's pages tell; 500 when it is down.
   */
  async browserVersion(): Promise<{
    product: string;
    protocolVersion: string;
    revision: string;
    jsVersion: string;
    userAgent: string;
  }> {
    const browser = this.browser;
    if (!this.initialized || !browser) throw new NotInitialized();
    const session = await browser.target().createCDPSession();
    try {
      const v = await session.send('Browser.getVersion');
      return { ...v, userAgent: this.disguise?.override.userAgent ?? v.userAgent };
    } finally {
      await session.detach().catch(() => undefined);
    }
  }

  /** The browser's main process id, for counting and for the waker's samples. */
  get browserPid(): number | null {
    const proc = this.browser ? browserProcess(this.browser) : null;
    return proc?.pid ?? null;
  }

  /** Pooled pages by state, or null while there is no pool (the browser is stopped). */
  pageCounts(): Record<PageState, number> | null {
    return this.initialized && this.pool ? this.pool.countByState() : null;
  }

  status(): NavigatorStatus {
    const pool = this.initialized ? this.pool : null;
    const stopped = !this.running;
    const available = pool
      ? pool.list().filter((p) => p.state === 'idle' && !this.leases.isLeased(p.id)).length
      : null;
    return {
      initialized: this.initialized,
      browser_context_active: this.browser?.connected ?? false,
      page_pool_active: pool !== null,
      max_pages: MAX_PAGES,
      slowmo: this.opts.slowmoMs,
      warnings: [...(this.opts.warnings ?? [])],
      page_count: pool ? pool.size : stopped ? 0 : null,
      available_pages: pool ? available : stopped ? 0 : null,
    };
  }

  /** Starts the browser; when it is running, closes it first (all pages are lost). */
  start(): Promise<void> {
    return this.serial(async () => {
      await this.shutdownBrowser();
      this.running = true;
      try {
        await this.launch();
      } catch (err) {
        this.running = false;
        throw err;
      }
    });
  }

  stop(): Promise<void> {
    return this.serial(async () => {
      this.running = false;
      await this.shutdownBrowser();
    });
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * The user-agent switch of the persona's platform (null: none), read from the browser's
   * version once per worker: the binary a worker runs does not change under it, and each read
   * starts the browser's launcher script (half a second of a wake on a busy machine).
   */
  private agentSwitch(): Promise<string | null> {
    const platform = this.opts.platform;
    if (!platform) return Promise.resolve(null);
    const read = (this.agentSwitchRead ??= agentSwitchFor(this.opts.executablePath, platform));
    // A failed read is tried again at the next start.
    read.catch(() => {
      if (this.agentSwitchRead === read) this.agentSwitchRead = null;
    });
    return read;
  }

  private async launch(): Promise<void> {
    const started = Date.now();
    // A persona telling another system than the machine's has it in the browser's own
    // user agent from the start, in every page and worker (identity/platform-browser.ts).
    const agentSwitch = await this.agentSwitch();
    const window = this.opts.window;
    const brand = this.opts.brand ?? 'real';
    const disguised = Boolean(this.opts.platform) || brand !== 'real';
    const made: {
      off: object | null;
      disguise: PlatformDisguise | null;
      cookies: CookieRepair | { error: string } | null;
    } = { off: null, disguise: null, cookies: null };
    // The cookies the last browser held as it closed, read before this one can write its database.
    const kept = keptCookies(this.opts.profileDir);
    // The options carry extraArgs and extraEnv on to the launch. The window's placement and the
    // platform's disguise are made while the startup tab gets ready, before any page is handed
    // out: the first one reads the window where it lies then. A browser that cannot tell the
    // persona's system is not handed out telling another: the launch fails and closes it.
    const browser = await launchBrowser({
      ...this.opts,
      extraArgs: [...(this.opts.extraArgs ?? []), ...(agentSwitch ? [agentSwitch] : [])],
      alongside: async (b) => {
        await Promise.all([
          window &&
            settleWindow(b, window).then(
              (bounds) => void (made.off = bounds),
              (err: unknown) =>
                void (made.off = { error: err instanceof Error ? err.message : String(err) }),
            ),
          disguised &&
            disguisePlatform(b, this.opts.platform ?? null, brand, agentSwitch).then(
              (d) => void (made.disguise = d),
            ),
          kept &&
            restoreCookies(b, kept).then(
              (r) => void (made.cookies = r),
              (err: unknown) =>
                void (made.cookies = { error: err instanceof Error ? err.message : String(err) }),
            ),
        ]);
      },
    });
    const { off, disguise, cookies } = made;
    if (off) this.opts.logger.warn('the window is not on the work area', { window: off });
    if (cookies && 'error' in cookies) {
      this.opts.logger.warn('the cookies kept at the last stop could not be checked or put back', {
        error: cookies.error,
      });
    } else if (cookies && cookies.restored + cookies.removed > 0) {
      this.opts.logger.warn(
        'the profile did not hold the cookies the browser had as it closed: they are put back',
        { cookies },
      );
    }
    if (disguised) {
      this.opts.logger.info('platform override', {
        platform: this.opts.platform ?? null,
        brand,
        user_agent: disguise?.override.userAgent ?? 'the browser already tells it: unchanged',
      });
    }
    this.browser = browser;
    this.disguise = disguise;
    const onPageCreated = this.opts.hooks?.onPageCreated;
    this.pool = new PagePool(
      browser,
      {
        ...this.opts.hooks,
        onPageCreated: async (p) => {
          await disguise?.applyTo(p);
          await onPageCreated?.(p);
        },
        onPageClosed: (pageId) => {
          this.leases.forget(pageId);
          this.opts.hooks?.onPageClosed?.(pageId);
        },
      },
      this.opts.timing ?? DEFAULT_TIMING,
      takeStartupTab(browser),
    );
    this.opts.logger.info('browser started', {
      pid: browserProcess(browser)?.pid,
      ms: Date.now() - started,
    });
    browser.once('disconnected', () => {
      if (this.browser !== browser) return;
      this.opts.logger.warn('browser disconnected unexpectedly; relaunching');
      this.discard();
      this.relaunch(1);
    });
  }

  /** Brings a browser that died on its own back, retrying a few times with growing pauses. */
  private relaunch(attempt: number): void {
    setTimeout(() => {
      if (!this.running || this.browser) return;
      this.serial(async () => {
        if (this.running && !this.browser) await this.launch();
      }).catch((err: unknown) => {
        this.opts.logger.error('relaunch failed', { err, attempt });
        if (attempt < RELAUNCH_ATTEMPTS) this.relaunch(attempt + 1);
      });
    }, RELAUNCH_DELAY_MS * attempt).unref();
  }

  private discard(): void {
    this.pool?.closeAll();
    this.pool = null;
    this.browser = null;
    this.leases.clear();
  }

  private async shutdownBrowser(): Promise<void> {
    const browser = this.browser;
    const pool = this.pool;
    this.browser = null;
    this.pool = null;
    this.leases.clear();
    if (!browser) return;
    const proc = browserProcess(browser);
    const started = Date.now();
    // Kept once the browser has ended (cookie-keep.ts): its own last write of them is not sure.
    const cookies = await readCookies(browser, COOKIE_READ_MS);
    try {
      await this.closeBrowser(browser, pool, proc, started);
    } finally {
      if (cookies) {
        try {
          keepCookies(this.opts.profileDir, cookies);
        } catch (err) {
          this.opts.logger.warn('the cookies of the closed browser could not be kept', { err });
        }
      }
    }
  }

  private async closeBrowser(
    browser: Browser,
    pool: PagePool | null,
    proc: ReturnType<typeof browserProcess>,
    started: number,
  ): Promise<void> {
    pool?.closeAll();
    const until = started + BROWSER_CLOSE_MS;
    const closing = browser.close().catch(() => undefined);
    // Closed once every process of its group has ended, the helpers too, not only the main one
    // (and none is left running in the container or on the machine); a close command that
    // failed may still have begun the close.
    const closed = proc?.pid
      ? await groupEnded(proc.pid, until)
      : await Promise.race([
          closing.then(() => true),
          new Promise<false>((resolve) => {
            setTimeout(() => resolve(false), BROWSER_CLOSE_MS).unref();
          }),
        ]);
    const ms = Date.now() - started;
    if (closed) {
      this.opts.logger.info('browser closed', { ms });
      return;
    }
    this.opts.logger.warn(
      `the browser did not close within ${BROWSER_CLOSE_MS / 1000} s: its processes are killed, ` +
        'and what it had not written to the profile yet is lost',
      { ms },
    );
    // Whatever did not exit politely goes with its whole process group.
    if (proc?.pid) {
      try {
        process.kill(-proc.pid, 'SIGKILL');
      } catch {
        proc.kill('SIGKILL');
      }
      // A killed process takes a moment to end: the stop answers once none runs.
      await groupEnded(proc.pid, Date.now() + 5_000);
    }
  }
}
