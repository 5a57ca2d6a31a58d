import type { Agent } from '@persona-browser/testkit/agent';
import { connectAgent, jsonOf, personTakesOver, textOf } from '@persona-browser/testkit/agent';
import type { Fixture } from '@persona-browser/testkit/fixture';
import { startFixture } from '@persona-browser/testkit/fixture';
import { Observer } from '@persona-browser/testkit/observer';
import { manifest, writePluginTree } from '@persona-browser/testkit/plugin-tree';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { sleep, startWorker } from '@persona-browser/testkit/worker';

/**
 * The persona's MCP server, driven by the MCP SDK's own client over Streamable HTTP: what the
 * page saw (trusted clicks, typed text) is read by an unfiltered observer on the browser's
 * DevTools port, and the leases by the REST API, never from the MCP answers alone.
 */
const LEASE_S = 3;
const IDLE_S = 8;
let w: RunningWorker;
let site: Fixture;
let eye: Observer;
type Body = Record<string, any>;

const root = writePluginTree([
  {
    name: 'demo/fill',
    manifest: manifest(
      [
        { name: 'url', type: 'url', required: true },
        { name: 'text', type: 'text', required: true },
      ],
      { response: { typed: 'string' } },
    ),
    js: `module.exports.default = sdk.definePlugin({
      async run(ctx, p) {
        await ctx.page.goto(p.url);
        await ctx.gestures.click('#name');
        await ctx.gestures.type(p.text);
        return { typed: await ctx.page.value('#name') };
      },
    });`,
  },
]);

beforeAll(async () => {
  site = await startFixture();
  w = await startWorker({
    env: {
      PLUGINS_DIR: root,
      DEVTOOLS_PORT: '0',
      // Short enough to see a lease outlive its ttl, and an idle session end, in a test.
      MCP_LEASE_SECONDS: String(LEASE_S),
      MCP_IDLE_SECONDS: String(IDLE_S),
    },
  });
  await w.waitInitialized();
  eye = await Observer.attach(w);
});
afterAll(async () => {
  await eye?.detach();
  await w?.stop();
  await site?.close();
});

const connect = (key?: string): Promise<Agent> => connectAgent(`${w.url}/mcp`, key);
const text = textOf;
const json = jsonOf;

test('a client without the key is refused before any session opens', async () => {
  await expect(connect('wrong')).rejects.toThrow(/401|Invalid API key/);
});

test('the tool list has the API tools and each installed plugin, its parameters as the input schema', async () => {
  const { client } = await connect();
  try {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const core of [
      'create_page',
      'navigate',
      'snapshot',
      'click',
      'type',
      'screenshot',
      'page_text',
      'network',
      'ask_person',
    ])
      expect(names).toContain(core);
    const fill = tools.find((t) => t.name === 'plugin_demo_fill');
    expect(fill?.inputSchema.required).toEqual(expect.arrayContaining(['page_id', 'url', 'text']));
    expect(Object.keys(fill?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['page_id', 'url', 'text']),
    );
  } finally {
    await client.close();
  }
});

test('a snapshot gives references; a click by reference reaches the page as a trusted click on that element, typing by reference fills it', async () => {
  const { client, transport, use } = await connect();
  try {
    const made = json(await use('create_page', { page_id: 'agent' }));
    expect(made.page_id).toBe('agent');
    // The session leased it: a client without the token meets the lease.
    const other = await w.call('POST', '/api/v1/ops/agent/navigate', { body: { url: site.url } });
    expect(other.status).toBe(423);

    expect(
      (await use('navigate', { page_id: 'agent', url: `${site.url}/input?agent` })).isError,
    ).toBeFalsy();
    const snap = text(await use('snapshot', { page_id: 'agent' }));
    expect(snap).toContain('Input lab');
    const button = /- button "Button" \[ref=(n\d+)\]/.exec(snap);
    const field = /- textbox[^\n]*\[ref=(n\d+)\]/.exec(snap);
    expect(button).not.toBeNull();
    expect(field).not.toBeNull();

    const clicked = await use('click', { page_id: 'agent', ref: button?.[1] });
    expect(clicked.isError).toBeFalsy();
    const clicks = await eye.read<Body[]>('/input?agent', 'window.__log.clicks');
    expect(clicks).toHaveLength(1);
    expect(clicks[0]).toMatchObject({ id: 'btn', trusted: true });

    const typed = await use('type', {
      page_id: 'agent',
      ref: field?.[1],
      text: 'hello agent',
    });
    expect(typed.isError).toBeFalsy();
    expect(await eye.read<string>('/input?agent', "document.querySelector('#name').value")).toBe(
      'hello agent',
    );
    // The snapshot shows the value the person-like typing left.
    expect(text(await use('snapshot', { page_id: 'agent' }))).toContain('value="hello agent"');

    // An element below the fold is wheeled into view first, then clicked.
    const below = /- button "Below" \[ref=(n\d+)\]/.exec(snap);
    expect((await use('click', { page_id: 'agent', ref: below?.[1] })).isError).toBeFalsy();
    const last = (await eye.read<Body[]>('/input?agent', 'window.__log.clicks')).at(-1);
    expect(last).toMatchObject({ id: 'below', trusted: true });
    expect((await eye.read<Body[]>('/input?agent', 'window.__log.wheels')).length).toBeGreaterThan(
      0,
    );

    const shot = await use('screenshot', { page_id: 'agent' });
    const image = shot.content.find((c) => c.type === 'image');
    expect(
      Buffer.from(image?.data ?? '', 'base64')
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    expect(text(await use('page_text', { page_id: 'agent' }))).toContain('Input lab');

    // The session ends: its lease goes with it, and anyone may lease the page.
    await transport.terminateSession();
    const free = await w.call<Body>('POST', '/api/v1/ops/agent/lease', { body: { ttl: 5 } });
    expect(free.status).toBe(200);
    await w.call('DELETE', '/api/v1/ops/agent/lease', {
      headers: { 'x-lease': free.body.lease_token },
    });
  } finally {
    await client.close();
    await w.call('POST', '/api/v1/ops/agent/destroy-page');
  }
});

test('errors are tool errors with the API messages; the session stays usable', async () => {
  const { client, use } = await connect();
  try {
    const missing = await use('navigate', { page_id: 'nope', url: site.url });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/Page not found/);
    const noArg = await use('click', { page_id: 'nope' });
    expect(noArg.isError).toBe(true);
    expect(text(noArg)).toMatch(/'ref' \(from snapshot\) or 'selector' is required/);
    await w.call('POST', '/api/v1/ops/create-page', { body: { page_id: 'held' } });
    const lease = await w.call<Body>('POST', '/api/v1/ops/held/lease', { body: { ttl: 30 } });
    const locked = await use('navigate', { page_id: 'held', url: site.url });
    expect(locked.isError).toBe(true);
    expect(text(locked)).toMatch(/HTTP 423/);
    await w.call('DELETE', '/api/v1/ops/held/lease', {
      headers: { 'x-lease': lease.body.lease_token },
    });
    await w.call('POST', '/api/v1/ops/held/destroy-page');
    // Still the same session.
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(10);
  } finally {
    await client.close();
  }
});

test('a plugin runs as a tool, on the page its session leased', async () => {
  const { client, transport, use } = await connect();
  try {
    json(await use('create_page', { page_id: 'plug' }));
    const r = await use('plugin_demo_fill', {
      page_id: 'plug',
      url: `${site.url}/input`,
      text: 'by plugin',
    });
    expect(r.isError).toBeFalsy();
    expect(json(r).typed).toBe('by plugin');
    expect(await eye.read<string>('/input', "document.querySelector('#name').value")).toBe(
      'by plugin',
    );
    const bad = await use('plugin_demo_fill', { page_id: 'plug', text: 'x' });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/url/);
  } finally {
    // The session ends first: its lease on the page goes with it, so the page is destroyed
    // (an /input page left open would be the one a later test's observer reads).
    await transport.terminateSession();
    await client.close();
    await w.call('POST', '/api/v1/ops/plug/destroy-page');
  }
});

test('ask_person waits for the person to take the page over in the live view and hand it back', async () => {
  const { client, use } = await connect();
  try {
    json(await use('create_page', { page_id: 'ask' }));
    const asked = use('ask_person', {
      page_id: 'ask',
      message: 'Confirm the login',
      timeout: 60,
    });
    // The person opens the live view and takes the page: granted at once under the agent's lease.
    const person = await personTakesOver(w.url, 'ask');
    let settled = false;
    void asked.then(() => (settled = true));
    // Had the take-over ended the ask (the worker would have answered it there and then), that
    // answer would have reached the agent before the answer to a call it makes after.
    expect(textOf(await use('list_pages'))).toContain('ask');
    expect(settled).toBe(false);
    await person.handBack();
    const r = await asked;
    expect(r.isError).toBeFalsy();
    expect(json(r).handed_back).toBe(true);
    // The agent's lease outlived the person's turn.
    const other = await w.call('POST', '/api/v1/ops/ask/navigate', { body: { url: site.url } });
    expect(other.status).toBe(423);
  } finally {
    await client.close();
    await w.call('POST', '/api/v1/ops/ask/destroy-page');
  }
});

test('a session renews its leases past their ttl while it lives; idle, it ends and they are released', async () => {
  const { client, use } = await connect();
  try {
    json(await use('create_page', { page_id: 'kept' }));
    // Time itself is tested: past the lease's ttl.
    await sleep((LEASE_S + 2) * 1000);
    // Past the ttl, no call since: the session renewed it.
    const held = await w.call('POST', '/api/v1/ops/kept/lease', { body: { ttl: 5 } });
    expect(held.status).toBe(423);
    // No request for IDLE_S: the session ends, and its lease with it.
    let free = held;
    for (let i = 0; i < 40 && free.status !== 200; i += 1) {
      await sleep(500);
      free = await w.call<Body>('POST', '/api/v1/ops/kept/lease', { body: { ttl: 5 } });
    }
    expect(free.status).toBe(200);
    await expect(client.listTools()).rejects.toThrow(/Session not found/);
  } finally {
    await client.close().catch(() => undefined);
    await w.call('POST', '/api/v1/ops/kept/destroy-page');
  }
});
