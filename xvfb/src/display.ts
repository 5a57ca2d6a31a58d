import { spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import fs from 'node:fs';

export const SCREEN = '1920x1080x24';

export class DisplayError extends Error {}

export interface VirtualDisplay {
  /** `:N`, ready for `DISPLAY`. */
  display: string;
  pid: number;
  stop(): Promise<void>;
}

function binaryExists(name: string): boolean {
  return (process.env.PATH ?? '/usr/bin:/bin')
    .split(':')
    .some((dir) => fs.existsSync(`${dir}/${name}`));
}

/**
 * Spawns `command` so that it dies with this process however this process ends (even by
 * SIGKILL): through util-linux's setpriv, which asks the kernel to send SIGTERM when the parent
 * goes, then executes the command in place (same pid). Where setpriv is missing the command
 * runs plainly and outlives a killed parent.
 */
function spawnTied(command: string, args: string[], options: SpawnOptions): ChildProcess {
  if (binaryExists('setpriv')) {
    return spawn('setpriv', ['--pdeathsig', 'TERM', '--', command, ...args], options);
  }
  return spawn(command, args, options);
}

function stopChild(child: ChildProcess, graceMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts Xvfb on a free display number. Xvfb picks the number itself (`-displayfd`) and
 * writes it once it accepts connections, so there is no race with another display and no
 * polling for readiness. It ends with this process, whatever way this process ends.
 */
export function startXvfb(screen = SCREEN, timeoutMs = 10_000): Promise<VirtualDisplay> {
  if (!binaryExists('Xvfb')) {
    return Promise.reject(
      new DisplayError(
        'Xvfb not found and DISPLAY is not set: install it with `apt-get install xvfb`',
      ),
    );
  }
  const child = spawnTied(
    'Xvfb',
    // No GLX: the browser composites in software, and Mesa's GL costs Xvfb ~30 MB (npm run bench).
    [
      '-displayfd',
      '3',
      '-screen',
      '0',
      screen,
      '-nolisten',
      'tcp',
      '-ac',
      '+extension',
      'RANDR',
      '-extension',
      'GLX',
    ],
    { stdio: ['ignore', 'ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const fail = (why: string): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(
        new DisplayError(`Xvfb did not start: ${why}${err ? ` (${err.trim().slice(-300)})` : ''}`),
      );
    };
    const timer = setTimeout(() => fail('timed out'), timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.once('error', (e) => fail(e.message));
    child.once('exit', (code) => fail(`exited with ${code}`));
    const fd3 = child.stdio[3] as NodeJS.ReadableStream;
    fd3.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^(\d+)\n/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stderr?.removeAllListeners('data');
      child.stderr?.resume();
      resolve({ display: `:${m[1]}`, pid: child.pid as number, stop: () => stopChild(child) });
    });
  });
}

/** x11vnc on the display, bound to localhost only: watch it through an SSH tunnel or the bridge. */
export function startVnc(display: string, port: number): { pid: number; stop(): Promise<void> } {
  if (!binaryExists('x11vnc')) {
    throw new DisplayError('VNC_PORT is set but x11vnc is not installed: `apt-get install x11vnc`');
  }
  const child = spawnTied(
    'x11vnc',
    [
      '-display',
      display,
      '-rfbport',
      String(port),
      '-localhost',
      '-forever',
      '-shared',
      '-nopw',
      '-quiet',
    ],
    { stdio: 'ignore' },
  );
  return { pid: child.pid as number, stop: () => stopChild(child) };
}
