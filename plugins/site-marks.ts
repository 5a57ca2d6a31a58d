import type { PluginContext } from '@persona-browser/plugin-sdk';
import { pollUntil } from '@persona-browser/plugin-sdk';

/**
 * What a family's site check reports: every selector and API key its workflows rely on, by the
 * name it has in the family's table (`SELECTORS.feedArticle`), found or missing on the real
 * site. A check only reads: it navigates with GET and clicks links a workflow clicks, it never
 * submits a form, follows, posts or moves money. The tables are the workflows' own (site.ts),
 * so a check cannot drift from what the workflows use.
 */

export interface CheckItem {
  /** The name in the family's table: `SELECTORS.feedArticle`, `API.items[0].code`. */
  name: string;
  /** A CSS selector, a key of an API answer, or a text mark (a column heading, a pattern). */
  kind: 'selector' | 'json_key' | 'text';
  /** The page (or API answer) it was looked for on. */
  where: string;
  found: boolean;
}

/** A table of selectors: name → CSS selector. */
export type SelectorTable = Record<string, string>;

/** A table whose entries may be grouped (`menuLink: {home, conto}`), as one flat table. */
export function flatTable(table: Record<string, string | Record<string, string>>): SelectorTable {
  const out: SelectorTable = {};
  for (const [name, v] of Object.entries(table)) {
    if (typeof v === 'string') out[name] = v;
    else for (const [k, s] of Object.entries(v)) out[`${name}.${k}`] = s;
  }
  return out;
}

/* Runs in the page's isolated world: which selectors match at least one element. */
function matchInPage(selectors: string[]): boolean[] {
  return selectors.map((s) => {
    try {
      return document.querySelector(s) !== null;
    } catch {
      return false;
    }
  });
}

/** The value at `path` (`items.0.code`) of parsed JSON, or undefined. */
export function valueAt(data: unknown, path: string): unknown {
  let v: unknown = data;
  for (const key of path.split('.')) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = Object.entries(v).find(([k]) => k === key)?.[1];
  }
  return v;
}

/** Collects the items of one check run, page after page. */
export class SiteCheck {
  readonly items: CheckItem[] = [];

  /**
   * Looks for `names` of `table` on the page as it is now; `prefix` names the table
   * (`SELECTORS`), `scope` narrows each selector to inside an element (a feed `article`).
   */
  async selectors(
    ctx: PluginContext,
    where: string,
    prefix: string,
    table: SelectorTable,
    names: string[],
    scope = '',
    waitMs = 0,
  ): Promise<void> {
    const sels = names.map((n) => {
      const s = table[n];
      if (s === undefined) throw new Error(`${prefix}.${n} is not in the table`);
      return scope ? `${scope} :is(${s})` : s;
    });
    // A page renders in steps: read until every one is there, or `waitMs` has passed.
    const found = await pollUntil(
      ctx,
      () => ctx.page.evaluate(matchInPage, sels),
      (f) => f.every(Boolean),
      waitMs,
      250,
    );
    names.forEach((n, i) => this.record(`${prefix}.${n}`, 'selector', where, found[i] === true));
  }

  /** Looks for each `path` (name → dotted path, `items.0.code`) in parsed JSON. */
  keys(where: string, prefix: string, data: unknown, paths: Record<string, string>): void {
    for (const [name, path] of Object.entries(paths)) {
      this.record(`${prefix}.${name}`, 'json_key', where, valueAt(data, path) !== undefined);
    }
  }

  record(name: string, kind: CheckItem['kind'], where: string, found: boolean): void {
    this.items.push({ name, kind, where, found });
  }

  /**
   * The plugin's answer: a success when all were found, else `success: false` with the
   * missing ones named (the worker then leaves a failure bundle of the page as it was).
   */
  answer(family: string): Record<string, unknown> {
    const missing = this.items.filter((i) => !i.found).map((i) => i.name);
    const counts = { checked: this.items.length, missing_count: missing.length };
    if (missing.length === 0) {
      const message = `${family}: all ${this.items.length} marks found`;
      return { ...counts, items: this.items, missing, message };
    }
    return {
      success: false,
      error: `Site changed: ${missing.length} of ${this.items.length} marks of ${family} missing (${missing.join(', ')})`,
      ...counts,
      items: this.items,
      missing,
    };
  }
}
