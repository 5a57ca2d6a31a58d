/**
 * Counts the type assertions in shipped code (`x as T` and `<T>x`; `as const` is not a cast, it
 * only narrows a literal) and fails when there are more than LIMIT of them or when one has no
 * comment on its line or the line above saying why it is needed. A cast is a claim the compiler
 * cannot check, so each one is kept few and explained.
 *
 * Shipped code: every tracked `<package>/src/**.ts` and `plugins/**.ts`, less declaration files
 * and anything under a test folder. Usage: `node scripts/count-casts.cjs [repository root]`.
 */
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const ts = require('typescript');

/**
 * At most this many casts in shipped code: a ratchet a little above today's count (4), so a new
 * cast needs its reason and a place under the limit, and the typing won so far is kept.
 */
const LIMIT = 10;

const SHIPPED = /^([^/]+\/src\/.+|plugins\/.+)\.ts$/;
const TEST_FOLDER = /(^|\/)(test|tests|__tests__|testkit)\//;

/** The tracked files that ship, relative to `root`. */
function shippedFiles(root) {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
  return (
    out
      .split('\0')
      .filter((f) => SHIPPED.test(f) && !f.endsWith('.d.ts') && !TEST_FOLDER.test(f))
      // A file deleted from the working tree but not yet from the index ships no more.
      .filter((f) => fs.existsSync(path.join(root, f)))
      .sort()
  );
}

function isAsConst(node) {
  return (
    ts.isTypeReferenceNode(node.type) &&
    ts.isIdentifier(node.type.typeName) &&
    node.type.typeName.text === 'const'
  );
}

/** Every line of `sf` that holds part of a comment. */
function commentLines(sf) {
  const text = sf.getFullText();
  const seen = new Set();
  const lines = new Set();
  const note = (ranges) => {
    for (const r of ranges ?? []) {
      if (seen.has(r.pos)) continue;
      seen.add(r.pos);
      const first = sf.getLineAndCharacterOfPosition(r.pos).line;
      const last = sf.getLineAndCharacterOfPosition(r.end).line;
      for (let l = first; l <= last; l++) lines.add(l);
    }
  };
  // Every token, punctuation included, so a comment anywhere in the trivia is found.
  (function visit(node) {
    note(ts.getLeadingCommentRanges(text, node.pos));
    note(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(sf)) visit(child);
  })(sf);
  return lines;
}

/** The casts in one file: the line of each (0-based) and whether a comment explains it. */
function castsIn(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const comments = commentLines(sf);
  const explained = (line) => comments.has(line) || comments.has(line - 1);
  const casts = [];
  (function visit(node) {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !isAsConst(node)) {
      // The line of `as <T>` (or `<T>`), and the line the asserted expression starts on: a
      // formatter may wrap either way, and a comment above either one reads as the reason.
      const typeLine = sf.getLineAndCharacterOfPosition(node.type.getStart(sf)).line;
      const startLine = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      casts.push({ line: typeLine + 1, commented: explained(typeLine) || explained(startLine) });
    }
    ts.forEachChild(node, visit);
  })(sf);
  return casts;
}

function main() {
  const root = path.resolve(process.argv[2] ?? '.');
  const perFile = [];
  const unexplained = [];
  let total = 0;
  for (const file of shippedFiles(root)) {
    const casts = castsIn(file, fs.readFileSync(path.join(root, file), 'utf8'));
    if (!casts.length) continue;
    total += casts.length;
    perFile.push([file, casts.length]);
    for (const c of casts) if (!c.commented) unexplained.push(`${file}:${c.line}`);
  }
  const say = (line) => process.stdout.write(`${line}\n`);
  perFile.sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  for (const [file, n] of perFile) say(`${String(n).padStart(4)}  ${file}`);
  say(`casts in shipped code: ${total} (limit ${LIMIT})`);
  let failed = false;
  if (total > LIMIT) {
    say(`too many casts: ${total} is above the limit of ${LIMIT}; type the values instead`);
    failed = true;
  }
  if (unexplained.length) {
    say(`casts without a comment (on their line or the line above) saying why:`);
    for (const where of unexplained) say(`  ${where}`);
    failed = true;
  }
  process.exitCode = failed ? 1 : 0;
}

main();
