import fs from 'node:fs';
import type { Browser, Page } from 'puppeteer-core';
import { TargetType } from 'puppeteer-core';
import { addExtra } from 'puppeteer-extra';
import StealthPlugin from 'puppeteer-extra-plugin-stealth';
import type { WorkArea } from '@persona-browser/xvfb';
import { desktopPanels, workAreaFor } from '../identity/desktop';
import { ChromiumLauncher } from '../devtools/chromium-launcher';
import { claimProfile } from './profile-lock';

/**
 * Google Chrome first: where it is installed, sites see the Google Chrome brand that most
 * people's browsers carry, and its proprietary codecs; Chromium otherwise.
 */
const CANDIDATES = [
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
];

export class BrowserNotFound extends Error {}

/** `CHROME_PATH` if set, else the first installed candidate; a clear error otherwise. */
export function findBrowserBinary(chromePath: string | null): string {
  if (chromePath) {
    if (!fs.existsSync(chromePath)) {
      throw new BrowserNotFound(`CHROME_PATH=${chromePath} does not exist`);
    }
    return chromePath;
  }
  const found = CANDIDATES.find((p) => fs.existsSync(p));
  if (!found) {
    throw new BrowserNotFound(
      `no Chromium or Chrome found (looked for ${CANDIDATES.join(', ')}): ` +
        'install it with `apt-get install chromium` or set CHROME_PATH',
    );
  }
  return found;
}

/**
 * The window where no display told its work area (DISPLAY given from outside): maximised on a
 * Linux desktop's.
 */
export const DEFAULT_WINDOW: WorkArea = workAreaFor(desktopPanels(null));

/**
 * The stealth plugin's evasions the worker enables: only those the detector measurement shows
 * to help a headed browser (`npm run bench:evasions`). `navigator.webdriver`
 * (its `--disable-blink-features=AutomationControlled`) clears seven flags; no other evasion
 * clears any, and user-agent-override, navigator.hardwareConcurrency, webgl.vendor and
 * iframe.contentWindow each add some: they fix what headless browsers lack and, on a headed one,
 * contradict the real browser and its workers.
 */
export const STEALTH_EVASIONS: readonly string[] = ['navigator.webdriver'];

/**
 * Without a GPU, Chromium's on-device AI model cannot run on one: said at the start
 * (performance class 8, "GPU blocked") instead of measured. Otherwise, three minutes after the
 * first start of each browser version on a profile, Chromium rates the GPU for that model; with
 * a GPU process (before GPU_IN_BROWSER) in a helper process that, with a sandbox broker of its
 * own, stayed for as long as the browser ran (2 MB of a persona, the rest of theirs shared with
 * the zygote they came from: `npm run bench:fleet`, memory). Its own rating here ends in class
 * 7, on which no model runs either, so the browser behaves as it would after it.
 */
const NO_GPU_MODEL_CLASS: readonly string[] = ['--optimization-guide-performance-class=8'];

/**
 * Without a GPU, the GPU service (SwiftShader for WebGL, and the compositor that draws the window)
 * runs on a thread of the browser process rather than in a process of its own, and the processes
 * that run without Chromium's sandbox start without a zygote of their own, which held only that
 * GPU process. Together 18 MB less held by a persona container (`npm run bench:fleet`, memory),
 * and the same WebGL for pages and workers (worker/test/browser-helpers.test.ts). No sandbox is
 * lost: Chromium gives a GPU process that draws in software none on Linux (in its /proc status
 * it has no seccomp filter of Chromium's, where renderers and the storage service have one; in
 * the image, and for an ordinary user outside a container alike). Lost is the GPU's crash
 * isolation: a crash of SwiftShader now ends the browser, which the worker starts again as after
 * any crash. The second switch alone, with a GPU process, makes the browser crash at its start:
 * the two go together.
 */
export const GPU_IN_BROWSER: readonly string[] = ['--in-process-gpu', '--no-unsandboxed-zygote'];

/**
 * How the browser draws. Without a GPU (Xvfb has none): composite in software, and give WebGL
 * SwiftShader's software renderer, so pages and their workers report the same WebGL (no WebGL
 * at all is rare in real browsers). With the machine's render node (`GPU=dri`, /dev/dri passed
 * into the container): WebGL and compositing on the GPU through ANGLE's Vulkan back end, which
 * needs no GL from the X server (Xvfb has neither GLX nor DRI3); frames reach the X window by a
 * copy (`--disable-vulkan-surface`), since Xvfb cannot present a GPU swapchain.
 */
export function graphicsArgs(gpu: 'dri' | null): string[] {
  if (gpu === 'dri') {
    return [
      '--ignore-gpu-blocklist',
      '--use-gl=angle',
      '--use-angle=vulkan',
      '--enable-features=Vulkan,VulkanFromANGLE,DefaultANGLEVulkan',
      '--disable-vulkan-surface',
      '--enable-gpu-rasterization',
    ];
  }
  return ['--disable-gpu', '--enable-unsafe-swiftshader', ...NO_GPU_MODEL_CLASS, ...GPU_IN_BROWSER];
}

/** The switches that place the window maximised on the desktop's work area. */
export function windowArgs(window: WorkArea): string[] {
  return [
    `--window-size=${window.width},${window.height}`,
    `--window-position=${window.x},${window.y}`,
    '--start-maximized',
  ];
}

/**
 * `args` with every `--enable-features=` (and `--disable-features=`) joined into one switch:
 * Chromium reads only the last of a repeated switch, so a second list would drop the first.
 */
export function joinFeatureSwitches(args: readonly string[]): string[] {
  const lists = new Map<string, string[]>();
  const out: string[] = [];
  for (const arg of args) {
    const m = /^(--(?:enable|disable)-features=)(.*)$/.exec(arg);
    if (!m?.[1]) {
      out.push(arg);
      continue;
    }
    const list = lists.get(m[1]);
    const names = (m[2] ?? '').split(',').filter(Boolean);
    if (list) list.push(...names.filter((n) => !list.includes(n)));
    else {
      lists.set(m[1], names);
      out.push(m[1]);
    }
  }
  return out.map((arg) => {
    const list = lists.get(arg);
    return list ? `${arg}${list.join(',')}` : arg;
  });
}

export function chromiumArgs(opts: { window?: WorkArea; gpu?: 'dri' | null } = {}): string[] {
  return joinFeatureSwitches([
    // Start-up connections to Google's services are refused on closed networks, many times over.
    '--disable-background-networking',
    '--disable-component-update',
    // No crash handler: Debian's Chromium starts two crashpad processes (one watching the
    // other) for reports nothing uploads; 1.2 MB of a persona (npm run bench, memory, PSS of
    // the browser's group). Invisible to pages; a crash still ends the browser as before.
    '--disable-crashpad-for-testing',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-sync',
    '--password-store=basic',
    '--use-mock-keychain',
    // Every pooled page keeps working while another tab is in front.
    '--disable-background-timer-throttling',
    '--disable-backgrounding-occluded-windows',
    '--disable-renderer-backgrounding',
    // WebUIOmniboxPopup and WebUIOmniboxAimPopup: the address bar's drop-down as a web page of
    // the browser's own, held ready in a renderer of its own (39 MB of a persona's 273, npm run
    // bench, memory); without them the drop-down is drawn natively, as before. No page sees it.
    '--disable-features=Translate,MediaRouter,OptimizationHints,SpareRendererForSitePerProcess,' +
      'WebUIOmniboxPopup,WebUIOmniboxAimPopup',
    // The network service in the browser process: 13 MB less (npm run bench, memory). Chromium
    // runs it unsandboxed on Linux anyway (`--service-sandbox-type=none`, in the image too), so
    // no sandbox is lost; what is lost is its crash isolation: a crash of the network stack
    // now ends the browser (the worker reports it as any browser crash) instead of a restart.
    '--enable-features=NetworkServiceInProcess2',
    ...graphicsArgs(opts.gpu ?? null),
    '--disable-dev-shm-usage',
    ...windowArgs(opts.window ?? DEFAULT_WINDOW),
  ]);
}

export interface LaunchOptions {
  executablePath: string;
  profileDir: string;
  display: string | null;
  /** The display's work area, which the window fills (maximised); default DEFAULT_WINDOW. */
  window?: WorkArea;
  /** `dri`: draw on the machine's GPU (graphicsArgs); null: in software. */
  gpu?: 'dri' | null;
  /** Also serve DevTools on this localhost port (0: any free one); null: the pipe only. */
  devtoolsPort?: number | null;
  /** Opt out of Chromium's sandbox (CHROME_NO_SANDBOX); root always runs without it. */
  noSandbox?: boolean;
  /** More command-line switches (a proxy identity's proxy, language, WebRTC policy). */
  extraArgs?: string[];
  /** More environment for the browser process (a proxy identity's time zone and language). */
  extraEnv?: Record<string, string>;
  /** The stealth evasions to enable: STEALTH_EVASIONS unless a measurement asks otherwise. */
  evasions?: readonly string[];
  /**
   * More set-up of the connected browser (the window's placement, the platform's disguise), run
   * while its startup tab is made ready, which mostly waits for the tab's renderer: the launch
   * ends when both have. When it fails the browser is closed and the launch fails with it.
   */
  alongside?: (browser: Browser) => Promise<void>;
}

/**
 * `--no-sandbox` when the user opted out, or when running as root: Chromium refuses to run as
 * root with its sandbox, and a container's root is the common case. Otherwise none: the
 * sandbox stays on.
 */
export function sandboxArgs(noSandbox: boolean, uid: number | null): string[] {
  return noSandbox || uid === 0 ? ['--no-sandbox'] : [];
}

/**
 * A headed Chromium on the persona's persistent profile, with the stealth evasions, whose pages
 * never get the Runtime domain (devtools/quiet-transport.ts). It is driven over a pipe, not
 * a port: when the worker dies, however it dies, the pipe closes and Chromium shuts down
 * cleanly by itself (the profile records a normal exit). A DevTools port, when asked for, is
 * served beside the pipe and does not change that. The worker installs no signal handlers for
 * it: its own stop closes the browser.
 */
export async function launchBrowser(opts: LaunchOptions): Promise<Browser> {
  await claimProfile(opts.profileDir);
  const args = [...chromiumArgs({ window: opts.window, gpu: opts.gpu })];
  if (opts.devtoolsPort !== undefined && opts.devtoolsPort !== null) {
    args.push(`--remote-debugging-port=${opts.devtoolsPort}`);
  }
  args.push(
    ...sandboxArgs(
      opts.noSandbox ?? false,
      typeof process.getuid === 'function' ? process.getuid() : null,
    ),
  );
  args.push(...(opts.extraArgs ?? []));
  const env = { ...process.env, ...opts.extraEnv };
  if (opts.display) env.DISPLAY = opts.display;
  const launcher = new ChromiumLauncher({
    executablePath: opts.executablePath,
    ignoreDefaultArgs: ['--enable-automation'],
    userDataDir: opts.profileDir,
    env,
    protocolTimeout: 120_000,
  });
  const puppeteer = addExtra(launcher);
  puppeteer.use(StealthPlugin({ enabledEvasions: new Set(opts.evasions ?? STEALTH_EVASIONS) }));
  // Through puppeteer-extra, so its plugins see the switches and every page as they would
  // around puppeteer's own launch; the browser is the one this launcher started.
  await puppeteer.launch({ args: joinFeatureSwitches(args) });
  const browser = launcher.launched();
  try {
    const [tab] = await Promise.all([
      readyStartupTab(browser, puppeteer.plugins),
      opts.alongside?.(browser),
    ]);
    startupTabs.set(browser, tab);
  } catch (err) {
    await browser.close().catch(() => undefined);
    throw err;
  }
  return browser;
}

/** The tab each browser started here opened by itself, made ready for the pool's first page. */
const startupTabs = new WeakMap<Browser, Page>();

/**
 * The blank tab the browser opened at its start, handed out once (then null): the pool's first
 * page is made in it rather than in a second tab beside it, which would be a second renderer
 * (12 MB) kept only to hold the window open.
 */
export function takeStartupTab(browser: Browser): Page | null {
  const tab = startupTabs.get(browser) ?? null;
  startupTabs.delete(browser);
  return tab && !tab.isClosed() ? tab : null;
}

/**
 * The startup tab made what a tab of `browser.newPage()` is: puppeteer-extra hands each new
 * page to its plugins; the startup tab opened before the plugins listened, so the same is done
 * to it here, before anything else sees it. Its about:blank is not loaded again, as
 * puppeteer-extra does for a new tab whose plugins may come late: here they have been called by
 * the time the tab is handed out, and the document each site sees is one the tab loads later,
 * with every script the plugins gave it (the blank one before it runs none of theirs that
 * changes anything: `navigator.webdriver` is false there by the browser's own switch).
 */
async function readyStartupTab(browser: Browser, plugins: readonly object[]): Promise<Page> {
  const target = await browser.waitForTarget((t) => t.type() === TargetType.PAGE);
  const tab = await target.page();
  if (!tab) throw new Error('the browser opened no tab at its start');
  for (const plugin of plugins) {
    // Typed against another puppeteer's Page than this one: called as puppeteer-extra calls it.
    const onPageCreated: unknown = Reflect.get(plugin, 'onPageCreated');
    if (typeof onPageCreated === 'function') await onPageCreated.call(plugin, tab);
  }
  return tab;
}
