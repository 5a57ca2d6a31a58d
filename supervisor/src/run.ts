import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signalGroup } from '@persona-browser/contracts';

/** How much of a command's output its error carries: the end, where the reason is. */
const DETAIL_LINES = 20;
const DETAIL_CHARS = 2_000;

/** A remote URL may carry credentials (https://user:token@host/…): never in a message. */
export function redactCredentials(text: string): string {
  return text.replace(/\/\/[^/@\s]+@/g, '//[redacted]@');
}

/**
 * A command's reason in its own words: the last lines it printed (blank ones and progress
 * redraws dropped), at most DETAIL_LINES and DETAIL_CHARS of them, credentials taken out.
 */
export function commandDetail(output: string): string {
  const lines = redactCredentials(output)
    .split(/\r?\n/)
    .map((line) => (line.split('\r').at(-1) ?? '').trimEnd())
    .filter((line) => line.trim() !== '');
  let text = lines.slice(-DETAIL_LINES).join('\n');
  if (text.length > DETAIL_CHARS) text = `…${text.slice(-DETAIL_CHARS)}`;
  return text;
}

/** A command that ended with a non-zero status, or ran out of time. */
export class CommandError extends Error {
  /** What the command printed last, in its own words (commandDetail). */
  readonly detail: string;

  constructor(
    readonly command: string,
    output: string,
    code: number | null,
    timedOutMs: number | null = null,
  ) {
    const detail = commandDetail(output);
    const how =
      timedOutMs !== null
        ? `timed out after ${timedOutMs / 1000} s`
        : `failed (${code === null ? 'killed' : `exit ${code}`})`;
    super(`${redactCredentials(command)} ${how}${detail ? `: ${detail}` : ''}`);
    this.detail = detail;
  }
}

/** A user to run commands as: the owner of the checkout, when the supervisor runs as root. */
export interface RunAs {
  uid: number;
  gid: number;
  /** A home of its own (npm's cache), made for it. */
  home: string;
}

export interface RunOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  as?: RunAs | null;
}

/**
 * Root running on someone's checkout (the supervisor's container) acts as the checkout's owner,
 * so the objects git writes, node_modules and the build stay theirs; null otherwise.
 */
export function checkoutOwner(dir: string): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  const { uid, gid } = fs.statSync(dir);
  if (uid === 0) return null;
  const home = path.join(os.tmpdir(), `pb-supervisor-home-${uid}`);
  fs.mkdirSync(home, { recursive: true, mode: 0o700 });
  fs.chownSync(home, uid, gid);
  return { uid, gid, home };
}

/**
 * Runs a command to its end and resolves with its stdout; rejects with CommandError holding
 * the end of what it printed (stdout and stderr as they came). A timeout kills the command's whole process group.
 */
export function run(cmd: string, args: string[], opts: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const as = opts.as ?? null;
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: as ? { ...(opts.env ?? process.env), HOME: as.home } : (opts.env ?? process.env),
      ...(as ? { uid: as.uid, gid: as.gid } : {}),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const out: Buffer[] = [];
    let tail = '';
    const keep = (chunk: Buffer): void => {
      tail = (tail + chunk.toString()).slice(-4_000);
    };
    child.stdout.on('data', (c: Buffer) => {
      out.push(c);
      keep(c);
    });
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          if (child.pid !== undefined) signalGroup(child.pid, 'SIGKILL');
        }, opts.timeoutMs)
      : null;
    child.once('error', (err) => {
      if (timer) clearTimeout(timer);
      reject(new CommandError(`${cmd} ${args.join(' ')}`, err.message, null));
    });
    child.once('close', (code) => {
      if (timer) clearTimeout(timer);
      if (code === 0) resolve(Buffer.concat(out).toString());
      else {
        const limit = timedOut ? (opts.timeoutMs ?? null) : null;
        reject(new CommandError(`${cmd} ${args.join(' ')}`, tail, code, limit));
      }
    });
  });
}
