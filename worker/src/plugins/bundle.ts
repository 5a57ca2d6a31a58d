import type { SecretValues } from '@persona-browser/service-kit';
import { errorMessage, redact } from '@persona-browser/service-kit';
import { Call } from '../browser/call';
import type { ManagedPage } from '../browser/managed-page';
import { capturePng } from '../browser/page-actions';
import { readPageHtml } from '../browser/page-html';
import type { CaptureRegistry } from '../capture/registry';
import { ApiError, Timeout } from '../errors';
import { sleep } from '../util';
import type { BundleFile, BundleMeta, BundleStore } from './bundle-store';

/** How long reading the page (screenshot and HTML, side by side) may take: it may be hung. */
export const BUNDLE_READ_MS = 2_500;
/** The newest captured lines a bundle keeps, of each list. */
export const BUNDLE_NETWORK_LINES = 100;
/** How long a bundle waits for responses the page received to get their lines (see settled). */
const BUNDLE_SETTLE_MS = 1_000;

/** One line the call logged, as its log.jsonl keeps it. */
interface TrailLine {
  time: string;
  level: 'info' | 'warn' | 'error';
  message: string;
  [field: string]: unknown;
}

/** The log lines of one plugin call (its own and the host's), kept for its failure bundle. */
export class CallTrail {
  readonly lines: TrailLine[] = [];
  /** Lines past this many are counted, not kept: a plugin logging in a loop. */
  private static readonly MAX = 1_000;
  dropped = 0;

  add(level: TrailLine['level'], message: string, fields: object = {}): void {
    if (this.lines.length >= CallTrail.MAX) {
      this.dropped += 1;
      return;
    }
    this.lines.push({ ...fields, time: new Date().toISOString(), level, message });
  }
}

export interface FailedCall {
  plugin: string;
  /** The call's recording, named in meta.json. */
  recording?: string;
  page: ManagedPage;
  /** Epoch ms when the call started. */
  startedAt: number;
  err: unknown;
  trail: CallTrail;
}

export interface BundleDeps {
  store: BundleStore;
  captures: CaptureRegistry;
  secrets: SecretValues;
}

const failed = (what: PromiseSettledResult<unknown>): string =>
  what.status === 'rejected' ? errorMessage(what.reason) : '';

/** Does `text` hold a secret (any of its forms)? */
const holdsSecret = (secrets: SecretValues, text: string): boolean => secrets.redact(text) !== text;

/**
 * Why pixels of a page must not be kept, or null. Pixels cannot be redacted: a page whose HTML
 * holds a secret, or whose HTML could not be read to tell, keeps none.
 */
export function pixelsWithheld(secrets: SecretValues, pageText: string | null): string | null {
  if (pageText === null) return 'withheld: the page HTML could not be checked for secrets';
  if (holdsSecret(secrets, pageText)) return 'withheld: the page holds a secret value';
  return null;
}

/** The page's HTML (null: it did not answer within BUNDLE_READ_MS), read in our own world. */
export async function pageTextOf(mp: ManagedPage): Promise<string | null> {
  const call = new Call(BUNDLE_READ_MS, () => new Timeout('Reading the page took too long'));
  try {
    const parsed = (await readPageHtml(mp, call)).content.parse();
    return typeof parsed === 'string' ? parsed : '';
  } catch {
    return null;
  } finally {
    call.end();
  }
}

/**
 * Writes what a failed plugin call left: a screenshot, the page's HTML (read in our isolated
 * world), the newest network lines, the call's log lines and what the call was. Every text
 * goes through the secret redaction the log and the capture use. Bounded in time: a page that
 * does not answer within BUNDLE_READ_MS leaves its files out, and meta.json says why.
 */
export async function takeBundle(deps: BundleDeps, f: FailedCall): Promise<string> {
  const { secrets } = deps;
  const { id, time } = deps.store.nextId();
  const mp = f.page;
  const clean = (t: string): string => secrets.redact(t);
  const missing: Record<string, string> = {};

  const call = new Call(BUNDLE_READ_MS, () => new Timeout('Reading the page took too long'));
  const [shot, html] = await Promise.allSettled([
    capturePng(mp, call, false),
    readPageHtml(mp, call),
  ]);
  call.end();

  const files: Partial<Record<BundleFile, string | Buffer>> = {};
  let pageText: string | null = null;
  if (html.status === 'fulfilled') {
    const parsed = html.value.content.parse();
    pageText = typeof parsed === 'string' ? parsed : '';
    files['page.html'] = clean(pageText);
  } else missing['page.html'] = clean(failed(html));
  if (shot.status === 'rejected') missing['screenshot.png'] = clean(failed(shot));
  else {
    const why = pixelsWithheld(secrets, pageText);
    if (why) missing['screenshot.png'] = why;
    else files['screenshot.png'] = Buffer.from(shot.value, 'base64');
  }

  const capture = deps.captures.get(mp.id);
  if (capture) {
    // The call's last responses are what a bundle is read for: a moment for them to land.
    const settleBy = performance.now() + BUNDLE_SETTLE_MS;
    while (capture.unsettled() > 0 && performance.now() < settleBy) await sleep(50);
    const lines = await capture.query({ since: 0, includeBody: false });
    const network = {
      http: lines.http.slice(-BUNDLE_NETWORK_LINES),
      websocket: lines.websocket.slice(-BUNDLE_NETWORK_LINES),
    };
    files['network.json'] = clean(JSON.stringify(secrets.redactAll(network), null, 2));
  } else missing['network.json'] = 'the page has no network capture';

  // The logger's own redaction: secret values, secret-looking fields and URL parameters.
  const logLines = f.trail.lines.map((l) => JSON.stringify(redact(l, secrets.list())));
  if (f.trail.dropped > 0) logLines.push(JSON.stringify({ dropped_lines: f.trail.dropped }));
  files['log.jsonl'] = clean(logLines.join('\n') + '\n');

  const err = f.err;
  const meta: BundleMeta = {
    debug_id: id,
    plugin: f.plugin,
    page_id: mp.id,
    url: clean(mp.url),
    time: time.toISOString(),
    duration_ms: time.getTime() - f.startedAt,
    error: {
      status: err instanceof ApiError ? err.status : null,
      message: clean(errorMessage(err)),
    },
    missing,
    ...(f.recording ? { recording: f.recording } : {}),
  };
  files['meta.json'] = clean(JSON.stringify(meta, null, 2));
  await deps.store.write(id, files);
  return id;
}
