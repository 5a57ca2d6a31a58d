/**
 * A family's site check run against one worker: the check plugin (`<family>/site-check`) on
 * a page of its own, its items found or missing, the failure bundle it left. Used by the
 * `check:sites` command and by the waker's schedule. The plugin only reads the site.
 */

/** The families with a site check, and their plugin's route. */
export const SITE_CHECK_ROUTES: Readonly<Record<string, string>> = {
  social: 'social/site-check',
  archive: 'archive/site-check',
  'bank-a': 'bank/bank-a/site-check',
  'bank-b': 'bank/bank-b/site-check',
};

/**
 * The page a run uses, created for it and closed after: one of its own, so that two runs at
 * once (the schedule's and a person's) never close each other's page.
 */
const runPage = (): string =>
  `site-check-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

export interface SiteCheckItem {
  name: string;
  kind: string;
  where: string;
  found: boolean;
}

export interface SiteCheckOutcome {
  family: string;
  /** Every item found. */
  ok: boolean;
  checked: number;
  /** The names of the items missing. */
  missing: string[];
  items: SiteCheckItem[];
  /** Why the check could not look (the worker down, the login wall); null when it looked. */
  error: string | null;
  /** The failure bundle of a failed check (GET /api/v1/bundles/{debug_id} on the worker). */
  debug_id: string | null;
  /** ISO 8601: when the run ended. */
  at: string;
  duration_ms: number;
}

export interface SiteCheckRun {
  /** The worker's address: its own port, or the persona's port on the waker's host. */
  url: string;
  key: string | null;
  family: string;
  /** The plugin's parameters (a profile handle, a URL to look up). */
  params?: Record<string, string | number>;
  timeoutMs?: number;
}

type Json = Record<string, unknown>;

const isJson = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function itemsOf(v: unknown): SiteCheckItem[] {
  if (!Array.isArray(v)) return [];
  return v.filter(isJson).map((i) => ({
    name: String(i.name),
    kind: String(i.kind),
    where: String(i.where),
    found: i.found === true,
  }));
}

async function call(
  run: SiteCheckRun,
  method: string,
  path: string,
  body: Json,
  signal: AbortSignal,
): Promise<{ status: number; body: Json }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (run.key) headers.authorization = `Bearer ${run.key}`;
  const res = await fetch(`${run.url.replace(/\/+$/, '')}${path}`, {
    method,
    headers,
    body: JSON.stringify(body),
    signal,
  });
  const parsed: unknown = await res.json().catch(() => ({}));
  return { status: res.status, body: isJson(parsed) ? parsed : {} };
}

/** Runs `family`'s check on the worker at `run.url`; never throws: a failure is its outcome. */
export async function runSiteCheck(run: SiteCheckRun): Promise<SiteCheckOutcome> {
  const started = Date.now();
  const done = (o: Omit<SiteCheckOutcome, 'family' | 'at' | 'duration_ms'>): SiteCheckOutcome => ({
    family: run.family,
    ...o,
    at: new Date().toISOString(),
    duration_ms: Date.now() - started,
  });
  const fail = (error: string): SiteCheckOutcome =>
    done({ ok: false, checked: 0, missing: [], items: [], error, debug_id: null });
  const route = SITE_CHECK_ROUTES[run.family];
  if (route === undefined) {
    return fail(
      `unknown family ${run.family}: one of ${Object.keys(SITE_CHECK_ROUTES).join(', ')}`,
    );
  }
  const signal = AbortSignal.timeout(run.timeoutMs ?? 150_000);
  const page = runPage();
  try {
    await call(run, 'POST', '/api/v1/ops/create-page', { page_id: page }, signal);
    const r = await call(run, 'POST', `/api/v1/${page}/plugin/${route}`, run.params ?? {}, signal);
    const items = itemsOf(r.body.items);
    const missing = items.filter((i) => !i.found).map((i) => i.name);
    const debug_id = typeof r.body.debug_id === 'string' ? r.body.debug_id : null;
    if (r.body.success === true || (r.body.success === false && items.length > 0)) {
      return done({
        ok: missing.length === 0,
        checked: items.length,
        missing,
        items,
        error: null,
        debug_id,
      });
    }
    const why = typeof r.body.error === 'string' ? r.body.error : `HTTP ${r.status}`;
    return done({ ok: false, checked: 0, missing: [], items: [], error: why, debug_id });
  } catch (err) {
    return fail(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
  } finally {
    // The page goes whatever happened (its bundle is already written).
    const closing = AbortSignal.timeout(10_000);
    await call(run, 'POST', `/api/v1/ops/${page}/destroy-page`, {}, closing).catch(() => undefined);
  }
}

/** The outcome as a table a person reads: one row per item, then a verdict line. */
export function formatOutcome(o: SiteCheckOutcome): string {
  const rows = o.items.map((i) => [i.found ? 'found' : 'MISSING', i.kind, i.name, i.where]);
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length), 0));
  const lines = rows.map((r) =>
    r.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]!) : cell)).join('  '),
  );
  if (o.error !== null) lines.push(`${o.family}: the check could not run: ${o.error}`);
  else if (o.ok) lines.push(`${o.family}: all ${o.checked} found`);
  else
    lines.push(`${o.family}: ${o.missing.length} of ${o.checked} missing: ${o.missing.join(', ')}`);
  if (o.debug_id !== null)
    lines.push(`failure bundle: ${o.debug_id} (GET /api/v1/bundles/${o.debug_id})`);
  return lines.join('\n');
}
