/**
 * Counts the fixed sleeps in tests: an awaited timer (`sleep(n)`, `ctx.sleep(n)`,
 * `page.waitForTimeout(n)`, `new Promise((r) => setTimeout(r, n))`) that is not the pause of a
 * polling loop. A test that sleeps and then asserts passes or fails by the machine's speed; it
 * should wait for the event it needs instead. A sleep stays only where time itself is what is
 * tested, with a comment on its line or the line above containing "time itself".
 *
 * A timer inside a `while`, `do` or `for` loop, or inside a function that polls (one whose name
 * starts with `until`, `poll`, `waitFor` or `eventually`), is a polling pause: counted apart.
 *
 * Tests: every tracked `.ts` file under a `test` folder or in `testkit/`.
 * Usage: `node scripts/count-sleeps.cjs [--list] [--max N] [repository root]`; with `--max`,
 * exits 1 when more than N fixed sleeps lack the comment.
 */
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const ts = require('typescript');

const TESTS = /(^|\/)(test|tests|__tests__)\/.+\.ts$|^testkit\/.+\.ts$/;
const TIMER_CALLS = new Set(['sleep', 'delay', 'waitForTimeout', 'setTimeoutPromise']);
const POLLING_FUNCTION = /^(until|poll|waitFor|eventually)/i;
const MARK = /time itself/i;

function testFiles(root) {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
  return out
    .split('\0')
    .filter((f) => TESTS.test(f) && !f.endsWith('.d.ts') && !f.includes('node_modules/'))
    .filter((f) => fs.existsSync(path.join(root, f)))
    .sort();
}

/** The name a call is made by: `sleep(…)` and `x.sleep(…)` are both `sleep`. */
function calleeName(call) {
  const e = call.expression;
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return null;
}

/** `new Promise((r) => setTimeout(r, n))`: a promise whose executor only sets a timer. */
function isTimerPromise(node) {
  if (!ts.isNewExpression(node) || !ts.isIdentifier(node.expression)) return false;
  if (node.expression.text !== 'Promise') return false;
  const [executor] = node.arguments ?? [];
  if (!executor || !(ts.isArrowFunction(executor) || ts.isFunctionExpression(executor))) {
    return false;
  }
  let timer = false;
  (function visit(n) {
    if (ts.isCallExpression(n) && calleeName(n) === 'setTimeout') timer = true;
    ts.forEachChild(n, visit);
  })(executor.body);
  return timer;
}

/** An awaited timer: what `await` waits on. */
function isTimer(expr) {
  let e = expr;
  while (ts.isParenthesizedExpression(e)) e = e.expression;
  if (isTimerPromise(e)) return true;
  return ts.isCallExpression(e) && TIMER_CALLS.has(calleeName(e) ?? '');
}

function functionName(node) {
  if (
    (ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) &&
    node.name &&
    ts.isIdentifier(node.name)
  ) {
    return node.name.text;
  }
  if (
    (ts.isArrowFunction(node) || ts.isFunctionExpression(node)) &&
    ts.isVariableDeclaration(node.parent) &&
    ts.isIdentifier(node.parent.name)
  ) {
    return node.parent.name.text;
  }
  return null;
}

/** Whether the timer at `node` is a polling loop's pause. */
function isPolling(node) {
  for (let p = node.parent; p; p = p.parent) {
    if (ts.isWhileStatement(p) || ts.isDoStatement(p) || ts.isForStatement(p)) return true;
    if (ts.isForOfStatement(p) || ts.isForInStatement(p)) return true;
    const name = functionName(p);
    if (name && POLLING_FUNCTION.test(name)) return true;
    // A test's own body ends the search: a loop outside it polls nothing of it.
    if (ts.isSourceFile(p)) break;
  }
  return false;
}

function count(root) {
  const found = { fixed: [], marked: [], polling: 0, files: 0 };
  for (const file of testFiles(root)) {
    found.files++;
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const lines = text.split('\n');
    (function visit(node) {
      if (ts.isAwaitExpression(node) && isTimer(node.expression)) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        if (isPolling(node)) found.polling++;
        else {
          const row = { file, line: line + 1, text: lines[line].trim() };
          const marked = MARK.test(lines[line]) || (line > 0 && MARK.test(lines[line - 1]));
          (marked ? found.marked : found.fixed).push(row);
        }
      }
      ts.forEachChild(node, visit);
    })(sf);
  }
  return found;
}

function main() {
  const args = process.argv.slice(2);
  const list = args.includes('--list');
  const maxAt = args.indexOf('--max');
  const max = maxAt >= 0 ? Number(args[maxAt + 1]) : null;
  const rest = args.filter((a, i) => !a.startsWith('--') && (maxAt < 0 || i !== maxAt + 1));
  const root = path.resolve(rest[0] ?? process.cwd());
  const found = count(root);
  const say = (line) => process.stdout.write(`${line}\n`);
  const byFile = new Map();
  for (const row of found.fixed) byFile.set(row.file, (byFile.get(row.file) ?? 0) + 1);
  if (list) {
    for (const row of found.fixed) say(`${row.file}:${row.line}: ${row.text}`);
  }
  say(
    `fixed sleeps in tests: ${found.fixed.length} in ${byFile.size} of ${found.files} files` +
      ` (${found.marked.length} more where time itself is tested; ${found.polling} polling pauses)`,
  );
  if (max !== null && found.fixed.length > max) {
    process.stderr.write(`more than ${max} fixed sleeps: wait for the event instead\n`);
    process.exit(1);
  }
}

main();
