import path from 'node:path';
import Docker from 'dockerode';
import tar from 'tar-fs';
import { RECORDED_CONTEXT_FILE, buildContext, dockerfileBase } from './build-context';

export interface ImagePlan {
  /** The content hash of the build context (build-context.ts). */
  hash: string;
  tag: string;
  files: string[];
  /** The context's folders (build-context.ts), each sent with a header of its own. */
  dirs: string[];
}

/**
 * The build context as a tar stream laid out as `docker build` sends it: a header for every
 * folder, named with a trailing slash, and the files' permission bits as they are on disk. The
 * layer cache keys a copied folder by those headers, so a context packed any other way misses
 * the layers a `docker build` or `docker compose build` of the same checkout left: the first
 * update after one would redo every step from the first folder copied.
 */
export function packContext(root: string, files: string[], dirs: string[]): NodeJS.ReadableStream {
  const wanted = new Set([...files, ...dirs]);
  const options = {
    entries: [...wanted].filter((name) => !name.includes('/')).sort(),
    // Entering a folder, tar-fs lists all of it: only what the context holds is taken.
    ignore: (abs: string) => !wanted.has(path.relative(root, abs).split(path.sep).join('/')),
    // Modes as on disk, not masked by this process's umask (tar-fs reads the option; its
    // published types leave it out, hence the options object rather than a literal).
    umask: 0,
    map: (header: tar.Headers): tar.Headers =>
      header.type === 'directory' && !header.name.endsWith('/')
        ? { ...header, name: `${header.name}/` }
        : header,
  };
  return tar.pack(root, options);
}

/** The first regular file of a tar archive (what Docker answers for one path), or null. */
function firstFile(tar: Buffer): Buffer | null {
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) return null;
    const size = parseInt(header.subarray(124, 136).toString('ascii').trim() || '0', 8);
    const type = String.fromCharCode(header[156] ?? 0);
    if (type === '0' || type === '\0') return tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return null;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/**
 * The persona image of the checkout, named by what it contains: `<image>:src-<hash>`. A commit
 * that changes nothing the build sees (README, tests: see .dockerignore) maps to the image
 * already built, so only a change the image holds costs a build, and a rollback finds its image.
 * The image `docker compose` built (the configured one) is taken as is when it records the
 * same content.
 */
export class PersonaImage {
  private readonly docker = new Docker();

  constructor(
    private readonly repoRoot: string,
    private readonly image: string,
    private readonly baseImage: string | null,
  ) {}

  /** The build context as `docker build` of the working tree sees it, hashed by content. */
  plan(): ImagePlan {
    // Without PERSONA_BASE_IMAGE the build uses the Dockerfile's default: the hash names it.
    const base = this.baseImage ?? dockerfileBase(this.repoRoot) ?? '';
    const { hash, files, dirs } = buildContext(this.repoRoot, base);
    const repo = this.image.replace(/:[^/:]+$/, '');
    return { hash, tag: `${repo}:src-${hash.slice(0, 12)}`, files, dirs };
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
   * The content hash an image recorded when it was built (read from a container created, never
   * started, for the purpose), or null when it has none or does not exist.
   */
  async recordedHash(image: string): Promise<string | null> {
    let container: Docker.Container;
    try {
      container = await this.docker.createContainer({ Image: image, Entrypoint: ['true'] });
    } catch {
      return null;
    }
    try {
      const tar = await readAll(await container.getArchive({ path: RECORDED_CONTEXT_FILE }));
      return firstFile(tar)?.toString('utf8').trim() || null;
    } catch {
      return null;
    } finally {
      await container.remove({ force: true }).catch(() => undefined);
    }
  }

  /**
   * Takes the configured image (the one `docker compose` built) as the plan's when it was built
   * from the same content: tags it `src-<hash>` and answers its name; else null.
   */
  async adopt(plan: ImagePlan): Promise<string | null> {
    if ((await this.recordedHash(this.image)) !== plan.hash) return null;
    const at = plan.tag.lastIndexOf(':');
    await this.docker
      .getImage(this.image)
      .tag({ repo: plan.tag.slice(0, at), tag: plan.tag.slice(at + 1) });
    return this.image;
  }

  /**
   * The name `registry` holds a commit's image under: `<registry>/<name>:<commit>`, `<name>` the
   * last part of the configured image's name. Named by commit, so what runs where can be read
   * off any node.
   */
  registryName(registry: string, commit: string): string {
    const name =
      this.image
        .replace(/:[^/:]+$/, '')
        .split('/')
        .at(-1) ?? 'persona-browser';
    return `${registry}/${name}:${commit.slice(0, 12)}`;
  }

  /** Tags `local` as `remote` (a registry's name) and pushes it there. */
  async push(local: string, remote: string): Promise<void> {
    const at = remote.lastIndexOf(':');
    await this.docker.getImage(local).tag({ repo: remote.slice(0, at), tag: remote.slice(at + 1) });
    // No credentials: the engine wants the header anyway, and an empty one means anonymous.
    const stream = await this.docker.getImage(remote).push({}, undefined, { serveraddress: '' });
    await new Promise<void>((resolve, reject) => {
      let refused: string | null = null;
      this.docker.modem.followProgress(
        stream,
        (err: Error | null) =>
          err || refused
            ? reject(new Error(`push of ${remote}: ${refused ?? err?.message}`))
            : resolve(),
        (event: { error?: string }) => {
          if (event.error) refused = event.error.trim();
        },
      );
    });
  }

  /**
   * Builds the planned image from the checkout (Docker's layer cache keeps it short); a failed
   * build's error carries the last lines the build printed.
   */
  async build(plan: ImagePlan): Promise<void> {
    const tail: string[] = [];
    const stream = await this.docker.buildImage(packContext(this.repoRoot, plan.files, plan.dirs), {
      t: plan.tag,
      buildargs: this.baseImage ? { BASE: this.baseImage } : {},
    });
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
