import { manifest, writePluginTree } from '@persona-browser/testkit/plugin-tree';
import type { RunningWorker } from '@persona-browser/testkit/worker';
import { startWorker } from '@persona-browser/testkit/worker';

/**
 * Discovery at start: a tree of good and broken plugins, what the list, the docs and the
 * OpenAPI document say of them, and what the log says of the broken ones.
 */
const OK_JS = 'module.exports.default = { async run() { return { done: true } } };';
const TEXT = { name: 'word', type: 'text' };

const root = writePluginTree(
  [
    {
      name: 'demo/echo_back',
      manifest: manifest(
        [
          { name: 'word', type: 'text', required: true, placeholder: 'a word', help_text: 'said' },
          { name: 'level', type: 'number', min: 0, max: 1, default: 0.5, label: 'Level' },
          { name: 'mode', type: 'select', options: ['a', 'b'], default: 'a' },
          { name: 'loud', type: 'checkbox' },
          { name: 'site', type: 'url' },
          { name: 'notes', type: 'textarea' },
        ],
        { methods: ['POST', 'GET'], response: { done: 'boolean' } },
      ),
      js: OK_JS,
      readme: '# echo_back\nEchoes.\n',
    },
    { name: 'demo/quiet', manifest: manifest([TEXT]), js: OK_JS },
    { name: 'lonely/solo', manifest: manifest([]), js: OK_JS },
    { name: 'broken/not_json', manifest: '{ "description": ', js: OK_JS },
    { name: 'broken/bad_type', manifest: manifest([{ name: 'x', type: 'colour' }]), js: OK_JS },
    {
      name: 'broken/bad_default',
      manifest: manifest([{ name: 'p', type: 'number', min: 0, max: 1, default: 3 }]),
      js: OK_JS,
    },
    { name: 'broken/no_build', manifest: manifest([]) },
    { name: 'broken/throws', manifest: manifest([]), js: 'throw new Error("boom at import");' },
    { name: 'broken/no_run', manifest: manifest([]), js: 'module.exports.default = {};' },
    { name: 'dup/same_name', manifest: manifest([]), js: OK_JS },
    { name: 'dup/same-name', manifest: manifest([]), js: OK_JS },
  ],
  { 'demo/README.md': '# demo family\n', 'README.md': '# all plugins\n' },
);

let w: RunningWorker;

beforeAll(async () => {
  w = await startWorker({ env: { PLUGINS_DIR: root } });
});
afterAll(async () => {
  await w?.stop();
});

interface Listing {
  success: boolean;
  page_id: null;
  count: number;
  plugins: Array<{ name: string; route: string; methods: string[]; parameters: any[] }>;
  skipped: Array<{ name: string; error: string }>;
}

describe('discovery at start', () => {
  test('the good plugins load; each broken one is named with its reason and skipped', async () => {
    const r = await w.call<Listing>('GET', '/api/v1/plugins', { auth: false });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, page_id: null, count: 3 });
    expect(r.body.plugins.map((p) => p.name)).toEqual([
      'demo/echo_back',
      'demo/quiet',
      'lonely/solo',
    ]);
    const why = Object.fromEntries(r.body.skipped.map((s) => [s.name, s.error]));
    expect(Object.keys(why).sort()).toEqual([
      'broken/bad_default',
      'broken/bad_type',
      'broken/no_build',
      'broken/no_run',
      'broken/not_json',
      'broken/throws',
      'dup/same-name',
      'dup/same_name',
    ]);
    expect(why['broken/not_json']).toMatch(/manifest\.json is not JSON/);
    expect(why['broken/bad_type']).toMatch(/"parameters\[0\]\.type" must be one of/);
    expect(why['broken/bad_default']).toMatch(/default of p: p must be between 0\.0 and 1\.0/);
    expect(why['broken/no_build']).toMatch(/no implementation at .*dist\/broken\/no_build/);
    expect(why['broken/throws']).toMatch(/failed to load: boom at import/);
    expect(why['broken/no_run']).toMatch(/exports no plugin/);
    expect(why['dup/same_name']).toMatch(
      /route dup\/same-name is claimed by dup\/same-name, dup\/same_name/,
    );
    // Each is reported by name in the log at start, too.
    const skippedLog = w.logs.filter((l) => l.includes('"plugin skipped"'));
    expect(skippedLog.map((l) => JSON.parse(l).plugin).sort()).toEqual(Object.keys(why).sort());
    // The worker serves as usual.
    const status = await w.call('GET', '/api/v1/system/status');
    expect(status.status).toBe(200);
  });

  test('descriptors are exactly the documented ones, the route with underscores as hyphens', async () => {
    const r = await w.call<Listing>('GET', '/api/v1/plugins', { auth: false });
    const echo = r.body.plugins[0];
    expect(echo).toEqual({
      name: 'demo/echo_back',
      description: 'A plugin written by a test. It has a second sentence.',
      methods: ['POST', 'GET'],
      bg_color: ['#0a5', '#05a'],
      route: '/api/v1/{page_id}/plugin/demo/echo-back',
      parameters: [
        {
          name: 'word',
          type: 'text',
          label: 'Word',
          required: true,
          default: null,
          placeholder: 'a word',
          options: [],
          help_text: 'said',
        },
        expect.objectContaining({ name: 'level', type: 'number', label: 'Level', default: 0.5 }),
        expect.objectContaining({ name: 'mode', type: 'select', options: ['a', 'b'] }),
        expect.objectContaining({ name: 'loud', type: 'checkbox', required: false }),
        expect.objectContaining({ name: 'site', type: 'url' }),
        expect.objectContaining({ name: 'notes', type: 'textarea' }),
      ],
    });
  });
});

describe('docs', () => {
  test("a plugin's README, else the nearest one up its folder tree, as text/markdown", async () => {
    const own = await w.call('GET', '/api/v1/plugins/demo/echo_back/docs', { auth: false });
    expect(own.status).toBe(200);
    expect(own.headers.get('content-type')).toMatch(/^text\/markdown/);
    expect(own.body).toBe('# echo_back\nEchoes.\n');
    // The registry name may come encoded as one segment.
    const encoded = await w.call('GET', '/api/v1/plugins/demo%2Fquiet/docs', { auth: false });
    expect(encoded.body).toBe('# demo family\n');
  });

  test('404 for an unknown name, for a route name, and when no README exists', async () => {
    for (const [name, error] of [
      ['demo/nothing', 'No plugin named demo/nothing'],
      ['demo/echo-back', 'No plugin named demo/echo-back'],
      ['lonely/solo', 'Plugin lonely/solo has no README'],
      ['broken/throws', 'No plugin named broken/throws'],
    ]) {
      const r = await w.call('GET', `/api/v1/plugins/${name}/docs`, { auth: false });
      expect({ name, status: r.status, body: r.body }).toEqual({
        name,
        status: 404,
        body: { success: false, error, page_id: null },
      });
    }
  });
});

describe('OpenAPI', () => {
  test('lists every plugin route and method with its parameters and auth', async () => {
    const doc = await w.call<{ paths: Record<string, any> }>('GET', '/openapi.json', {
      auth: false,
    });
    const list = await w.call<Listing>('GET', '/api/v1/plugins', { auth: false });
    for (const p of list.body.plugins) {
      for (const m of p.methods) {
        const op = doc.body.paths[p.route]?.[m.toLowerCase()];
        expect({ route: p.route, m, documented: Boolean(op) }).toEqual({
          route: p.route,
          m,
          documented: true,
        });
        expect(op.security).toEqual([{ bearer: [] }]);
        expect(op.responses[423]).toBeDefined();
      }
    }
    const echo = doc.body.paths['/api/v1/{page_id}/plugin/demo/echo-back'];
    const body = echo.post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['word']);
    expect(body.properties.level).toMatchObject({ type: 'number', minimum: 0, maximum: 1 });
    expect(body.properties.mode.enum).toEqual(['a', 'b']);
    const query = echo.get.parameters.filter((q: { in: string }) => q.in === 'query');
    expect(query.map((q: { name: string }) => q.name)).toEqual([
      'word',
      'level',
      'mode',
      'loud',
      'site',
      'notes',
    ]);
    expect(echo.post.responses[200].content['application/json'].schema.properties.done).toEqual({
      type: 'boolean',
    });
    expect(doc.body.paths['/api/v1/plugins'].get.security).toBeUndefined();
    expect(doc.body.paths['/api/v1/plugins/{name}/docs'].get.security).toBeUndefined();
  });
});
