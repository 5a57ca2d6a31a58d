import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The built plugin SDK, required by absolute path from plugins written outside the repo. */
const SDK = require.resolve('@persona-browser/plugin-sdk');

export interface TreePlugin {
  /** Folder path under the root, such as `demo/visit`. */
  name: string;
  /** manifest.json: an object, or raw text (a broken manifest). */
  manifest?: object | string;
  /** dist/<name>/index.js; `sdk` in it is the real plugin SDK. Omitted: no implementation. */
  js?: string;
  readme?: string;
}

const write = (file: string, text: string): void => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

/**
 * A plugins folder as the worker discovers it, written by a test: manifests and READMEs in
 * the plugin folders, implementations (plain JS) under dist/, family files where given.
 */
export function writePluginTree(
  plugins: TreePlugin[],
  files: Record<string, string | object> = {},
): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-plugins-'));
  for (const p of plugins) {
    const dir = path.join(root, p.name);
    fs.mkdirSync(dir, { recursive: true });
    if (p.manifest !== undefined) {
      const text =
        typeof p.manifest === 'string' ? p.manifest : JSON.stringify(p.manifest, null, 2);
      write(path.join(dir, 'manifest.json'), text);
    }
    if (p.readme !== undefined) write(path.join(dir, 'README.md'), p.readme);
    if (p.js !== undefined) {
      const head = `const sdk = require(${JSON.stringify(SDK)});\n`;
      write(path.join(root, 'dist', p.name, 'index.js'), head + p.js);
    }
  }
  for (const [rel, content] of Object.entries(files)) {
    write(
      path.join(root, rel),
      typeof content === 'string' ? content : JSON.stringify(content, null, 2),
    );
  }
  return root;
}

export const manifest = (
  parameters: object[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  description: 'A plugin written by a test. It has a second sentence.',
  methods: ['POST'],
  bg_color: ['#0a5', '#05a'],
  parameters,
  ...extra,
});
