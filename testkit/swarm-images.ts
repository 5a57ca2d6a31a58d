/**
 * Images of the Swarm test cluster kept between its test files: the worker engines' image
 * stores, and `docker save` archives of this engine's images, so that a file loads only what
 * the one before did not.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCommand } from './command';

/**
 * Where the worker engines' image stores wait between clusters that ask for it (keepImages):
 * `<dir>/w<i>` holds the `image` and `overlay2` folders of worker i's data root, nothing else
 * (no swarm, network or container state). Taken by the next such cluster's worker i, so an image
 * it already holds is not loaded again. One cluster at a time (the cluster lock): no races.
 */
const KEPT_STORE = path.join(os.tmpdir(), 'persona-browser-swarm-images');
const KEPT = ['image', 'overlay2'];

/** Moves worker i's kept image store (when there is one) into a new engine's data root. */
export function takeKeptImages(i: number, dataRoot: string): void {
  const kept = path.join(KEPT_STORE, `w${i}`);
  if (!fs.existsSync(kept)) return;
  try {
    fs.mkdirSync(dataRoot, { recursive: true });
    for (const part of KEPT) {
      if (fs.existsSync(path.join(kept, part)))
        fs.renameSync(path.join(kept, part), path.join(dataRoot, part));
    }
  } catch {
    // A store that cannot be taken whole is not taken: the engine starts empty.
    for (const part of KEPT) fs.rmSync(path.join(dataRoot, part), { recursive: true, force: true });
  } finally {
    fs.rmSync(kept, { recursive: true, force: true });
  }
}

/** Moves a stopped engine's images out of its data root, for the next cluster's worker i. */
export function keepImages(i: number, dataRoot: string): void {
  const kept = path.join(KEPT_STORE, `w${i}`);
  fs.rmSync(kept, { recursive: true, force: true });
  fs.mkdirSync(kept, { recursive: true });
  try {
    for (const part of KEPT) fs.renameSync(path.join(dataRoot, part), path.join(kept, part));
  } catch {
    fs.rmSync(kept, { recursive: true, force: true });
  }
}

/** Where `docker save` archives are kept between test files: `<prefix><image id>-<name>.tar`. */
const SAVED_PREFIX = path.join(os.tmpdir(), 'persona-browser-saved-');

/**
 * A `docker save` archive of `image` as this machine's engine holds it now, made once per image
 * id and name (an archive records the name it was saved under): later test files load the same
 * file instead of saving the image again. Written under a temporary name and renamed, so a
 * reader never sees half an archive; archives of images the engine no longer holds are removed.
 */
export async function savedImage(image: string): Promise<string> {
  const id = (
    await runCommand('docker', ['image', 'inspect', '--format', '{{.Id}}', image])
  ).trim();
  const name = crypto.createHash('sha256').update(image).digest('hex').slice(0, 12);
  const file = `${SAVED_PREFIX}${id.replace(/^sha256:/, '').slice(0, 12)}-${name}.tar`;
  for (const other of fs.readdirSync(path.dirname(SAVED_PREFIX))) {
    const full = path.join(path.dirname(SAVED_PREFIX), other);
    const savedId = /^[0-9a-f]{12}(?=-[0-9a-f]{12}\.tar$)/.exec(
      full.startsWith(SAVED_PREFIX) ? full.slice(SAVED_PREFIX.length) : '',
    )?.[0];
    if (!savedId || full === file) continue;
    const held = await runCommand('docker', ['image', 'inspect', savedId]).then(
      () => true,
      () => false,
    );
    if (!held) fs.rmSync(full, { force: true });
  }
  if (fs.existsSync(file)) return file;
  const partial = `${file}.${process.pid}-${crypto.randomBytes(3).toString('hex')}`;
  try {
    await runCommand('docker', ['save', '-o', partial, image], { timeoutMs: 300_000 });
    // The name may have moved to another image meanwhile (a build elsewhere): saved again.
    const now = (
      await runCommand('docker', ['image', 'inspect', '--format', '{{.Id}}', image])
    ).trim();
    if (now !== id) return await savedImage(image);
    fs.renameSync(partial, file);
  } finally {
    fs.rmSync(partial, { force: true });
  }
  return file;
}
