import express from 'express';
import type { Router } from 'express';
import type { Logger } from '@persona-browser/service-kit';
import type { Authenticator } from '../http/auth';
import type * as Mcp from '@persona-browser/mcp';
import type { McpHost, RestTarget, ToolDef } from '@persona-browser/mcp';
import { NotInitialized } from '../errors';

export const MCP_PATH = '/mcp';

export interface McpEndpointOptions {
  serviceKey: string | null;
  /** The worker's door: MCP needs the key or a `full` token of this persona. */
  auth: Authenticator;
  logger: Logger;
  version: string;
  /** The persona's name, in the server's name. */
  persona: string;
  /** Sessions' lease ttl (s) and idle end (ms). */
  sessions: { leaseTtlS: number; idleMs: number };
}

/** Where the worker's own API answers, from the address it listens on. */
export function loopbackUrl(host: string, port: number): string {
  const any = host === '' || host === '0.0.0.0' || host === '::';
  const h = any ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

/**
 * The persona's MCP server at `/mcp` (Streamable HTTP, the service key as bearer): the REST API
 * as tools, each call made to the worker's own port, so every rule of the API (leases, limits,
 * messages) holds for an agent as for any client. Plugin tools come from the OpenAPI document
 * the worker serves, read once: the plugin set is fixed at start-up.
 */
export class McpEndpoint {
  private url: string | null = null;
  private host: Promise<McpHost> | null = null;
  private tools: Promise<ToolDef[]> | null = null;

  constructor(private readonly o: McpEndpointOptions) {}

  /** The server listens: tools may call it now. */
  listening(url: string): void {
    this.url = url;
  }

  /**
   * The MCP server, loaded on the first request: its SDK and schemas hold 12 MB of heap that
   * a persona nobody drives over MCP does not need (npm run bench, memory).
   */
  private load(url: string): Promise<McpHost> {
    return (this.host ??= import('@persona-browser/mcp').then((mcp) => {
      const target = new mcp.RestTarget(url, this.o.serviceKey);
      return new mcp.McpHost({
        name: `persona-browser ${this.o.persona}`,
        version: this.o.version,
        logger: this.o.logger,
        target,
        leaseTtlS: this.o.sessions.leaseTtlS,
        idleMs: this.o.sessions.idleMs,
        // The API is called over loopback: ask-person's live_url must name the agent's address.
        forwardHost: true,
        tools: () => (this.tools ??= this.catalog(mcp, target)),
      });
    }));
  }

  private async catalog(mcp: typeof Mcp, target: RestTarget): Promise<ToolDef[]> {
    const doc = await target.call({ method: 'GET', path: '/openapi.json' });
    if (!doc.ok) {
      this.tools = null;
      throw new Error(`the OpenAPI document answered HTTP ${doc.status}`);
    }
    return [...mcp.CORE_TOOLS, ...mcp.pluginTools(doc.data)];
  }

  router(): Router {
    // Case-sensitive, as the path is classified (service-kit's `accessOf`): `/MCP` reached here
    // would be read as a public file and pass without a credential.
    const r = express.Router({ caseSensitive: true, strict: false });
    r.all(MCP_PATH, (req, res, next) => {
      // Needs the key or a `full` token of this persona; a refusal (thrown here) reaches the
      // error handler, which answers its status, `{detail}` and `Retry-After`.
      this.o.auth.check(req);
      if (!this.url) throw new NotInitialized('The MCP server starts once the worker listens');
      this.load(this.url)
        .then((host) => host.handle(req, res, req.body))
        .catch(next);
    });
    return r;
  }

  close(): Promise<void> {
    return this.host?.then((host) => host.close()) ?? Promise.resolve();
  }
}
