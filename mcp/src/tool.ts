import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SessionLeases } from './leases';
import type { Json, RestTarget } from './rest';
import { leaseHeader } from './rest';

/**
 * What a tool is, and what every tool's run uses: its context, its arguments' checks, and a call
 * on a page with the session's lease.
 */

/** What a tool's run gets: the persona's API, the session's leases, a way to say it still works. */
export interface ToolContext {
  target: RestTarget;
  /** The host and scheme the MCP client reached (`X-Forwarded-Host`, else `Host`), when known. */
  origin: { host: string | null; proto: string | null };
  leases: SessionLeases;
  /** Tells the client the call is alive (a long wait); a no-op when it gave no progress token. */
  progress: (message: string) => Promise<void>;
  signal: AbortSignal;
}

export interface ToolDef {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Json; required?: string[] };
  run(args: Json, ctx: ToolContext): Promise<CallToolResult>;
}

/** A tool's arguments were not what its schema says: answered as a tool error. */
export class ArgumentError extends Error {}

export function stringArg(args: Json, name: string): string {
  const v = args[name];
  if (typeof v !== 'string' || v === '')
    throw new ArgumentError(`'${name}' is required (a string)`);
  return v;
}
export const optionalString = (args: Json, name: string): string | undefined => {
  const v = args[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new ArgumentError(`'${name}' must be a string`);
  return v;
};

/**
 * The parameters of a call on a page: its id in the path, its query if any, and the session's
 * lease token (`X-Lease`) when it holds one.
 */
export function onPage<Q extends object = never>(
  ctx: ToolContext,
  pageId: string,
  query?: Q,
): { params: { path: { page_id: string }; header: { 'X-Lease'?: string }; query?: Q } } {
  return {
    params: {
      path: { page_id: pageId },
      header: leaseHeader(ctx.leases.token(ctx.target, pageId)),
      ...(query === undefined ? {} : { query }),
    },
  };
}
