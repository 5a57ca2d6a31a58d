import fs from 'node:fs';
import path from 'node:path';
import { checkPlugins } from '../../scripts/check-plugin-params.cjs';

/**
 * A plugin's parameters are declared in manifest.json and typed in its code; the check that
 * `npm run lint` runs (scripts/check-plugin-params.cjs) compiles each plugin and names every
 * disagreement. The real plugins agree; a control plugin whose code and manifest disagree in
 * every way the check knows is refused, one line per disagreement.
 */

const PLUGINS = path.resolve(__dirname, '..');
const TSCONFIG = path.join(PLUGINS, 'tsconfig.json');

test('the real plugins: every manifest agrees with its code', () => {
  expect(checkPlugins(PLUGINS)).toEqual([]);
});

describe('a control plugin whose manifest and code disagree', () => {
  // Under plugins/test/, which the worker never loads, so the SDK resolves as for a real plugin.
  const root = fs.mkdtempSync(path.join(__dirname, 'tmp-params-'));
  const write = (folder: string, manifest: object, code: string): void => {
    fs.mkdirSync(path.join(root, folder), { recursive: true });
    const base = { description: 'control', methods: ['POST'], bg_color: ['#000', '#fff'] };
    fs.writeFileSync(
      path.join(root, folder, 'manifest.json'),
      JSON.stringify({ ...base, ...manifest }),
    );
    fs.writeFileSync(path.join(root, folder, 'index.ts'), code);
  };
  const plugin = (params: string): string =>
    `import { definePlugin } from '@persona-browser/plugin-sdk';\n` +
    `interface Params { ${params} }\n` +
    `export default definePlugin<Params>({ run: async (_ctx, p) => ({ p }) });\n`;

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test('each disagreement is named; an agreeing plugin beside it is not', () => {
    write(
      'fam/bad',
      {
        parameters: [
          { name: 'url', type: 'url', required: true },
          { name: 'count', type: 'number', default: 3 },
          { name: 'fast', type: 'checkbox' },
          { name: 'mode', type: 'select', options: ['a', 'b'], default: 'a' },
          { name: 'only_here', type: 'text' },
        ],
      },
      plugin(`url?: string; count: string; fast: boolean; mode: 'a' | 'c'; only_in_code: number;`),
    );
    write(
      'fam/good',
      {
        parameters: [
          { name: 'url', type: 'url', required: true },
          { name: 'mode', type: 'select', options: ['a', 'b'], default: 'a' },
          { name: 'note', type: 'textarea' },
        ],
      },
      plugin(`url: string; mode: 'a' | 'b'; note?: string;`),
    );
    expect(checkPlugins(root, TSCONFIG).sort()).toEqual(
      [
        "fam/bad: only_here is in manifest.json but not in the code's type",
        "fam/bad: only_in_code is in the code's type but not in manifest.json",
        'fam/bad: url is always given (required or defaulted): its type must not be optional',
        'fam/bad: count is a number in the manifest, string in the code',
        'fam/bad: fast may be absent (neither required nor defaulted): its type must be optional',
        'fam/bad: mode allows c in the code, not among its options',
      ].sort(),
    );
  });
});
