import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';

/**
 * A handler's context holds what its route declares and nothing more: a route without a page
 * has no `page` or `call`, a page route without `hold` has the page and `hold()` but no `call`,
 * a held route has the page and the call. Shown by compiling handlers against the real route
 * module: reading a member the route did not declare is a type error, not an `undefined` at
 * run time.
 */

const ROUTE = path.resolve(__dirname, '../src/http/route');
const base = JSON.parse(
  fs.readFileSync(path.resolve(__dirname, '../../tsconfig.base.json'), 'utf8'),
) as { compilerOptions: Record<string, unknown> };

const COMMON = `name: 'x', method: 'post', path: '/api/v1/x/:page_id', auth: true, tag: 'T', summary: 's'`;

interface Case {
  builder: string;
  extra: string;
  handler: string;
}

/** Compiles every case as its own module in one program: the type errors of each. */
function compile(cases: Case[]): string[][] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'route-kinds-'));
  const files = cases.map(({ builder, extra, handler }, i) => {
    const file = path.join(dir, `routes-${i}.ts`);
    fs.writeFileSync(
      file,
      `import { ${builder} } from ${JSON.stringify(ROUTE)};\n` +
        `export const r = ${builder}({ ${COMMON}, ${extra} handler: ${handler} });\n`,
    );
    return file;
  });
  const { options } = ts.convertCompilerOptionsFromJson(base.compilerOptions, dir);
  const program = ts.createProgram(files, { ...options, noEmit: true });
  const all = ts.getPreEmitDiagnostics(program);
  fs.rmSync(dir, { recursive: true, force: true });
  return files.map((file) =>
    all
      .filter((d) => d.file?.fileName === file)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
  );
}

const CASES = {
  plainBody: {
    builder: 'route',
    extra: '',
    handler: 'async ({ body }) => ({ n: Object.keys(body).length })',
  },
  plainPage: { builder: 'route', extra: '', handler: 'async (ctx) => ({ id: ctx.page.id })' },
  plainCall: { builder: 'route', extra: '', handler: 'async (ctx) => ({ s: ctx.call.signal })' },
  pageHold: {
    builder: 'pageRoute',
    extra: `page: 'leased',`,
    handler: "async ({ page, hold }) => hold('x', {}, async () => ({ id: page.id }))",
  },
  pageCall: {
    builder: 'pageRoute',
    extra: `page: 'leased',`,
    handler: 'async (ctx) => ({ s: ctx.call.signal })',
  },
  held: {
    builder: 'heldRoute',
    extra: `page: 'leased', hold: {},`,
    handler: 'async ({ page, call }) => ({ id: page.id, left: call.remainingMs() })',
  },
  heldNoPage: {
    builder: 'heldRoute',
    extra: 'hold: {},',
    handler: 'async ({ page }) => ({ id: page.id })',
  },
};
const names = Object.keys(CASES) as Array<keyof typeof CASES>;
let errors: Record<keyof typeof CASES, string>;

beforeAll(() => {
  const found = compile(names.map((n) => CASES[n]));
  errors = Object.fromEntries(
    names.map((n, i) => [n, (found[i] ?? []).join('\n')]),
  ) as typeof errors;
});

test('a route without a page: its handler has neither page nor call', () => {
  expect(errors.plainBody).toBe('');
  expect(errors.plainPage).toMatch(/Property 'page' does not exist/);
  expect(errors.plainCall).toMatch(/Property 'call' does not exist/);
});

test('a page route without hold: the page and hold(), no call', () => {
  expect(errors.pageHold).toBe('');
  expect(errors.pageCall).toMatch(/Property 'call' does not exist/);
});

test('a held route: the page and the call', () => {
  expect(errors.held).toBe('');
  // A held route that does not address a page does not compile.
  expect(errors.heldNoPage).not.toBe('');
});
