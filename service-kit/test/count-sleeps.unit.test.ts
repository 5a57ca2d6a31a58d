import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The repository's counter of fixed sleeps in tests, on small git trees made for each case. */
const SCRIPT = path.resolve(__dirname, '..', '..', 'scripts', 'count-sleeps.cjs');

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});

function countIn(
  files: Record<string, string>,
  args: string[] = [],
): { code: number | null; out: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-count-sleeps-'));
  roots.push(root);
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  execFileSync('git', ['init', '-q'], { cwd: root });
  execFileSync('git', ['add', '.'], { cwd: root });
  const run = spawnSync(process.execPath, [SCRIPT, ...args, root], { encoding: 'utf8' });
  return { code: run.status, out: run.stdout + run.stderr };
}

const SLEEP = 'const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));\n';

test('a sleep before an assertion is counted and listed; a polling pause and a marked one are apart', () => {
  const { code, out } = countIn(
    {
      'pkg/test/a.test.ts':
        SLEEP +
        "test('x', async () => {\n" +
        '  await sleep(1500);\n' +
        '  await new Promise((resolve) => setTimeout(resolve, 200));\n' +
        '  while (!done()) await sleep(50);\n' +
        '  // Time itself is tested: the idle timer fires after 2 s.\n' +
        '  await sleep(2000);\n' +
        '});\n',
      'testkit/wait.ts': 'export async function until(f: () => boolean) { await sleep(20); }\n',
      // Shipped code is no test: its timers are not counted.
      'pkg/src/b.ts': 'export async function f() { await sleep(1000); }\n',
    },
    ['--list'],
  );
  expect(out).toContain('pkg/test/a.test.ts:3: await sleep(1500);');
  expect(out).toContain('pkg/test/a.test.ts:4: await new Promise');
  expect(out).toContain(
    'fixed sleeps in tests: 2 in 1 of 2 files (1 more where time itself is tested; 2 polling pauses)',
  );
  expect(code).toBe(0);
});

test('--max fails above the limit and passes at it', () => {
  const files = { 'pkg/test/a.test.ts': "test('x', async () => { await sleep(10); });\n" };
  expect(countIn(files, ['--max', '0'])).toMatchObject({ code: 1 });
  expect(countIn(files, ['--max', '1'])).toMatchObject({ code: 0 });
});
