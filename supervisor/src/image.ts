import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import dockerignore from '@balena/dockerignore';
import Docker from 'dockerode';
import type { Git } from './git';

/** Extra CA files of the image build: local, never committed, but part of what it holds. */
const CERTS_DIR = path.join('docker', 'certs');

export interface ImagePlan {
  /** sha256 over every file the build context holds (path, mode, content) and the base. */
  hash: string;
  tag: string;
  files: string[];
}

/**
 * The persona image of the checkout, named by what it contains: `<image>:src-<hash>`. A commit
 * that changes nothing the build sees (README, tests: see .dockerignore) maps to the image
 * already built, so only a change the image holds costs a build, and a rollback finds its image.
 */
export class PersonaImage {
  private readonly docker = new Docker();

  constructor(
    private readonly repoRoot: string,
    private readonly git: Git,
    private readonly image: string,
    private readonly baseImage: string | null,
  ) {}

  /**
   * The build context as `docker build` of the working tree sees it: every file git does not
   * ignore, plus the local extra CA files, less what .dockerignore leaves out; hashed by content.
   */
  async plan(): Promise<ImagePlan> {
    const ignoreFile = path.join(this.repoRoot, '.dockerignore');
    const rules = fs.existsSync(ignoreFile) ? fs.readFileSync(ignoreFile, 'utf8') : '';
    const keep = dockerignore({ ignorecase: false }).add(rules).createFilter();
    const certs = path.join(this.repoRoot, CERTS_DIR);
    const extra = (fs.existsSync(certs) ? fs.readdirSync(certs) : [])
      .filter((name) => name.endsWith('.crt'))
      .map((name) => path.join(CERTS_DIR, name));
    const files = [...new Set([...(await this.git.workingFiles()), ...extra])]
      .filter((f) => keep(f) && fs.existsSync(path.join(this.repoRoot, f)))
      .sort();
    const h = createHash('sha256').update(`base ${this.baseImage ?? ''}\n`);
    for (const f of files) {
      const full = path.join(this.repoRoot, f);
      const stat = fs.lstatSync(full);
      const content = stat.isSymbolicLink() ? fs.readlinkSync(full) : fs.readFileSync(full);
      h.update(`${f}\0${stat.mode}\0`).update(content).update('\0');
    }
    const hash = h.digest('hex');
    const repo = this.image.replace(/:[^/:]+$/, '');
    return { hash, tag: `${repo}:src-${hash.slice(0, 12)}`, files };
  }

  async exists(tag: string): Promise<boolean> {
    try {
      await this.docker.getImage(tag).inspect();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Builds the planned image from the checkout (Docker's layer cache keeps it short); a failed
   * build's error carries the last lines the build printed.
   */
  async build(plan: ImagePlan): Promise<void> {
    const tail: string[] = [];
    const stream = await this.docker.buildImage(
      { context: this.repoRoot, src: plan.files },
      {
        t: plan.tag,
        buildargs: this.baseImage ? { BASE: this.baseImage } : {},
        labels: { 'persona-browser.content': plan.hash },
      },
    );
    await new Promise<void>((resolve, reject) => {
      this.docker.modem.followProgress(
        stream,
        (err: Error | null) => (err ? reject(err) : resolve()),
        (event: { stream?: string; error?: string }) => {
          if (event.error) {
            const output = tail.filter((l) => !l.startsWith('--->')).slice(-6);
            reject(new Error(`image build: ${event.error.trim()}\n${output.join('\n')}`));
          }
          for (const line of (event.stream ?? '').split('\n')) {
            if (!line.trim()) continue;
            tail.push(line.trim());
            if (tail.length > 40) tail.shift();
          }
        },
      );
    });
  }
}
