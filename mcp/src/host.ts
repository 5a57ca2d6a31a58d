import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult, RequestInfo } from '@modelcontextprotocol/sdk/types.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage, isRecord } from '@persona-browser/service-kit';
import { SessionLeases, SESSION_LEASE_TTL_S } from './leases';
import type { RestTarget } from './rest';
import { Unreachable } from './rest';
import { toolError } from './results';
import type { ToolContext, ToolDef } from './tool';
import { ArgumentError } from './tool';

/** A session with no request for this long (none under way) ends (its leases are released). */
export const DEFAULT_IDLE_MS = 10 * 60_000;

export interface McpHostOptions {
  /** The server's name and version as the initialize answer gives them. */
  name: string;
  version: string;
  logger: Logger;
  /** The tools, looked up when a client lists or calls them. */
  tools: () => Promise<ToolDef[]>;
  /** The API a tool calls unless it picks its own (the waker's pick the persona named). */
  target: RestTarget;
  idleMs?: number;
  /** The ttl of the sessions' leases (s), renewed every third of it. */
  leaseTtlS?: number;
  /**
   * Tell `target` the host the MCP client reached (its request's `X-Forwarded-Host`, else its
   * `Host`), for the links the API makes: a persona's own MCP server, which calls its API over
   * loopback. The fleet's server calls each persona's own front door and leaves this off.
   */
  forwardHost?: boolean;
}

/** The first value of a header (a proxy may have sent a comma-separated list). */
function firstValue(v: string | string[] | undefined): string | null {
  const first = (Array.isArray(v) ? v[0] : v)?.split(',')[0]?.trim();
  return first ? first : null;
}

/** The host and scheme an MCP request reached, as its proxy or its client said them. */
export function originOf(info: RequestInfo | undefined): {
  host: string | null;
  proto: string | null;
} {
  const h = info?.headers ?? {};
  const host = firstValue(h['x-forwarded-host']) ?? firstValue(h.host) ?? info?.url?.host ?? null;
  return { host: host || null, proto: firstValue(h['x-forwarded-proto']) };
}

interface Session {
  transport: StreamableHTTPServerTransport;
  leases: SessionLeases;
  lastSeen: number;
  /** Calls (POST) not answered yet: a tool call under way. */
  inFlight: number;
}

/**
 * Streamable HTTP MCP over a persona's REST API: one SDK server and transport per session, each
 * session with the leases of the pages it created or leased, renewed while it lives and released
 * when it ends (the client's DELETE, or `idleMs` without a request). A tool that fails answers a
 * tool error with the API's message; the session stays.
 */
export class McpHost {
  private readonly sessions = new Map<string, Session>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly o: McpHostOptions) {
    const renewMs = ((o.leaseTtlS ?? SESSION_LEASE_TTL_S) * 1000) / 3;
    const idleMs = o.idleMs ?? DEFAULT_IDLE_MS;
    this.timer = setInterval(() => void this.tick(), Math.min(renewMs, idleMs / 2, 30_000));
    this.timer.unref();
  }

  /** How many sessions are open (tests, status). */
  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Serves one request at the MCP path; `body` is the parsed JSON body of a POST. */
  async handle(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const id = Array.isArray(header) ? header[0] : header;
    if (id !== undefined) {
      const s = this.sessions.get(id);
      if (!s) {
        reject(res, 404, 'Session not found (it ended or timed out): initialize a new one');
        return;
      }
      s.lastSeen = Date.now();
      // A call under way keeps the session alive; the client's open event stream (GET) does
      // not: an agent connected but silent for idleMs has left its pages.
      if (req.method === 'POST') {
        s.inFlight += 1;
        res.once('close', () => {
          s.inFlight -= 1;
          s.lastSeen = Date.now();
        });
      }
      // The client ends the session: its leases are given back before the answer says so.
      if (req.method === 'DELETE') await s.leases.releaseAll();
      await s.transport.handleRequest(req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      reject(res, 400, 'No mcp-session-id: the first request of a session is initialize');
      return;
    }
    await this.open().handleRequest(req, res, body);
  }

  private open(): StreamableHTTPServerTransport {
    const leases = new SessionLeases(this.o.leaseTtlS);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        this.sessions.set(sid, { transport, leases, lastSeen: Date.now(), inFlight: 0 });
        this.o.logger.info('mcp session opened', { session: sid });
      },
    });
    transport.onclose = () => {
      const sid = transport.sessionId;
      if (sid !== undefined && this.sessions.delete(sid)) {
        this.o.logger.info('mcp session closed', { session: sid, leases: leases.size });
      }
      void leases.releaseAll();
    };
    const server = new Server(
      { name: this.o.name, version: this.o.version },
      { capabilities: { tools: { listChanged: false } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: (await this.o.tools()).map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tools = await this.o.tools();
      const tool = tools.find((t) => t.name === request.params.name);
      if (!tool) return toolError(`Unknown tool '${request.params.name}'`);
      const token = request.params._meta?.progressToken;
      let step = 0;
      const origin = originOf(extra.requestInfo);
      const ctx: ToolContext = {
        target: this.o.forwardHost ? this.o.target.forwarding(origin) : this.o.target,
        origin,
        leases,
        signal: extra.signal,
        progress: async (message) => {
          if (token === undefined) return;
          step += 1;
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, message },
          });
        },
      };
      return this.run(tool, request.params.arguments ?? {}, ctx);
    });
    void server.connect(transport);
    return transport;
  }

  private async run(
    tool: ToolDef,
    args: Record<string, unknown>,
    ctx: ToolContext,
  ): Promise<CallToolResult> {
    try {
      return await tool.run(args, ctx);
    } catch (err) {
      if (err instanceof ArgumentError || err instanceof Unreachable) return toolError(err.message);
      this.o.logger.error('mcp tool failed', { tool: tool.name, error: errorMessage(err) });
      return toolError(`The tool failed: ${errorMessage(err)}`);
    }
  }

  private async tick(): Promise<void> {
    const now = Date.now();
    const idleMs = this.o.idleMs ?? DEFAULT_IDLE_MS;
    for (const [sid, s] of this.sessions) {
      if (s.inFlight === 0 && now - s.lastSeen > idleMs) {
        this.o.logger.info('mcp session idle: ended', { session: sid });
        await s.transport.close().catch(() => undefined);
      } else {
        await s.leases.renewAll();
      }
    }
  }

  /** Ends every session (their leases released): the service is stopping. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(
      [...this.sessions.values()].map((s) => s.transport.close().catch(() => undefined)),
    );
  }
}

function reject(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/** The parsed body, when it is a JSON-RPC message or a batch of them. */
export const jsonBody = (body: unknown): unknown =>
  isRecord(body) || Array.isArray(body) ? body : undefined;
