import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sandboxArgs } from '../src/browser/launch';
import { loadConfig } from '../src/config';

function persona(envText: string | null): { root: string; env: NodeJS.ProcessEnv } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-nosandbox-'));
  fs.mkdirSync(path.join(root, 'p'));
  if (envText !== null) fs.writeFileSync(path.join(root, 'p', 'persona.env'), envText);
  return { root, env: { PERSONA_DIR: 'p' } };
}

describe('CHROME_NO_SANDBOX', () => {
  test('the sandbox stays on unless asked: off by default', () => {
    const { root, env } = persona(null);
    expect(loadConfig(env, root).chromeNoSandbox).toBe(false);
  });

  test('persona.env opts out, and the process environment wins over it', () => {
    const { root, env } = persona('CHROME_NO_SANDBOX=true\n');
    expect(loadConfig(env, root).chromeNoSandbox).toBe(true);
    expect(loadConfig({ ...env, CHROME_NO_SANDBOX: 'false' }, root).chromeNoSandbox).toBe(false);
  });

  test('a value that is not a boolean is a clear error naming the variable', () => {
    const { root, env } = persona(null);
    expect(() => loadConfig({ ...env, CHROME_NO_SANDBOX: 'maybe' }, root)).toThrow(
      /CHROME_NO_SANDBOX/,
    );
  });

  test('Chromium gets --no-sandbox only when opted out or running as root', () => {
    expect(sandboxArgs(false, 10001)).toEqual([]);
    expect(sandboxArgs(true, 10001)).toEqual(['--no-sandbox']);
    expect(sandboxArgs(false, 0)).toEqual(['--no-sandbox']);
    expect(sandboxArgs(false, null)).toEqual([]);
  });
});
