import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import dockerignore from '@balena/dockerignore';

/**
 * Where the persona image records the content hash of the build context it was built from
 * (the Dockerfile's build stage runs this module on its copy of the context). An image built by
 * `docker compose` thereby says what it holds, and the supervisor can take it as its own.
 */
export const RECORDED_CONTEXT_FILE = '/app/.build-context';

export interface BuildContext {
  /** sha256 over the base image's name and every file of the context (path, kind, mode, content). */
  hash: string;
  /** The files, relative to the context's root, in the order hashed. */
  files: string[];
  /**
   * The folders `docker build` sends a header of its own for (every folder it enters and keeps),
   * relative to the root: not hashed, but the layer cache's key of a copied folder counts them.
   */
  dirs: string[];
}

/** The default of the Dockerfile's `ARG BASE=…` (what a build without the argument uses). */
export function dockerfileBase(root: string): string | null {
  try {
    const text = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    return /^ARG\s+BASE=(\S+)\s*$/m.exec(text)?.[1] ?? null;
  } catch {
    return null;
  }
}

/**
 * Every file `docker build` of `root` puts in its context: all of the folder less what
 * .dockerignore leaves out (git's view does not matter, so local files such as docker/certs
 * count). Folders left out are not entered, unless a `!` rule could take something back.
 */
function contextEntries(root: string): { files: string[]; dirs: string[] } {
  const ignoreFile = path.join(root, '.dockerignore');
  const rules = fs.existsSync(ignoreFile) ? fs.readFileSync(ignoreFile, 'utf8') : '';
  const keep = dockerignore({ ignorecase: false }).add(rules).createFilter();
  const exceptions = rules.split('\n').some((line) => line.trim().startsWith('!'));
  const files: string[] = [];
  const dirs = new Set<string>();
  const walk = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (keep(name)) dirs.add(name);
        if (exceptions || keep(name)) walk(name);
      } else if ((entry.isFile() || entry.isSymbolicLink()) && keep(name)) {
        files.push(name);
      }
    }
  };
  walk('');
  // A file a `!` rule takes back out of a left-out folder still comes with its folders.
  for (const f of files)
    for (let at = f.lastIndexOf('/'); at > 0; at = f.lastIndexOf('/', at - 1))
      dirs.add(f.slice(0, at));
  return { files: files.sort(), dirs: [...dirs].sort() };
}

/**
 * The content hash of the build context at `root` for the base image `base`. The same on the
 * checkout and on the image build's copy of it: a path, whether it is a link, its permission
 * bits and its content (a link's target); owners and times, which a copy changes, are left out.
 */
export function buildContext(root: string, base: string): BuildContext {
  const { files, dirs } = contextEntries(root);
  const h = createHash('sha256').update(`base ${base}\n`);
  for (const f of files) {
    const full = path.join(root, f);
    const stat = fs.lstatSync(full);
    const link = stat.isSymbolicLink();
    const content = link ? fs.readlinkSync(full) : fs.readFileSync(full);
    const mode = (stat.mode & 0o777).toString(8);
    h.update(`${f}\0${link ? 'l' : 'f'}${mode}\0`)
      .update(content)
      .update('\0');
  }
  return { hash: h.digest('hex'), files, dirs };
}

// `node build-context.js <base>` in the context's root prints its hash (the image build's step).
if (require.main === module) {
  const base = process.argv[2];
  if (!base) {
    process.stderr.write('usage: node build-context.js <base image>\n');
    process.exit(2);
  }
  process.stdout.write(`${buildContext(process.cwd(), base).hash}\n`);
}
