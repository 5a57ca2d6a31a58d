import { redactTree } from './redact-tree';

/** Shorter values would hide ordinary text (a year, a PIN-sized number in every page). */
export const MIN_SECRET_LENGTH = 4;
/** Values a plugin learned during calls (one-time codes, QR contents) are kept this many at most. */
const MAX_LEARNED = 256;

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** How a value can show up in a URL, a form body, JSON or HTML besides itself. */
function formsOf(value: string): string[] {
  const uri = encodeURIComponent(value);
  return [
    value,
    uri,
    uri.replace(/%20/g, '+'),
    JSON.stringify(value).slice(1, -1),
    value.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c),
  ];
}

/**
 * The values nobody may read back from this worker: the service key, vision keys, the proxy
 * password, the plugin families' secrets, and what plugins conceal while they run. The logger,
 * the network capture and plugin error messages replace each (and its URL-encoded, JSON- and
 * HTML-escaped forms) with `[redacted]`.
 */
export class SecretValues {
  private readonly fixed: string[];
  private learned: string[] = [];
  private forms: string[] = [];

  constructor(values: Array<string | null | undefined>) {
    this.fixed = values.filter((v): v is string => Boolean(v && v.length >= MIN_SECRET_LENGTH));
    this.rebuild();
  }

  /** Hides one more value from now on (ignored when shorter than MIN_SECRET_LENGTH). */
  add(value: string): void {
    if (value.length < MIN_SECRET_LENGTH) return;
    if (this.fixed.includes(value) || this.learned.includes(value)) return;
    this.learned.push(value);
    if (this.learned.length > MAX_LEARNED) this.learned.shift();
    this.rebuild();
  }

  /** Every form of every value, longest first. */
  list(): readonly string[] {
    return this.forms;
  }

  redact(text: string): string {
    let out = text;
    for (const f of this.forms) if (out.includes(f)) out = out.split(f).join('[redacted]');
    return out;
  }

  /**
   * Every string inside `value` (arrays and objects walked, at any depth) redacted; the rest as
   * is. A cycle, or nesting past redact-tree's MAX_DEPTH, is replaced, never passed through.
   */
  redactAll(value: unknown): unknown {
    return redactTree(value, { text: (text) => this.redact(text) });
  }

  private rebuild(): void {
    const all = new Set<string>();
    for (const v of [...this.fixed, ...this.learned])
      for (const f of formsOf(v)) if (f.length >= MIN_SECRET_LENGTH) all.add(f);
    // A longer value that holds a shorter one is replaced whole.
    this.forms = [...all].sort((a, b) => b.length - a.length);
  }
}
