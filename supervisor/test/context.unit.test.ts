import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildContext, dockerfileBase } from '../src/build-context';
import { ROOT } from '@persona-browser/testkit/fleet-repo';

/**
 * The content hash that names a persona image: the same files `docker build` puts in its
 * context, so the image compose built and the supervisor's plan agree on what it holds.
 */
function context(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-supervisor-context-'));
  fs.copyFileSync(path.join(ROOT, '.dockerignore'), path.join(dir, '.dockerignore'));
  fs.copyFileSync(path.join(ROOT, 'Dockerfile'), path.join(dir, 'Dockerfile'));
  const files: Record<string, string> = {
    'worker/src/main.ts': 'export {};\n',
    'docker/entrypoint.sh': '#!/bin/sh\n',
    'docker/certs/README.md': 'Extra CA files.\n',
  };
  for (const [file, content] of Object.entries(files)) write(dir, file, content);
  return dir;
}

function write(dir: string, file: string, content: string): void {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), content);
}

test("compose's build and the supervisor's plan name the same base by default", () => {
  const compose = fs.readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8');
  const composeDefault = /BASE: \$\{PERSONA_BASE_IMAGE:-([^}]+)\}/.exec(compose)?.[1];
  expect(dockerfileBase(ROOT)).toMatch(/\S/);
  expect(composeDefault).toBe(dockerfileBase(ROOT));
});

test('files docker leaves out of the context (state, runtime, tests) change nothing', () => {
  const dir = context();
  const before = buildContext(dir, 'base:1');
  for (const file of [
    '.supervisor/state.json',
    '.update-trigger',
    '.env',
    'worker/worker.log',
    'node_modules/x/index.js',
    'worker/dist/main.js',
    'worker/test/a.test.ts',
    '.git/HEAD',
  ]) {
    write(dir, file, 'local\n');
  }
  expect(buildContext(dir, 'base:1')).toEqual(before);
  expect(before.files).toEqual([
    '.dockerignore',
    'Dockerfile',
    'docker/certs/README.md',
    'docker/entrypoint.sh',
    'worker/src/main.ts',
  ]);
});

test('what the image holds changes the hash: content, a local CA file, a mode, the base', () => {
  const dir = context();
  const seen = new Set([buildContext(dir, 'base:1').hash]);
  const changes = [
    (): void => write(dir, 'worker/src/main.ts', 'export const a = 1;\n'),
    (): void => write(dir, 'docker/certs/proxy.crt', 'PEM\n'),
    (): void => fs.chmodSync(path.join(dir, 'docker/entrypoint.sh'), 0o755),
  ];
  for (const change of changes) {
    change();
    seen.add(buildContext(dir, 'base:1').hash);
  }
  seen.add(buildContext(dir, 'base:2').hash);
  expect(seen.size).toBe(5);
});
