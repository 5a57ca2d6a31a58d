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

/**
 * The VNC server behind the live view. `VNC_PORT` set: main already started x11vnc there.
 * Otherwise, on the worker's own Xvfb, x11vnc is started on a free localhost port so the live
 * view always works; on an external display without `VNC_PORT` there is none (503 and why).
 */
export async function liveVncTarget(o: {
  vncPort: number | null;
  ownDisplay: boolean;
  display: string;
  logger: Logger;
}): Promise<{ target: VncTarget; started: VncProcess | null }> {
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
    const started = startVnc(o.display, port);
    o.logger.info('vnc for the live view listening on localhost', { port, pid: started.pid });
    return { target: { port }, started };
  } catch (err) {
    const reason = errorMessage(err);
    o.logger.warn('live view unavailable', { reason });
    return { target: { unavailable: reason }, started: null };
  }
}
