import { execFile } from 'node:child_process';
import type { Browser, CDPSession, Connection } from 'puppeteer-core';
import { browserConnection, onChildSessionReady, tabSessions } from '../devtools/child-sessions';
import type { PageHolder } from './page';
import type {
  Brand,
  BrandClaim,
  PlatformName,
  PlatformOverride,
  RealAgent,
  RealSystem,
} from './platform';
import { machinePlatform, planPlatform, userAgentSwitch, workerPlatformScript } from './platform';

/** Where the real agent is read: answered by the worker itself, never by the network. */
const AGENT_PAGE = 'https://agent.persona-browser.invalid/';

function isBrands(value: unknown): value is Brand[] {
  return (
    Array.isArray(value) &&
    value.every(
      (b: unknown) =>
        typeof b === 'object' &&
        b !== null &&
        typeof Reflect.get(b, 'brand') === 'string' &&
        typeof Reflect.get(b, 'version') === 'string',
    )
  );
}

/** The agent as the page read it, each field checked; a browser without form factors is a desktop. */
function agentRead(value: unknown): Omit<RealAgent, 'fullVersion'> {
  const field = (name: string): unknown =>
    typeof value === 'object' && value !== null ? Reflect.get(value, name) : undefined;
  const [userAgent, brands, fullVersionList] = [
    field('userAgent'),
    field('brands'),
    field('fullVersionList'),
  ];
  const [mobile, model, formFactors] = [
    field('mobile'),
    field('model'),
    field('formFactors') ?? ['Desktop'],
  ];
  const system = systemRead(field('system'));
  if (
    typeof userAgent !== 'string' ||
    !isBrands(brands) ||
    !isBrands(fullVersionList) ||
    typeof mobile !== 'boolean' ||
    typeof model !== 'string' ||
    !Array.isArray(formFactors) ||
    !formFactors.every((f): f is string => typeof f === 'string') ||
    !system
  ) {
    throw new Error(`the browser's client hints are not as asked: ${JSON.stringify(value)}`);
  }
  return { userAgent, system, brands, fullVersionList, mobile, model, formFactors };
}

/** The machine's system as the page read it, or null when a field is missing. */
function systemRead(value: unknown): RealSystem | null {
  const field = (name: string): unknown =>
    typeof value === 'object' && value !== null ? Reflect.get(value, name) : undefined;
  const strings = ['navigator', 'hint', 'platformVersion', 'architecture', 'bitness'].map(field);
  const [nav, hint, platformVersion, architecture, bitness] = strings;
  const wow64 = field('wow64') ?? false;
  if (
    typeof nav !== 'string' ||
    typeof hint !== 'string' ||
    typeof platformVersion !== 'string' ||
    typeof architecture !== 'string' ||
    typeof bitness !== 'string' ||
    typeof wow64 !== 'boolean'
  ) {
    return null;
  }
  return { navigator: nav, hint, platformVersion, architecture, bitness, wow64 };
}

/**
 * What the real browser tells of itself, read in a page of its own. Client hints are only
 * given to secure pages, and a new tab's about:blank is not one; so a throwaway tab opens an
 * https address that the worker answers itself (request interception: nothing leaves the
 * machine, a proxy is not asked), reads the hints in an isolated world and closes.
 */
export async function readRealAgent(browser: Browser): Promise<RealAgent> {
  const page = await browser.newPage();
  try {
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      void request
        .respond({ status: 200, contentType: 'text/html', body: '<!doctype html><title>-</title>' })
        .catch(() => undefined);
    });
    await page.goto(AGENT_PAGE, { waitUntil: 'load', timeout: 15_000 });
    const session = await page.createCDPSession();
    try {
      const tree = await session.send('Page.getFrameTree');
      const world = await session.send('Page.createIsolatedWorld', {
        frameId: tree.frameTree.frame.id,
        worldName: 'persona-browser-agent',
      });
      const res = await session.send('Runtime.evaluate', {
        contextId: world.executionContextId,
        awaitPromise: true,
        returnByValue: true,
        expression: `navigator.userAgentData.getHighEntropyValues(['fullVersionList', 'model', 'formFactors',
            'platformVersion', 'architecture', 'bitness', 'wow64'])
          .then((h) => ({ userAgent: navigator.userAgent, brands: h.brands, fullVersionList: h.fullVersionList,
            mobile: h.mobile, model: h.model, formFactors: h.formFactors,
            system: { navigator: navigator.platform, hint: h.platform, platformVersion: h.platformVersion,
              architecture: h.architecture, bitness: h.bitness, wow64: h.wow64 } }))`,
      });
      if (res.exceptionDetails) {
        throw new Error(`cannot read the browser's client hints: ${res.exceptionDetails.text}`);
      }
      const read = agentRead(res.result.value);
      const fullVersion = (await browser.version()).replace(/^[^/]*\//, '');
      return { ...read, fullVersion };
    } finally {
      await session.detach().catch(() => undefined);
    }
  } finally {
    await page.close().catch(() => undefined);
  }
}

/**
 * Sets `navigator.platform` in every dedicated worker of the browser before the worker's own
 * code (`workerPlatformScript`). Puppeteer attaches to each worker held at its start and resumes it once it is ready;
 * the script is sent on the worker's session at that moment, so it runs first (commands on a
 * session are handled in order). Nested workers are children of a worker's session and are
 * caught the same way. Their user agent and client hints need nothing here: the browser's
 * switch and the page's override (which puppeteer carries on to the worker) tell them.
 */
function beforeEveryWorker(
  connection: Connection,
  script: string,
  tabs: readonly CDPSession[],
): void {
  onChildSessionReady(
    connection,
    (child, type) => {
      if (type !== 'worker') return;
      void child.send('Runtime.evaluate', { expression: script }).catch(() => undefined);
    },
    tabs,
  );
}

/**
 * Shared and service workers belong to no page, so no page's override reaches them, and
 * puppeteer lets service workers go at once. The worker holds its own browser-level session
 * that attaches to each of them at its start, sets the client hints on it (its requests and
 * `userAgentData` follow; its `navigator.userAgent` is the browser's switch already), sets its
 * `navigator.platform` (`workerPlatformScript`), and lets it run. The session stays attached, or the override would end
 * with it; a service worker so watched is not stopped when idle.
 */
async function beforeEveryOtherWorker(
  root: CDPSession,
  connection: Connection,
  override: PlatformOverride,
  script: string | null,
): Promise<void> {
  root.on('Target.attachedToTarget', (event) => {
    const session = connection.session(event.sessionId);
    if (!session) return;
    // Sent together: a session handles its commands in order, so all land before the run.
    void Promise.all([
      session.send('Network.setUserAgentOverride', {
        userAgent: override.userAgent,
        platform: override.platform,
        userAgentMetadata: override.userAgentMetadata,
      }),
      ...(script ? [session.send('Runtime.evaluate', { expression: script })] : []),
      session.send('Runtime.runIfWaitingForDebugger'),
    ]).catch(() => undefined);
  });
  await root.send('Target.setAutoAttach', {
    autoAttach: true,
    waitForDebuggerOnStart: true,
    flatten: true,
    filter: [{ type: 'shared_worker' }, { type: 'service_worker' }],
  });
}

/**
 * The `--user-agent` switch that makes the browser at `executablePath` tell `name`, or null
 * when the machine already runs it. The browser's version is read from its `--version`.
 */
export async function agentSwitchFor(
  executablePath: string,
  name: PlatformName,
): Promise<string | null> {
  const machine = machinePlatform();
  if (machine === name) return null;
  const line = await new Promise<string>((resolve, reject) => {
    execFile(executablePath, ['--version'], { timeout: 15_000 }, (err, stdout) => {
      if (err)
        reject(
          new Error(
            `cannot read the browser's version (${executablePath} --version): ${err.message}`,
          ),
        );
      else resolve(stdout);
    });
  });
  const ua = userAgentSwitch(line, name, machine);
  return ua === null ? null : `--user-agent=${ua}`;
}

/** Makes every pool page tell the persona's system instead of the machine's. */
export interface PlatformDisguise {
  override: PlatformOverride;
  /** Sets the page's user agent, platform and client hints (its frames and workers follow). */
  applyTo(p: PageHolder): Promise<void>;
}

/**
 * Plans `name` (null: the machine's own system) and `brand` against the real browser and
 * prepares every page to tell them: null when the browser already does (nothing changes). The
 * worker hook is installed before any page is handed out, so no dedicated worker starts
 * without it.
 */
export async function disguisePlatform(
  browser: Browser,
  name: PlatformName | null,
  brand: BrandClaim,
  agentSwitch: string | null,
): Promise<PlatformDisguise | null> {
  const real = await readRealAgent(browser);
  const told = agentSwitch?.replace(/^--user-agent=/, '');
  if (told !== undefined && real.userAgent !== told) {
    throw new Error(`the browser did not take its --user-agent switch: it tells ${real.userAgent}`);
  }
  const machine = machinePlatform();
  const override = planPlatform(real, name, brand, machine);
  if (!override) return null;
  const { root, connection } = await browserConnection(browser);
  // A brand claimed on the machine's own system leaves every worker's platform as it is.
  const script = override.name === machine ? null : workerPlatformScript(override.platform);
  // The tabs already open too: the pool's first page is made in the startup tab.
  if (script) beforeEveryWorker(connection, script, await tabSessions(browser));
  await beforeEveryOtherWorker(root, connection, override, script);
  return {
    override,
    // Puppeteer's network manager sets it on the page's session and every session it gains
    // later: cross-site frames, workers, and the session a prerendered page moves to.
    applyTo: (p) =>
      p.page.setUserAgent({
        userAgent: override.userAgent,
        platform: override.platform,
        userAgentMetadata: override.userAgentMetadata,
      }),
  };
}
