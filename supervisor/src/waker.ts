import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { isAlive, signalGroup, sleep } from '@persona-browser/contracts';

const STOP_GRACE_MS = 60_000;

export interface WakerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The waker's last lines that were not JSON log lines (a crash's message). */
  last: string;
}

export interface WakerOptions {
  command: string[];
  cwd: string;
  /** Set for the waker on top of the supervisor's own environment. */
  env: Record<string, string>;
  /** Each line the waker prints (its JSON logs), passed on as is. */
  onLine(line: string): void;
}

/**
 * The waker as the supervisor's child: its own process group (so its workers go with it when it
 * is stopped), its output passed through, and PB_SUPERVISOR_PID so it ends itself when the
 * supervisor dies.
 */
export class WakerProcess {
  private proc: ChildProcess | null = null;
  private exited: Promise<WakerExit> | null = null;
  private stopping = false;
  private onExit: ((exit: WakerExit) => void) | null = null;

  constructor(private readonly opts: WakerOptions) {}

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  get running(): boolean {
    return this.proc !== null;
  }

  /** Called when the waker ends without `stop` having been asked. */
  whenExits(listener: (exit: WakerExit) => void): void {
    this.onExit = listener;
  }

  /** Resolves with the exit of the current waker (for the health gate: it died). */
  ended(): Promise<WakerExit> | null {
    return this.exited;
  }

  /** Starts the waker with `extra` on top of its environment; answers its pid. */
  start(extra: Record<string, string>): number {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    Object.assign(env, this.opts.env, extra);
    const [cmd, ...args] = this.opts.command;
    if (cmd === undefined) throw new Error('the waker command is empty');
    const proc = spawn(cmd, args, {
      cwd: this.opts.cwd,
      env: { ...env, PB_SUPERVISOR_PID: String(process.pid) },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    this.stopping = false;
    let last = '';
    let partial = '';
    const onData = (chunk: Buffer): void => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.trim()) continue;
        if (!line.startsWith('{')) last = line.trim();
        this.opts.onLine(line);
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    this.exited = new Promise<WakerExit>((resolve) => {
      const ended = (exit: WakerExit): void => {
        if (this.proc !== proc) return;
        this.proc = null;
        resolve(exit);
        if (!this.stopping) this.onExit?.(exit);
      };
      proc.once('exit', (code, signal) => ended({ code, signal, last }));
      // A command that cannot start at all (a missing node or file) ends here, not in 'exit'.
      proc.once('error', (err) => ended({ code: null, signal: null, last: err.message }));
    });
    return proc.pid ?? -1;
  }

  /**
   * SIGTERM (the waker stops every worker cleanly), SIGKILL to the group after the grace.
   * `handOver` asks instead (SIGUSR2) that its workers keep running for the next waker.
   */
  async stop(handOver = false): Promise<void> {
    const proc = this.proc;
    if (!proc || !this.exited) return;
    this.stopping = true;
    proc.kill(handOver ? 'SIGUSR2' : 'SIGTERM');
    const pid = proc.pid;
    const timer = setTimeout(() => {
      if (pid !== undefined) signalGroup(pid, 'SIGKILL');
    }, STOP_GRACE_MS);
    await this.exited;
    clearTimeout(timer);
  }

  /**
   * A waker an earlier supervisor left (killed before it could stop it): asked to stop, and
   * waited for, so the ports are free for the next one.
   */
  static async stopLeftover(pid: number | null): Promise<boolean> {
    if (pid === null || !isAlive(pid) || !isSupervisedWaker(pid)) return false;
    signalGroup(pid, 'SIGTERM');
    const until = Date.now() + STOP_GRACE_MS;
    while (isAlive(pid) && Date.now() < until) await sleep(200);
    signalGroup(pid, 'SIGKILL');
    return true;
  }
}

function isSupervisedWaker(pid: number): boolean {
  try {
    return fs
      .readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .some((v) => v.startsWith('PB_SUPERVISOR_PID='));
  } catch {
    return false;
  }
}
