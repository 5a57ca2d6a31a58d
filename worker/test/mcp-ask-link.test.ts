import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ToolResult } from '@persona-browser/testkit/agent';
import { jsonOf } from '@persona-browser/testkit/agent';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { KEY, sleep, startWorker } from '@persona-browser/testkit/worker';

/**
 * MCP's `ask_person` hands the agent a link for the person before it waits: a progress
 * notification with `live_url`, naming the address the agent reached (the worker's MCP server
 * calls its API over loopback, and forwards the host). The SDK's own client is the agent; the
 * person is a plain HTTP client of the live view, holding nothing but the link.
 */
let w: RunningWorker;
type Body = Record<string, any>;

interface Agent {
  client: Client;
  /** A tool call; `progress` gets each progress message while it runs. */
  use(name: string, args: Body, progress?: (message: string) => void): Promise<ToolResult>;
}

async function connect(base: string, headers: Record<string, string> = {}): Promise<Agent> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${KEY}`, ...headers } },
  });
  const client = new Client({ name: 'link-agent', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    use: async (name, args, progress) =>
      (await client.callTool({ name, arguments: args }, undefined, {
        timeout: 120_000,
        ...(progress ? { onprogress: (p) => progress(p.message ?? '') } : {}),
      })) as ToolResult,
  };
}

/** POST /vnc/session with the link's token, as the viewer does with its fragment. */
async function personOpens(link: string): Promise<{ status: number; body: Body; cookie: string }> {
  const token = decodeURIComponent(new URL(link).hash.replace(/^#token=/, ''));
  const r = await fetch(`${w.url}/vnc/session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return { status: r.status, body: (await r.json()) as Body, cookie };
}

beforeAll(async () => {
  w = await startWorker();
  await w.waitInitialized();
});
afterAll(async () => {
  await w?.stop();
});

test('ask_person reports the link in a progress notification first, with the host the agent reached; the person uses it and hands back; the result says so, and the link is dead', async () => {
  // The agent reached the worker as `localhost`, not as the 127.0.0.1 its MCP server calls.
  const agent = await connect(`http://localhost:${w.port}`);
  try {
    expect(jsonOf(await agent.use('create_page', { page_id: 'ask' })).page_id).toBe('ask');
    const said: string[] = [];
    const asked = agent.use(
      'ask_person',
      { page_id: 'ask', message: 'Confirm the login', timeout: 60 },
      (m) => said.push(m),
    );
    let settled = false;
    void asked.then(() => (settled = true));
    let link: string | null = null;
    for (let i = 0; i < 100 && link === null; i++) {
      const m = said.map((s) => /(https?:\/\/\S+\/vnc\/#token=\S+)/.exec(s)).find(Boolean);
      if (m) link = m[1] ?? null;
      else await sleep(100);
    }
    expect(link).toMatch(new RegExp(`^http://localhost:${w.port}/vnc/#token=pbt_`));

    // The person, with the link alone: a session limited to the page, control granted at once.
    const viewer = await personOpens(link!);
    expect(viewer.status).toBe(200);
    expect(viewer.body).toMatchObject({ page_limit: 'ask', asked: 'Confirm the login' });
    const took = await w.call<Body>('POST', '/vnc/control', {
      auth: false,
      headers: { cookie: viewer.cookie },
      body: { page_id: 'ask' },
    });
    expect(took.status).toBe(200);
    expect(took.body).toMatchObject({ by_you: true, page_id: 'ask' });
    // The take-over did not end the ask (the worker would have ended it there and then): it
    // still stands on the page, and the agent still waits.
    const during = await w.call<Body>('GET', '/vnc/session', {
      auth: false,
      headers: { cookie: viewer.cookie },
    });
    expect(during.body).toMatchObject({ page_limit: 'ask', asked: 'Confirm the login' });
    expect(settled).toBe(false);
    await w.call('DELETE', '/vnc/control', { auth: false, headers: { cookie: viewer.cookie } });

    const result = await asked;
    expect(result.isError).toBeFalsy();
    expect(jsonOf(result)).toMatchObject({ handed_back: true, live_url: link });
    expect((await personOpens(link!)).status).toBe(401);
  } finally {
    await agent.client.close();
  }
});

test('wait false answers at once with live_url and expires_at; behind a proxy the link names its X-Forwarded-Host and -Proto', async () => {
  const agent = await connect(w.url, {
    'x-forwarded-host': 'persona.example:9443',
    'x-forwarded-proto': 'https',
  });
  try {
    jsonOf(await agent.use('create_page', { page_id: 'later' }));
    const started = Date.now();
    const r = await agent.use('ask_person', {
      page_id: 'later',
      message: 'Type the code',
      timeout: 30,
      wait: false,
    });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.isError).toBeFalsy();
    const body = jsonOf(r);
    expect(body.handed_back).toBe(false);
    expect(body.live_url).toMatch(/^https:\/\/persona\.example:9443\/vnc\/#token=pbt_/);
    expect(Date.parse(String(body.expires_at)) - Date.now()).toBeGreaterThan(25_000);
    // The ask stands: the link opens the live view on that page.
    const viewer = await personOpens(String(body.live_url));
    expect(viewer.body).toMatchObject({ page_limit: 'later', asked: 'Type the code' });
  } finally {
    await agent.client.close();
  }
});
