import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import puppeteerCore, { TargetType } from 'puppeteer-core';
import type { Browser, ConnectOptions } from 'puppeteer-core';
import { errorMessage } from '@persona-browser/service-kit';
import { ChromiumPipeTransport } from './pipe-transport';
import { QuietRuntimeTransport } from './quiet-transport';
import { learnStart, startCommand } from './start-replay';
import { WireCommands } from './wire-commands';

/** How long a starting browser may take to open its connection and its first tab. */
const START_TIMEOUT_MS = 30_000;
/** Lines of the browser's own error output kept to explain a start that failed. */
const KEPT_LOG_LINES = 20;

/** What a launch needs beyond the command-line switches. */
export interface ChromiumStart {
  executablePath: string;
  /** Switches puppeteer-core would add by default and the worker does not want. */
  ignoreDefaultArgs: readonly string[];
  userDataDir: string;
  env: NodeJS.ProcessEnv;
  protocolTimeout: number;
}

/** The browser process behind each browser this module started. */
const processes = new WeakMap<Browser, ChildProcess>();

/** The process of a browser started here; null for any other browser. */
export function browserProcess(browser: Browser): ChildProcess | null {
  return processes.get(browser) ?? null;
}

/** The side channel for unparsed replies of each browser this module started. */
const wires = new WeakMap<Browser, WireCommands>();

/** The unparsed-reply channel of a browser started here; null for any other browser. */
export function browserWire(browser: Browser): WireCommands | null {
  return wires.get(browser) ?? null;
}

/**
 * Starts one Chromium on a DevTools pipe and connects puppeteer to it through the worker's own
 * transport (see QuietRuntimeTransport), by puppeteer's public `connect({ transport })`.
 *
 * It has the shape of puppeteer itself (launch, connect, defaultArgs…) so that puppeteer-extra
 * can wrap it: its plugins change the switches before the launch (the stealth plugin's
 * `navigator.webdriver` adds `--disable-blink-features=AutomationControlled`) and hook every
 * page after it, exactly as they would around puppeteer's own launch. One launcher starts one
 * browser: the transport belongs to that browser by construction.
 */
export class ChromiumLauncher {
  private browser: Browser | null = null;

  constructor(private readonly start: ChromiumStart) {}

  /** The browser `launch` started. */
  launched(): Browser {
    if (!this.browser) throw new Error('the browser has not been launched');
    return this.browser;
  }

  /**
   * Puppeteer's default switches (less the ignored ones), the profile, the DevTools pipe and
   * `args`, as puppeteer's launch would put them together.
   */
  commandLine(args: readonly string[]): string[] {
    const defaults = puppeteerCore.defaultArgs({
      headless: false,
      userDataDir: this.start.userDataDir,
      // A copy: puppeteer merges the feature switches it finds into its own and takes them out.
      args: [...args],
    });
    const line = defaults.filter((arg) => !this.start.ignoreDefaultArgs.includes(arg));
    if (!line.includes('--remote-debugging-pipe')) line.push('--remote-debugging-pipe');
    return line;
  }

  async launch(options: { args?: string[] } = {}): Promise<Browser> {
    if (this.browser) throw new Error('this launcher has started its browser already');
    const args = this.commandLine(options.args ?? []);
    const command = startCommand(this.start.executablePath, args, this.start.env);
    const child = spawn(command.program, command.args, {
      // Its own process group: stopping it takes its helpers too, and a signal to the worker's
      // group (a terminal's Ctrl-C) reaches the worker alone, which closes the browser.
      detached: true,
      env: command.env,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    const log = keepLastLines(child);
    let timer: NodeJS.Timeout | undefined;
    try {
      const browser = await Promise.race([
        this.connectTo(child),
        new Promise<never>((_, reject) => {
          child.once('error', reject);
          timer = setTimeout(
            () =>
              reject(new Error(`the browser did not start within ${START_TIMEOUT_MS / 1000} s`)),
            START_TIMEOUT_MS,
          );
        }),
      ]);
      processes.set(browser, child);
      // Connected, so the launcher script (if any) has exec'd the program: read what it did.
      if (child.pid !== undefined)
        learnStart(this.start.executablePath, args, command.env, child.pid);
      this.browser = browser;
      return browser;
    } catch (err) {
      killGroup(child);
      const lines = log();
      throw new Error(
        `the browser failed to start: ${errorMessage(err)}${lines ? `\n${lines}` : ''}`,
        {
          cause: err,
        },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  private async connectTo(child: ChildProcess): Promise<Browser> {
    const wire = new WireCommands(new ChromiumPipeTransport(child));
    const transport = new QuietRuntimeTransport(wire);
    const browser = await puppeteerCore.connect({
      transport,
      // The page is as large as the maximised window: no emulated viewport.
      defaultViewport: null,
      protocolTimeout: this.start.protocolTimeout,
    });
    // As puppeteer's launch does: the browser is handed out once its first tab is there.
    await browser.waitForTarget((t) => t.type() === TargetType.PAGE, { timeout: START_TIMEOUT_MS });
    wires.set(browser, wire);
    return browser;
  }

  /** Puppeteer's own connect, for anything puppeteer-extra connects to itself. */
  connect(options: ConnectOptions): Promise<Browser> {
    return puppeteerCore.connect(options);
  }

  defaultArgs(): string[] {
    return this.commandLine([]);
  }

  executablePath(): string {
    return this.start.executablePath;
  }

  createBrowserFetcher(): never {
    throw new Error('the worker downloads no browser: it runs the installed one');
  }
}

/** Reads the browser's error output as it comes (a full pipe would stall it), keeping the end. */
function keepLastLines(child: ChildProcess): () => string {
  const lines: string[] = [];
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    lines.push(...text.split('\n').filter((l) => l.trim() !== ''));
    if (lines.length > KEPT_LOG_LINES) lines.splice(0, lines.length - KEPT_LOG_LINES);
  });
  return () => lines.join('\n');
}

/** Ends a browser that failed to start, with every process it made. */
function killGroup(child: ChildProcess): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}
