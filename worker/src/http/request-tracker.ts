import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestHandler } from 'express';
import type { Credential } from '@persona-browser/service-kit';
import { credentialName } from '@persona-browser/service-kit';
import { errorMessage } from '../errors';
import type { RequestLog, RequestRow } from '../log/request-log';
import { onResponseEnd } from './response-end';

const API = '/api/v1/';
const SYSTEM = '/api/v1/system/';

/** `kind` and `name` of the request log (docs/api.md) for an API path. */
export function classify(path: string): { kind: string; name: string } {
  // Express matches routes case-insensitively: /API/V1/OPS/… is the same call as /api/v1/ops/….
  const segments = path.slice(API.length).toLowerCase().split('/').filter(Boolean);
  const [first = '', second] = segments;
  if (first === 'ops' || first === 'primitive') return { kind: first, name: segments.at(-1) ?? '' };
  if (second === 'plugin' && segments.length > 2) {
    return { kind: 'plugin', name: segments.slice(2).join('/') };
  }
  return { kind: first, name: '' };
}

export interface Activity {
  in_flight: number;
  idle_seconds: number | null;
}

export interface TrackerOptions {
  /**
   * Who a request says it is, its credential's signature, expiry and revocation checked (never
   * its route: a refused call is still logged as made by that credential); null: none taken.
   * The Authenticator's `identify`.
   */
  identify?: (req: IncomingMessage) => Credential | null;
  onLogError?: (err: unknown) => void;
}

/** The request log's `credential` and `label` of a call: names only, never a secret. */
function who(c: Credential | null): { credential: string; label: string } {
  return {
    credential: credentialName(c),
    label: c?.kind === 'token' ? (c.claims.label ?? '') : '',
  };
}

/** A request between its start and its end, and its start row while that waits to be written. */
interface OpenRequest {
  row: RequestRow;
  started: number;
  startRow: NodeJS.Immediate | null;
}

/**
 * Writes the start and end rows of every client request outside /system/, each naming the
 * credential that made it, and keeps the activity numbers that ping reports. The start row is
 * written at the request's first pause (while the browser works, say) rather than before its
 * work begins, so the disk never holds the call up; a request answered without a pause writes
 * it just before its reply, so a client always finds it in the log. The end row is written as
 * soon as the response has been handed to the socket, even if the client already hung up;
 * requests still open at shutdown get an end row without status.
 */
export class RequestTracker {
  private readonly open = new Map<string, OpenRequest>();
  private lastFinished = Date.now();

  private logFailing = false;
  private readonly identify: (req: IncomingMessage) => Credential | null;
  private readonly onLogError: (err: unknown) => void;

  constructor(
    private readonly log: RequestLog,
    o: TrackerOptions = {},
  ) {
    this.identify = o.identify ?? (() => null);
    this.onLogError =
      o.onLogError ??
      ((err) => process.stderr.write(`request log not written: ${errorMessage(err)}\n`));
  }

  activity(): Activity {
    return {
      in_flight: this.open.size,
      idle_seconds: this.open.size ? null : Math.floor((Date.now() - this.lastFinished) / 1000),
    };
  }

  middleware(): RequestHandler {
    return (req, res, next) => {
      const path = req.path;
      const lower = path.toLowerCase();
      if (!lower.startsWith(API) || lower.startsWith(SYSTEM)) {
        next();
        return;
      }
      // 8 random hex digits: a random UUID starts with 32 random bits, drawn from a pool node
      // fills in batches rather than a call into the system's random source for every request.
      const row: RequestRow = {
        id: randomUUID().slice(0, 8),
        method: req.method,
        path,
        ...classify(path),
        // Read once, at the start, so both rows name the same caller.
        ...who(this.identify(req)),
      };
      const entry: OpenRequest = { row, started: performance.now(), startRow: null };
      entry.startRow = setImmediate(() => this.writeStart(entry));
      this.open.set(row.id, entry);
      onResponseEnd(
        res,
        () => this.writeStart(entry),
        () => this.finish(row.id, res.statusCode),
      );
      next();
    };
  }

  /** End rows with an empty status for requests the worker will not finish; the log is closed. */
  abandonAll(): void {
    for (const id of [...this.open.keys()]) this.finish(id, null);
    this.write(() => this.log.close());
  }

  private finish(id: string, status: number | null): void {
    const entry = this.open.get(id);
    if (!entry) return;
    this.open.delete(id);
    this.lastFinished = Date.now();
    const ms = performance.now() - entry.started;
    this.writeStart(entry);
    this.write(() => this.log.end(entry.row, status, ms));
  }

  /** The request's start row, unless it is written already. */
  private writeStart(entry: OpenRequest): void {
    if (entry.startRow === null) return;
    clearImmediate(entry.startRow);
    entry.startRow = null;
    this.write(() => this.log.start(entry.row));
  }

  /** A log that cannot be written (disk full…) never fails the request; reported once a spell. */
  private write(append: () => void): void {
    try {
      append();
      this.logFailing = false;
    } catch (err) {
      if (!this.logFailing) this.onLogError(err);
      this.logFailing = true;
    }
  }
}
