/**
 * The repository's documentation points only at what the repository has: no file names a
 * contract or design document kept elsewhere, every relative link of a markdown file resolves,
 * and every repository path README and docs/ name in code (`worker/src/app.ts`) exists.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '@persona-browser/testkit/worker';

const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f && fs.existsSync(path.join(ROOT, f)));
const read = (f: string): string => fs.readFileSync(path.join(ROOT, f), 'utf8');

const TEXT = /\.(ts|js|cjs|mjs|md|json|sh|ya?ml|css|html)$|^\.ci\/run$|Dockerfile$/;
const textFiles = tracked.filter((f) => TEXT.test(f) && !f.endsWith('package-lock.json'));
const markdown = tracked.filter((f) => f.endsWith('.md'));
/** The pages that name repository paths from its root: README and docs/. */
const rootPages = tracked.filter((f) => f === 'README.md' || /^docs\/.+\.md$/.test(f));

// Spelled in pieces, so this file does not name them itself.
const ELSEWHERE = new RegExp(
  [`\\b${'SP'}EC\\b`, `${'de'}sign\\.md`, `${'conven'}tions\\.md`].join('|'),
);

/** Lines of `files` that match `pattern`, as `file:line: text`. */
function linesMatching(files: string[], pattern: RegExp): string[] {
  const hits: string[] = [];
  for (const f of files) {
    read(f)
      .split('\n')
      .forEach((line, i) => {
        if (pattern.test(line)) hits.push(`${f}:${i + 1}: ${line.trim()}`);
      });
  }
  return hits;
}

/** Relative link targets of a markdown file that lead nowhere, as `file: target`. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const m of read(file).matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1] as string;
    if (/^([a-z]+:|#)/.test(target)) continue;
    const rel = target.split('#')[0] as string;
    if (!fs.existsSync(path.resolve(ROOT, path.dirname(file), rel))) {
      broken.push(`${file}: ${target}`);
    }
  }
  return broken;
}

const TOP =
  /^(contracts|service-kit|plugin-sdk|ui|xvfb|worker|plugins|waker|supervisor|testkit|scripts|docs|docker|\.ci)\//;

/**
 * Whether a path from the root is in the repository: a tracked file, or a folder holding one
 * (a trailing `/`, or `*` wildcards within one path segment).
 */
function exists(p: string): boolean {
  if (!p.includes('*')) {
    const folder = p.endsWith('/') ? p : `${p}/`;
    return tracked.some((f) => f === p || f.startsWith(folder));
  }
  const re = new RegExp(
    `^${p
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('[^/]*')}$`,
  );
  return tracked.some((f) => re.test(f));
}

/** Repository paths named in code spans that are not there, as `file: path`. */
function missingPaths(file: string): string[] {
  const missing: string[] = [];
  for (const m of read(file).matchAll(/`([^`\s]+)`/g)) {
    const p = m[1] as string;
    // Placeholders (`<name>`, `{page_id}`) and build output name no one file.
    if (!TOP.test(p) || /[<{]/.test(p) || /(^|\/)dist(-bench)?\//.test(p)) continue;
    if (!exists(p)) missing.push(`${file}: ${p}`);
  }
  return missing;
}

describe('the documentation points only at what the repository has', () => {
  test('no file names a contract or design document kept elsewhere', () => {
    expect(textFiles.length).toBeGreaterThan(100);
    expect(linesMatching(textFiles, ELSEWHERE)).toEqual([]);
  });

  test('every relative link of a markdown file resolves', () => {
    expect(markdown).toEqual(expect.arrayContaining(['README.md', 'docs/api.md']));
    expect(markdown.flatMap(brokenLinks)).toEqual([]);
  });

  test('every repository path README and docs/ name exists', () => {
    expect(rootPages).toEqual(
      expect.arrayContaining(['README.md', 'docs/api.md', 'docs/architecture.md']),
    );
    expect(rootPages.flatMap(missingPaths)).toEqual([]);
  });

  test('the checks see what they look for (control)', () => {
    expect(ELSEWHERE.test(`The contract is \`${'SP'}EC.md\`.`)).toBe(true);
    expect(ELSEWHERE.test('a ParameterSpec of the manifest')).toBe(false);
    expect(exists('worker/test/human-*.unit.test.ts')).toBe(true);
    expect(exists('worker/src/no-such-file.ts')).toBe(false);
    expect(exists('scripts/')).toBe(true);
  });
});
