import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { KEY } from './worker';

/** A tool's answer as the MCP SDK's client gives it. */
export interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string; data?: string }>;
}

/** An agent: the MCP SDK's own client on a Streamable HTTP endpoint, with the service key. */
export interface Agent {
  client: Client;
  transport: StreamableHTTPClientTransport;
  use: (name: string, args?: Record<string, unknown>) => Promise<ToolResult>;
}

export async function connectAgent(mcpUrl: string, key: string = KEY): Promise<Agent> {
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    use: async (name, args = {}) =>
      (await client.callTool({ name, arguments: args })) as ToolResult,
  };
}

/** The text parts of a tool's answer, joined. */
export const textOf = (r: ToolResult): string => r.content.map((c) => c.text ?? '').join('\n');
/** The answer of a tool that answers JSON. */
export const jsonOf = (r: ToolResult): Record<string, any> =>
  JSON.parse(textOf(r)) as Record<string, any>;

/**
 * The person at a worker's live view (`baseUrl`: the worker's port or a front door; `key` its
 * service key): opens a
 * viewer session, takes control of `pageId` (retried until granted, as a person would click
 * again), and later hands it back.
 */
export async function personTakesOver(
  baseUrl: string,
  pageId: string,
  key: string = KEY,
): Promise<{ handBack(): Promise<void> }> {
  const viewer = await fetch(`${baseUrl}/vnc/session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  const cookie = (viewer.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  for (let i = 0; i < 50; i += 1) {
    const r = await fetch(`${baseUrl}/vnc/control`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ page_id: pageId }),
    });
    const body = (await r.json()) as Record<string, unknown>;
    if (r.status === 200 && body.by_you === true && body.page_id === pageId) {
      return {
        handBack: async () => {
          await fetch(`${baseUrl}/vnc/control`, { method: 'DELETE', headers: { cookie } });
        },
      };
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the person could not take page ${pageId} over`);
}
