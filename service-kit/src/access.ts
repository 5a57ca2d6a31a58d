/**
 * What a request to a persona's port needs before it may be served, read from its method and
 * path alone: the one classification that the worker's checks and the waker's front door share,
 * so the door never wakes a persona for a request the worker would refuse.
 *
 *   status  open to anyone; while the persona sleeps the waker answers it itself
 *   static  open to anyone (panel, viewer, API docs pages); never wakes a sleeping persona
 *   read    the key, or a token of scope `read` or `full`
 *   live    the key, or a token of scope `live` or `full`; a live-view session cookie stands in
 *   full    the key, or a token of scope `full`
 *   key     the service key alone (what reaches beyond the persona: the fleet's update, its metrics)
 */
export type Access = 'status' | 'static' | 'read' | 'live' | 'full' | 'key';

/** What a scoped token may open besides the public routes. */
export const TOKEN_SCOPES = ['full', 'read', 'live'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export interface AccessNeed {
  access: Access;
  /** The page the request addresses (a page-limited token must name this one), else null. */
  pageId: string | null;
  /** A live-view session cookie may stand in for the bearer credential (`/vnc/…`). */
  cookie: boolean;
}

/** Whether a token of `scope` opens a route that needs `access` (public ones need nothing). */
export function scopeOpens(scope: TokenScope, access: Access): boolean {
  if (access === 'status' || access === 'static') return true;
  if (access === 'key') return false;
  return scope === 'full' || scope === access;
}

/** The reading routes a `read` token opens: each names its page. */
const READ_ROUTES: ReadonlyArray<readonly [method: string, action: string]> = [
  ['POST', 'extract-content'],
  ['GET', 'screenshot'],
  ['GET', 'network'],
  ['GET', 'snapshot'],
];

const STATUS_PATHS = new Set([
  '/api/v1/system/ping',
  '/api/v1/system/status',
  '/api/v1/system/status/pages',
  '/api/v1/plugins',
  '/openapi.json',
  '/api/v1/openapi.json',
]);

/** Routes of the service key alone: they act on, or read, the whole fleet. */
const KEY_PATHS = new Set([
  '/api/v1/system/update',
  '/api/v1/system/metrics',
  // The waker's push of revoked tokens: a token must not lift its own revocation.
  '/api/v1/system/revoked-tokens',
]);

/** The live view's routes that need a credential (the rest of `/vnc/` is its page and scripts). */
const LIVE_PATHS = new Set(['/vnc/session', '/vnc/control', '/vnc/websockify']);

/** What a route of the service key alone needs (the waker's and the supervisor's own API). */
export const KEY_ONLY: AccessNeed = { access: 'key', pageId: null, cookie: false };

const need = (access: Access, pageId: string | null = null, cookie = false): AccessNeed => ({
  access,
  pageId,
  cookie,
});

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The path of a request URL: no query, no trailing slash (but `/` itself). */
export function pathOf(url: string): string {
  const p = url.split('?')[0]?.split('#')[0] ?? '/';
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p || '/';
}

/** What a request of `method` to `url` (path and query) needs; see `Access`. */
export function accessOf(method: string, url: string): AccessNeed {
  const m = method.toUpperCase();
  const reads = m === 'GET' || m === 'HEAD';
  const raw = pathOf(url);
  // Express matches routes in any case (`/API/V1/SYSTEM/UPDATE` is the update route): the
  // classification must too, or such a spelling would pass for a public file. Page ids keep
  // their case.
  const path = raw.toLowerCase();
  if (STATUS_PATHS.has(path) && reads) return need('status');
  if (/^\/api\/v1\/plugins\/.+\/docs$/.test(path) && reads) return need('status');
  if (KEY_PATHS.has(path)) return need('key');
  if (LIVE_PATHS.has(path)) return need('live', null, true);
  const seg = path.split('/').slice(1);
  const rawSeg = raw.split('/').slice(1);
  // /api/v1/ops/{page}/{action}, /api/v1/primitive/{page}/{action}
  if (seg[0] === 'api' && seg[1] === 'v1' && (seg[2] === 'ops' || seg[2] === 'primitive')) {
    const page = seg.length >= 5 && rawSeg[3] !== undefined ? decoded(rawSeg[3]) : null;
    const action = seg[4] ?? '';
    const reading = seg[2] === 'ops' && READ_ROUTES.some(([rm, a]) => a === action && rm === m);
    return need(reading ? 'read' : 'full', page);
  }
  // /api/v1/{page}/plugin/{path…}
  if (seg[0] === 'api' && seg[1] === 'v1' && seg[3] === 'plugin' && rawSeg[2] !== undefined) {
    return need('full', decoded(rawSeg[2]));
  }
  if (seg[0] === 'api' || seg[0] === 'mcp' || seg[0] === 'json' || seg[0] === 'devtools')
    return need('full');
  if (path === '/metrics') return need('full');
  // The panel, the viewer and the API's pages: files anyone may load, which hold nothing.
  if (reads) return need('static');
  return need('full');
}
