import { scriptOnTrees } from './script-tree';

/** The repository's cast counter, on small git trees made for each case. */
const trees = scriptOnTrees('count-casts.cjs');
const LIMIT = 10;
afterAll(() => trees.cleanUp());
const countIn = trees.runIn;

/** `n` casts, each with its reason on the line above. */
function explainedCasts(n: number): string {
  const lines = ['const input: unknown = 1;'];
  for (let i = 0; i < n; i++)
    lines.push(`// The input is a number here.`, `export const v${i} = input as number;`);
  return lines.join('\n') + '\n';
}

describe('count-casts', () => {
  test('up to the limit, each cast explained: it passes and prints the count per file', () => {
    const { code, out } = countIn({
      'pkg/src/a.ts': explainedCasts(LIMIT - 1),
      'pkg/src/b.ts': 'const x: unknown = 1;\nexport const y = <number>x; // x is a number\n',
    });
    expect(out).toContain(`casts in shipped code: ${LIMIT} (limit ${LIMIT})`);
    expect(out).toMatch(new RegExp(`^ +${LIMIT - 1} {2}pkg/src/a\\.ts$`, 'm'));
    expect(out).toMatch(/^ +1 {2}pkg\/src\/b\.ts$/m);
    expect(code).toBe(0);
  });

  test('one above the limit fails', () => {
    const { code, out } = countIn({
      'pkg/src/a.ts': explainedCasts(LIMIT),
      'plugins/fam/run/index.ts':
        '// The input is a string.\nexport const s = ("" as unknown) as string;\n',
    });
    expect(out).toContain(`casts in shipped code: ${LIMIT + 2} (limit ${LIMIT})`);
    expect(out).toContain('too many casts');
    expect(code).toBe(1);
  });

  test('a cast without a comment on its line or the line above fails, naming where it is', () => {
    const { code, out } = countIn({
      'pkg/src/a.ts': [
        'const input: unknown = 1;',
        '// The input is a number here.',
        '',
        'export const far = input as number;',
        'export const bare = input as number;',
      ].join('\n'),
    });
    expect(out).toContain(`casts in shipped code: 2 (limit ${LIMIT})`);
    expect(out).toContain('pkg/src/a.ts:4');
    expect(out).toContain('pkg/src/a.ts:5');
    expect(code).toBe(1);
  });

  test('`as const`, tests, declaration files and unshipped files are not counted', () => {
    const cast = 'const input: unknown = 1;\nexport const v = input as number;\n';
    const { code, out } = countIn({
      'pkg/src/a.ts':
        "export const names = ['a', 'b'] as const;\nexport const o = <const>{ a: 1 };\n",
      'pkg/test/a.test.ts': cast,
      'pkg/src/test/helper.ts': cast,
      'pkg/src/types.d.ts':
        'declare const input: unknown;\nexport declare const v: typeof input;\n',
      'pkg/bench/run.ts': cast,
      'plugins/test/plugin.test.ts': cast,
    });
    expect(out).toContain(`casts in shipped code: 0 (limit ${LIMIT})`);
    expect(code).toBe(0);
  });
});
