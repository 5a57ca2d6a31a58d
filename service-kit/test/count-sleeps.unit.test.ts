import { scriptOnTrees } from './script-tree';

/** The repository's counter of fixed sleeps in tests, on small git trees made for each case. */
const trees = scriptOnTrees('count-sleeps.cjs');
afterAll(() => trees.cleanUp());
const countIn = trees.runIn;

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
