/**
 * The folder pipe: one step of moving a persona's folder between two nodes, run as a one-shot
 * task on a node with the node's data folder mounted at /data (see protocol.ts).
 *   receive: refuses when /data/<persona> exists; else listens on the overlay, takes one sender
 *            (the one that sends the token first), unpacks its tar stream into
 *            /data/<incoming>, counts what arrived. Any failure removes /data/<incoming>.
 *   send:    streams a tar of /data/<persona> to the receiver, counts what left.
 *   commit:  renames /data/<incoming> to /data/<persona>, never over an existing folder.
 *   remove:  removes /data/<target>.
 * Both ends hash the tar stream and count the folder, so the waker can tell that it arrived
 * whole. Runs as root: tar then keeps every owner and mode (--numeric-owner: the node's user
 * names mean nothing here).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Transform, Writable } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { errnoCode, errorMessage } from '@persona-browser/service-kit';
import type { PipeCounts, PipeMode } from './protocol';
import { DATA_MOUNT, EXIT_EXISTS, EXIT_FAILED, PIPE_PORT, RESULT_PREFIX } from './protocol';
import { isFolderName } from './protocol';

class PipeError extends Error {
  constructor(
    message: string,
    readonly exitCode = EXIT_FAILED,
  ) {
    super(message);
  }
}

const dataDir = process.env.PIPE_DATA ?? DATA_MOUNT;
const port = Number(process.env.PIPE_PORT ?? PIPE_PORT);

/** A folder name from the environment, checked: it may only name a folder in the data folder. */
function folderEnv(name: string): string {
  const value = process.env[name] ?? '';
  if (!isFolderName(value)) throw new PipeError(`${name} is not a folder name: "${value}"`);
  return value;
}

function numberEnv(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** Counts and hashes the bytes that pass through. */
class Meter extends Transform {
  private readonly hash = crypto.createHash('sha256');
  bytes = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done(null, chunk);
  }
  digest(): string {
    return this.hash.digest('hex');
  }
}

/** Everything under a folder (not the folder itself), without following links. */
async function countFolder(dir: string): Promise<Omit<PipeCounts, 'bytes' | 'sha256'>> {
  const counts = { entries: 0, files: 0, fileBytes: 0 };
  const walk = async (d: string): Promise<void> => {
    for (const entry of await fs.promises.readdir(d, { withFileTypes: true })) {
      counts.entries++;
      const full = path.join(d, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) {
        counts.files++;
        counts.fileBytes += (await fs.promises.lstat(full)).size;
      }
    }
  };
  await walk(dir);
  return counts;
}

const exists = (p: string): Promise<boolean> =>
  fs.promises.lstat(p).then(
    () => true,
    (err: unknown) => {
      if (errnoCode(err) === 'ENOENT') return false;
      throw err;
    },
  );

/** A tar process; `done` resolves when it exited 0, else rejects with its stderr. */
function tar(args: string[], stdio: ['pipe' | 'ignore', 'pipe' | 'ignore']) {
  const child = spawn('tar', args, { stdio: [...stdio, 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolve();
      else reject(new PipeError(`tar ${args[0]} failed (${signal ?? `exit ${code}`}): ${stderr}`));
    });
  });
  return { child, done };
}

/**
 * Writes into tar's stdin while tar reads it. tar stops reading at the archive's end marker and
 * may exit before the padding after it has come: the rest of the stream still passes through
 * (the hash covers all of it) and is dropped. Whether tar succeeded is its exit code's to say.
 */
function feed(stdin: Writable): Writable {
  let open = true;
  const shut = (): void => {
    open = false;
  };
  stdin.on('error', shut);
  stdin.on('close', shut);
  return new Writable({
    write(chunk: Buffer, _enc, done): void {
      if (!open || stdin.write(chunk)) return done();
      const go = (): void => {
        stdin.off('drain', go);
        stdin.off('close', go);
        done();
      };
      stdin.on('drain', go);
      stdin.on('close', go);
    },
    final(done): void {
      if (open) stdin.end();
      done();
    },
  });
}

/** Waits for the sender that first sends `token\n`; others are dropped. */
function acceptSender(token: string, waitMs: number): Promise<net.Socket> {
  const header = Buffer.from(`${token}\n`);
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => {
      let head = Buffer.alloc(0);
      socket.on('error', () => socket.destroy());
      const onData = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk]);
        if (head.length < header.length) return;
        socket.off('data', onData);
        socket.pause();
        if (!crypto.timingSafeEqual(head.subarray(0, header.length), header)) {
          socket.destroy();
          return;
        }
        clearTimeout(timer);
        server.close();
        const rest = head.subarray(header.length);
        if (rest.length) socket.unshift(rest);
        resolve(socket);
      };
      socket.on('data', onData);
    });
    const timer = setTimeout(() => {
      server.close();
      reject(new PipeError(`no sender connected within ${waitMs} ms`));
    }, waitMs);
    server.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    server.listen(port, '0.0.0.0');
  });
}

/** Connects to the receiver, trying again until it resolves and listens or time runs out. */
async function connectReceiver(host: string, waitMs: number): Promise<net.Socket> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(port, host);
        socket.once('connect', () => {
          socket.off('error', reject);
          resolve(socket);
        });
        socket.once('error', reject);
      });
    } catch (err) {
      if (Date.now() > deadline) {
        throw new PipeError(`cannot reach the receiver ${host}:${port}: ${errorMessage(err)}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Set while a receiver unpacks: what a stop signal must undo. */
let undoOnSignal: { tar: ChildProcess | null; incoming: string } | null = null;

async function receive(): Promise<PipeCounts> {
  const persona = folderEnv('PIPE_PERSONA');
  const incoming = path.join(dataDir, folderEnv('PIPE_INCOMING'));
  if (await exists(path.join(dataDir, persona))) {
    throw new PipeError(`${persona} already exists here: it is never overwritten`, EXIT_EXISTS);
  }
  // Not recursive: an incoming folder of that name already there is a refusal too.
  await fs.promises.mkdir(incoming, { mode: 0o700 });
  undoOnSignal = { tar: null, incoming };
  try {
    const socket = await acceptSender(folderEnv('PIPE_TOKEN'), numberEnv('PIPE_WAIT_MS', 60_000));
    const unpack = ['-x', '--numeric-owner', '--same-owner', '--same-permissions', '-f', '-'];
    const { child, done } = tar([...unpack, '-C', incoming], ['pipe', 'ignore']);
    undoOnSignal.tar = child;
    const meter = new Meter();
    // A tar that failed ends the stream at once; its own words say more than the broken pipe.
    done.catch(() => socket.destroy());
    const streamed = child.stdin ? pipeline(socket, meter, feed(child.stdin)) : Promise.resolve();
    const [untarred, piped] = await Promise.allSettled([done, streamed]);
    if (untarred.status === 'rejected') throw untarred.reason;
    if (piped.status === 'rejected') throw piped.reason;
    socket.destroy();
    return { bytes: meter.bytes, sha256: meter.digest(), ...(await countFolder(incoming)) };
  } catch (err) {
    await fs.promises.rm(incoming, { recursive: true, force: true });
    throw err;
  } finally {
    undoOnSignal = null;
  }
}

async function send(): Promise<PipeCounts> {
  const persona = folderEnv('PIPE_PERSONA');
  const source = path.join(dataDir, persona);
  const stat = await fs.promises.lstat(source).catch(() => null);
  if (!stat?.isDirectory()) throw new PipeError(`there is no folder ${persona} here`);
  const counts = await countFolder(source);
  const peer = process.env.PIPE_PEER ?? '';
  const socket = await connectReceiver(peer, numberEnv('PIPE_WAIT_MS', 60_000));
  socket.write(`${folderEnv('PIPE_TOKEN')}\n`);
  const pack = ['-c', '--numeric-owner', '-f', '-', '-C', source, '.'];
  const { child, done } = tar(pack, ['ignore', 'pipe']);
  const meter = new Meter();
  const streamed = child.stdout ? pipeline(child.stdout, meter, socket) : Promise.resolve();
  const [tarred, piped] = await Promise.allSettled([done, streamed]);
  if (tarred.status === 'rejected') throw tarred.reason;
  if (piped.status === 'rejected') throw piped.reason;
  return { bytes: meter.bytes, sha256: meter.digest(), ...counts };
}

async function commit(): Promise<{ committed: true }> {
  const persona = folderEnv('PIPE_PERSONA');
  const incoming = path.join(dataDir, folderEnv('PIPE_INCOMING'));
  const target = path.join(dataDir, persona);
  // rename(2) would put a folder over an empty one without a word: look first.
  if (await exists(target)) {
    throw new PipeError(`${persona} already exists here: it is never overwritten`, EXIT_EXISTS);
  }
  const stat = await fs.promises.lstat(incoming).catch(() => null);
  if (!stat?.isDirectory()) throw new PipeError(`there is no folder ${path.basename(incoming)}`);
  await fs.promises.rename(incoming, target);
  return { committed: true };
}

async function remove(): Promise<{ existed: boolean }> {
  const target = path.join(dataDir, folderEnv('PIPE_TARGET'));
  const existed = await exists(target);
  await fs.promises.rm(target, { recursive: true, force: true });
  return { existed };
}

/** A new persona's folder on the node that will hold it: a bind mount's source must exist. */
async function make(): Promise<{ made: boolean }> {
  const target = path.join(dataDir, folderEnv('PIPE_PERSONA'));
  const made = !(await exists(target));
  await fs.promises.mkdir(target, { recursive: true });
  return { made };
}

const modes: Record<PipeMode, () => Promise<object>> = { receive, send, commit, remove, make };

function isMode(mode: string): mode is PipeMode {
  return Object.keys(modes).includes(mode);
}

process.on('SIGTERM', () => {
  // Stopped (the waker gave up on the move): leave no half-unpacked folder behind.
  if (undoOnSignal) {
    undoOnSignal.tar?.kill('SIGKILL');
    fs.rmSync(undoOnSignal.incoming, { recursive: true, force: true });
  }
  process.exit(143);
});

const mode = process.argv[2] ?? '';
(isMode(mode) ? modes[mode]() : Promise.reject(new PipeError(`unknown mode "${mode}"`))).then(
  (result) => {
    process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
  },
  (err: unknown) => {
    process.stderr.write(`folder-pipe ${mode}: ${errorMessage(err)}\n`);
    process.exitCode = err instanceof PipeError ? err.exitCode : EXIT_FAILED;
  },
);
