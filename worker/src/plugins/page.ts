import { TimeoutError } from 'puppeteer-core';
import type { FetchedFile, NavigationResult, PluginPage } from '@persona-browser/plugin-sdk';
import type { Call } from '../browser/call';
import type { ManagedPage } from '../browser/managed-page';
import { fetchFile } from '../browser/fetch-file';
import {
  captureClipPng,
  extractContent,
  navigate,
  navigationStarts,
  stopLoading,
} from '../browser/page-actions';
import { evalIsolated, PageScriptError } from '../browser/page-world';
import { navigationRefusal } from '../browser/url-policy';
import { BrowserFailure, Timeout, errorMessage } from '../errors';

const DEFAULT_WAIT_MS = 10_000;
const POLL_MS = 200;

/* In-page reads: sent as source into the isolated world, so they use only their arguments. */
function textsInPage(selector: string, all: boolean): string[] {
  const found = all
    ? Array.from(document.querySelectorAll(selector))
    : [document.querySelector(selector)].filter((e): e is Element => e !== null);
  // innerText is what a person sees; an element that is not HTML (an SVG) has textContent only.
  return found.map((e) => ((e instanceof HTMLElement ? e.innerText : e.textContent) ?? '').trim());
}

function attrsInPage(selector: string, name: string, all: boolean): string[] {
  const found = all
    ? Array.from(document.querySelectorAll(selector))
    : [document.querySelector(selector)].filter((e): e is Element => e !== null);
  const out: string[] = [];
  for (const e of found) {
    const raw = e.getAttribute(name);
    if (raw === null) continue;
    // A link is worth its absolute address: what a person would copy.
    out.push(name === 'href' || name === 'src' ? new URL(raw, document.baseURI).href : raw);
  }
  return out;
}

function valueInPage(selector: string): string | null {
  const e = document.querySelector(selector);
  return e && 'value' in e ? String(e.value) : null;
}

function firstMatchInPage(entries: Array<[string, string]>): string | null {
  for (const [name, selector] of entries) if (document.querySelector(selector)) return name;
  return null;
}

const titleInPage = (): string => document.title;

/** Where the first match is, in CSS pixels from the document's corner, and if all of it shows. */
function boxInPage(
  selector: string,
): { x: number; y: number; width: number; height: number; inViewport: boolean } | null {
  const e = document.querySelector(selector);
  if (!e) return null;
  const r = e.getBoundingClientRect();
  const inViewport = r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight;
  return {
    x: r.left + scrollX,
    y: r.top + scrollY,
    width: r.width,
    height: r.height,
    inViewport,
  };
}

/**
 * The page as a plugin sees it: navigation like ops `navigate`, and reads of the DOM in an
 * isolated world, every wait bounded by the call.
 */
export class PluginPageImpl implements PluginPage {
  constructor(
    private readonly mp: ManagedPage,
    private readonly call: Call,
    private readonly opts: { slowmoMs: number; allowFileUrls: boolean },
  ) {}

  private read<T>(fn: (...args: never[]) => unknown, args: unknown[]): Promise<T> {
    return evalIsolated<T>(this.mp, this.call, fn, args);
  }

  url(): string {
    return this.mp.url;
  }

  title(): Promise<string> {
    return this.read<string>(titleInPage, []);
  }

  async content(): Promise<string> {
    return (await extractContent(this.mp, this.call)).content;
  }

  async goto(url: string): Promise<NavigationResult> {
    const why = navigationRefusal(url, this.opts.allowFileUrls);
    if (why) throw new BrowserFailure(`Navigation to ${url} refused: ${why}`, this.mp.id);
    const r = await navigate(this.mp, this.call, url, this.opts.slowmoMs);
    return { status_code: r.status_code, final_url: r.final_url };
  }

  async navigationAfter(
    action: () => Promise<unknown>,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<NavigationResult | null> {
    const page = this.mp.page;
    const timeout = this.mp.timing.navigationTimeoutMs;
    const loaded = page.waitForNavigation({
      waitUntil: 'domcontentloaded',
      timeout,
      signal: this.call.signal,
    });
    loaded.catch(() => undefined);
    const started = navigationStarts(page, Math.min(timeoutMs, this.call.remainingMs()));
    await action();
    if (!(await this.call.race(started))) return null;
    try {
      const res = await this.call.race(loaded);
      return { status_code: res?.status() ?? null, final_url: this.mp.url };
    } catch (err) {
      if (err instanceof TimeoutError) {
        await stopLoading(this.mp);
        throw new Timeout(`Navigation exceeded ${timeout / 1000} s`, this.mp.id);
      }
      if (this.call.signal.aborted) throw err;
      throw new BrowserFailure(`Navigation failed: ${errorMessage(err)}`, this.mp.id);
    }
  }

  async exists(selector: string): Promise<boolean> {
    return (await this.read<string | null>(firstMatchInPage, [[['x', selector]]])) !== null;
  }

  async text(selector: string): Promise<string | null> {
    return (await this.read<string[]>(textsInPage, [selector, false]))[0] ?? null;
  }

  texts(selector: string): Promise<string[]> {
    return this.read<string[]>(textsInPage, [selector, true]);
  }

  async attr(selector: string, name: string): Promise<string | null> {
    return (await this.read<string[]>(attrsInPage, [selector, name, false]))[0] ?? null;
  }

  attrs(selector: string, name: string): Promise<string[]> {
    return this.read<string[]>(attrsInPage, [selector, name, true]);
  }

  value(selector: string): Promise<string | null> {
    return this.read<string | null>(valueInPage, [selector]);
  }

  async waitForAny(
    selectors: Record<string, string>,
    timeoutMs = DEFAULT_WAIT_MS,
  ): Promise<string | null> {
    const entries = Object.entries(selectors);
    const until = performance.now() + Math.min(timeoutMs, this.call.remainingMs());
    for (;;) {
      try {
        const hit = await this.read<string | null>(firstMatchInPage, [entries]);
        if (hit !== null) return hit;
      } catch (err) {
        // A document being replaced has no world to read for a moment; a bad selector is the
        // plugin's bug and says so.
        if (err instanceof PageScriptError || this.call.signal.aborted) throw err;
      }
      if (performance.now() >= until) return null;
      await this.call.sleep(POLL_MS);
    }
  }

  async fetchFile(url: string, maxBytes?: number): Promise<FetchedFile> {
    const file = await fetchFile(this.mp, this.call, url, maxBytes);
    return { status: file.status, content_type: file.content_type, bytes: file.bytes };
  }

  async screenshot(selector: string): Promise<Uint8Array> {
    const box = await this.read<ReturnType<typeof boxInPage>>(boxInPage, [selector]);
    if (!box) throw new BrowserFailure(`No element matches ${selector} to screenshot`, this.mp.id);
    if (box.width < 1 || box.height < 1)
      throw new BrowserFailure(`The element ${selector} has no size to screenshot`, this.mp.id);
    // A background tab of a headed browser is not painted.
    await this.mp.bringToFront(this.call);
    const { inViewport, ...clip } = box;
    const png = await captureClipPng(this.mp, this.call, clip, inViewport);
    return new Uint8Array(Buffer.from(png, 'base64'));
  }

  evaluate<T, A extends unknown[]>(fn: (...args: A) => T | Promise<T>, ...args: A): Promise<T> {
    return this.read<T>(fn, args);
  }
}
