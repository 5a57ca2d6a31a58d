import net from 'node:net';
import { startVnc } from '@persona-browser/xvfb';
import type { Logger } from '@persona-browser/service-kit';
import { errorMessage } from '../errors';
import type { VncTarget } from './index';

export interface VncProcess {
  pid: number;
  stop(): Promise<void>;
}

async function freeLoopbackPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', resolve);
  });
  const address = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  // A TCP server listening on a host and port has an address object (a string is a pipe's).
  if (address === null || typeof address === 'string') throw new Error('no loopback port');
  return address.port;
}

/** How long x11vnc stays after the last viewer left (a reload reconnects within this). */
export const VNC_LINGER_MS = 5_000;

/**
 * x11vnc on the worker's own display while someone watches: started when the first viewer's
 * WebSocket opens, stopped `lingerMs` after the last one closed. An idle persona thus holds no
 * VNC server (x11vnc's 10 MB, `npm run bench`, memory). The bridge retries its connection while
 * x11vnc starts. One owner: only this class starts or stops that x11vnc.
 */
export class OnDemandVnc {
  private proc: VncProcess | null = null;
  private viewers = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The last x11vnc exiting: it holds the port until it is gone. */
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly display: string,
    readonly port: number,
    private readonly logger: Logger,
    private readonly lingerMs = VNC_LINGER_MS,
  ) {}

  /** A viewer came: x11vnc runs from now on (false when it cannot start; the bridge says so). */
  acquire(): boolean {
    this.viewers += 1;
    this.cancelLinger();
    if (this.proc || this.stopped) return this.proc !== null;
    if (this.stopping) {
      // A new x11vnc now could not bind the port: it starts once the last one is gone (the
      // bridge waits for `ready`, then retries its connection while x11vnc starts).
      void this.stopping
        .catch(() => undefined)
        .then(() => {
          if (this.viewers > 0 && !this.proc && !this.stopped) this.start();
        });
      return true;
    }
    return this.start();
  }

  private start(): boolean {
    try {
      this.proc = startVnc(this.display, this.port);
    } catch (err) {
      this.logger.warn('live view: x11vnc did not start', { reason: errorMessage(err) });
      return false;
    }
    this.logger.info('vnc for the live view listening on localhost', {
      port: this.port,
      pid: this.proc.pid,
    });
    return true;
  }

  /** Resolves once no x11vnc is exiting: one that still holds the port would drop a viewer. */
  ready(): Promise<void> {
    return this.stopping ? this.stopping.catch(() => undefined) : Promise.resolve();
  }

  /** A viewer left: x11vnc stops once none came back within the linger. */
  release(): void {
    this.viewers = Math.max(0, this.viewers - 1);
    if (this.viewers > 0 || !this.proc) return;
    this.cancelLinger();
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.stopServer('no viewer');
    }, this.lingerMs);
    this.timer.unref();
  }

  /** The worker stops: x11vnc goes now, and no viewer starts it again. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelLinger();
    await this.stopServer('worker stopping');
  }

  private cancelLinger(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async stopServer(why: string): Promise<void> {
    const proc = this.proc;
    this.proc = null;
    if (!proc) return;
    const exited = proc.stop();
    this.stopping = exited;
    try {
      await exited;
    } finally {
      if (this.stopping === exited) this.stopping = null;
    }
    this.logger.info('vnc for the live view stopped', { pid: proc.pid, reason: why });
  }
}

/**
 * The VNC server behind the live view. `VNC_PORT` set: main already started x11vnc there.
 * Otherwise, on the worker's own Xvfb, x11vnc is started on a free localhost port while a
 * viewer is connected (OnDemandVnc); on an external display without `VNC_PORT` there is none
 * (503 and why).
 */
export async function liveVncTarget(o: {
  vncPort: number | null;
  ownDisplay: boolean;
  display: string;
  logger: Logger;
}): Promise<{ target: VncTarget; started: OnDemandVnc | null }> {
  if (o.vncPort) return { target: { port: o.vncPort }, started: null };
  if (!o.ownDisplay) {
    return {
      target: {
        unavailable:
          `the worker shows its browser on the external display ${o.display} and VNC_PORT is ` +
          'not set; set VNC_PORT to have the worker run x11vnc on that display',
      },
      started: null,
    };
  }
  try {
    const port = await freeLoopbackPort();
    const vnc = new OnDemandVnc(o.display, port, o.logger);
    return { target: { port, demand: vnc }, started: vnc };
  } catch (err) {
    const reason = errorMessage(err);
    o.logger.warn('live view unavailable', { reason });
    return { target: { unavailable: reason }, started: null };
  }
}
