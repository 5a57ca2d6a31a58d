import { execFile, spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';

export const SCREEN = '1920x1080x24';

/**
 * Height of the panel a desktop reserves at the bottom of the screen (a taskbar) when the caller
 * names no other: the work area a maximised window gets is the screen less this. Without it
 * `screen.availHeight` equals `screen.height`, which no desktop with a taskbar shows and which
 * detector pages look for.
 */
export const PANEL_HEIGHT = 40;

/**
 * What a desktop's panels take off the screen's edges, in pixels: a taskbar or a dock at the
 * bottom, a menu bar or a top bar at the top.
 */
export interface Panels {
  top: number;
  bottom: number;
}

/** The part of the screen windows may cover (`_NET_WORKAREA`): what browsers call `avail`. */
export interface WorkArea {
  x: number;
  y: number;
  width: number;
  height: number;
}

export class DisplayError extends Error {}

export interface VirtualDisplay {
  /** `:N`, ready for `DISPLAY`. */
  display: string;
  /** The desktop's work area (the screen less its panels), as windows see it. */
  workArea: WorkArea;
  pid: number;
  /** The screen as an XWD file Xvfb keeps up to date (memory-mapped), when it was asked for. */
  framebuffer: string | null;
  stop(): Promise<void>;
}

export interface XvfbOptions {
  /**
   * Keep the screen in `DIR/Xvfb_screen0` (Xvfb's `-fbdir`): an XWD file that can be read
   * without a round trip to the X server (screen recordings). The folder is the caller's: keep
   * it private (it is the whole screen) and in memory (/dev/shm), or every change of the screen
   * is written to disk.
   */
  framebufferDir?: string;
  /** The desktop's panels: the work area is the screen less them. Default: PANEL_HEIGHT below. */
  panels?: Panels;
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
export function startXvfb(
  screen = SCREEN,
  timeoutMs = 10_000,
  options: XvfbOptions = {},
): Promise<VirtualDisplay> {
  if (!binaryExists('Xvfb')) {
    return Promise.reject(
      new DisplayError(
        'Xvfb not found and DISPLAY is not set: install it with `apt-get install xvfb`',
      ),
    );
  }
  let workArea: WorkArea;
  try {
    workArea = workAreaOf(screen, options.panels);
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new DisplayError(String(err)));
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
      // Keep the root window's properties (the work area) when its last client disconnects.
      '-noreset',
      '-ac',
      '+extension',
      'RANDR',
      '-extension',
      'GLX',
      ...(options.framebufferDir ? ['-fbdir', options.framebufferDir] : []),
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
    const fd3 = child.stdio[3];
    // Spawned with a pipe on fd 3, which is a socket: readable.
    if (!(fd3 instanceof Readable)) return fail('no pipe to read its display number from');
    fd3.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /^(\d+)\n/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stderr?.removeAllListeners('data');
      child.stderr?.resume();
      const display = `:${m[1]}`;
      const stop = (): Promise<void> => stopChild(child);
      const pid = child.pid;
      if (pid === undefined) return fail('it has no process id');
      setWorkArea(display, workArea).then(
        () =>
          resolve({
            display,
            pid,
            workArea,
            framebuffer: options.framebufferDir
              ? path.join(options.framebufferDir, 'Xvfb_screen0')
              : null,
            stop,
          }),
        (e: Error) => void stop().then(() => reject(e)),
      );
    });
  });
}

/**
 * The screen (`WxHxD`) less the panels. A panel too tall for the screen, or a negative one, is
 * refused: a work area of no height would give the browser no window.
 */
export function workAreaOf(
  screen: string,
  panels: Panels = { top: 0, bottom: PANEL_HEIGHT },
): WorkArea {
  const m = /^(\d+)x(\d+)(x\d+)?$/.exec(screen);
  if (!m) throw new DisplayError(`screen ${screen} is not WIDTHxHEIGHT[xDEPTH]`);
  const [width, height] = [Number(m[1]), Number(m[2])];
  const { top, bottom } = panels;
  const fits = (n: number): boolean => Number.isInteger(n) && n >= 0;
  if (!fits(top) || !fits(bottom) || top + bottom >= height) {
    throw new DisplayError(
      `panels of ${top} px at the top and ${bottom} px at the bottom do not fit a screen ${height} px high`,
    );
  }
  return { x: 0, y: top, width, height: height - top - bottom };
}

/**
 * Publishes the desktop's work area on the root window (`_NET_WORKAREA`, as a window manager
 * with panels does), so the browser reports the panels' worth less `availHeight` than `height`
 * and a top panel as `availTop`. x11-utils' xprop sets it; no window manager process is needed.
 */
async function setWorkArea(display: string, workArea: WorkArea): Promise<WorkArea> {
  if (!binaryExists('xprop')) {
    throw new DisplayError('xprop not found: install it with `apt-get install x11-utils`');
  }
  const value = `${workArea.x}, ${workArea.y}, ${workArea.width}, ${workArea.height}`;
  await new Promise<void>((resolve, reject) => {
    execFile(
      'xprop',
      [
        '-display',
        display,
        '-root',
        '-f',
        '_NET_WORKAREA',
        '32cccc',
        '-set',
        '_NET_WORKAREA',
        value,
      ],
      { timeout: 5_000 },
      (err) =>
        err ? reject(new DisplayError(`cannot set the work area: ${err.message}`)) : resolve(),
    );
  });
  return workArea;
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
  if (child.pid === undefined) throw new DisplayError('x11vnc could not be started');
  return { pid: child.pid, stop: () => stopChild(child) };
}
