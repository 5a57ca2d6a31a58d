import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '@persona-browser/service-kit';
import { freePort } from '../ports';
import type { ExitInfo, FoundInstance, InstanceHandle, InstanceSpec, RuntimeDriver } from './types';
import { WORKER_NODE_FLAGS, isAlive, signalGroup, sleep } from '@persona-browser/contracts';

/** Marks in a child's environment, so a restarted waker finds the workers it left. */
const FLEET_VAR = 'PB_WAKER_FLEET';
const PERSONA_VAR = 'PB_WAKER_PERSONA';
const STOP_GRACE_MS = 20_000;
const SUPERVISOR_VARS = ['PB_SUPERVISOR_PID', 'SUPERVISOR_URL'];

export interface ProcessDriverOptions {
  fleetId: string;
  /** The command that runs one worker: default `node <REPO_ROOT>/worker/dist/main.js`. */
  command: string[];
  /** Where workers reach the waker (their metrics relay): http://127.0.0.1:<port>. */
  wakerPort: number;
  logger: Logger;
}

interface Child {
  proc: ChildProcess;
  handle: InstanceHandle;
  stopping: boolean;
  exited: Promise<void>;
  /** The worker's last lines, for a clear message when it dies early. */
  tail: string[];
}

/**
 * Workers as child processes of the waker (a machine without Docker, and the tests). Each runs
 * in its own process group, so its Xvfb and Chromium go with it even when it is killed.
 */
export class ProcessDriver implements RuntimeDriver {
  readonly kind = 'process';
  readonly canPause = false;
  readonly canAdopt = false;
  private readonly children = new Map<string, Child>();
  private readonly listeners: Array<(h: InstanceHandle, info: ExitInfo) => void> = [];

  constructor(private readonly opts: ProcessDriverOptions) {}

  static defaultCommand(repoRoot: string): string[] {
    return [
      process.execPath,
      ...WORKER_NODE_FLAGS,
      path.join(repoRoot, 'worker', 'dist', 'main.js'),
    ];
  }

  async start(spec: InstanceSpec): Promise<InstanceHandle> {
    const port = await freePort();
    const [cmd, ...args] = this.opts.command;
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    // The supervisor's marks name the waker alone (it finds a waker it left by them).
    for (const k of SUPERVISOR_VARS) delete env[k];
    Object.assign(env, spec.env, {
      PERSONA_DIR: spec.personaDir,
      PERSONA_NAME: spec.name,
      PORT: String(port),
      HOST: '127.0.0.1',
      WAKER_URL: `http://127.0.0.1:${this.opts.wakerPort}`,
      [FLEET_VAR]: this.opts.fleetId,
      [PERSONA_VAR]: spec.name,
    });
    if (cmd === undefined) throw new Error('the worker command is empty');
    const proc = spawn(cmd, args, {
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = proc.pid;
    if (pid === undefined) {
      throw new Error(`cannot start ${this.opts.command.join(' ')}`);
    }
    const handle: InstanceHandle = {
      id: String(pid),
      persona: spec.name,
      address: { host: '127.0.0.1', port },
      pid,
    };
    const tail: string[] = [];
    const log = this.opts.logger.child({ persona: spec.name, pid });
    const onLine = (chunk: Buffer): void => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        tail.push(line);
        if (tail.length > 20) tail.shift();
        log.debug('worker output', { line });
      }
    };
    proc.stdout?.on('data', onLine);
    proc.stderr?.on('data', onLine);
    const child: Child = { proc, handle, stopping: false, exited: Promise.resolve(), tail };
    child.exited = new Promise<void>((resolve) =>
      proc.once('exit', (code, signal) => {
        // Whatever the worker left in its group (Xvfb, Chromium after a SIGKILL) goes too.
        signalGroup(pid, 'SIGKILL');
        this.children.delete(handle.id);
        resolve();
        if (child.stopping) return;
        const last = tail.filter((l) => !l.startsWith('{')).slice(-1)[0] ?? '';
        const reason = `${signal ? `killed by ${signal}` : `exited with ${code}`}${last ? `: ${last}` : ''}`;
        for (const l of this.listeners) l(handle, { code, reason });
      }),
    );
    this.children.set(handle.id, child);
    return handle;
  }

  async stop(handle: InstanceHandle): Promise<void> {
    const child = this.children.get(handle.id);
    const pid = handle.pid;
    if (child) {
      child.stopping = true;
      child.proc.kill('SIGTERM');
      // A frozen worker (SIGSTOP, a failed health check) must still get its SIGTERM.
      child.proc.kill('SIGCONT');
      const timer = setTimeout(() => {
        if (pid !== null) signalGroup(pid, 'SIGKILL');
      }, STOP_GRACE_MS);
      await child.exited;
      clearTimeout(timer);
      return;
    }
    // A worker left by an earlier waker: not our child, so poll for its end.
    if (pid === null || !isAlive(pid)) return;
    signalGroup(pid, 'SIGTERM');
    signalGroup(pid, 'SIGCONT');
    const until = Date.now() + STOP_GRACE_MS;
    while (isAlive(pid) && Date.now() < until) await sleep(100);
    signalGroup(pid, 'SIGKILL');
  }

  async findExisting(): Promise<FoundInstance[]> {
    const found: FoundInstance[] = [];
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const pid = Number(entry);
      if (pid === process.pid || this.children.has(entry)) continue;
      let environ: string;
      try {
        environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
      } catch {
        continue;
      }
      const vars = new Map(
        environ
          .split('\0')
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      // Only the worker itself (the group leader), not its Xvfb or Chromium that inherit the env.
      if (vars.get(FLEET_VAR) !== this.opts.fleetId || !isAlive(pid)) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgid !== pid) continue;
      found.push({
        handle: {
          id: entry,
          persona: vars.get(PERSONA_VAR) ?? '',
          address: { host: '127.0.0.1', port: Number(vars.get('PORT')) },
          pid,
        },
        running: true,
        paused: false,
      });
    }
    return found;
  }

  onExit(listener: (h: InstanceHandle, info: ExitInfo) => void): void {
    this.listeners.push(listener);
  }

  /** Last lines a worker printed (for a start failure's message). */
  tail(handle: InstanceHandle): string[] {
    return this.children.get(handle.id)?.tail ?? [];
  }

  async close(): Promise<void> {
    /* nothing of its own */
  }
}
