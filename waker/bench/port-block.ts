import net from 'node:net';

/** Whether `port` can be listened on right now. */
const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, () => srv.close(() => resolve(true)));
  });

/**
 * The first of `n` consecutive free ports at or above `from`, below the ephemeral range (where
 * other programs' outgoing connections and `freePort` would take ports from under the fleet).
 */
export async function freeBlock(from: number, n: number): Promise<number> {
  for (let base = from; base + n < 32_768;) {
    let i = 0;
    while (i < n && (await bindable(base + i))) i += 1;
    if (i === n) return base;
    base += i + 1;
  }
  throw new Error(`no ${n} consecutive free ports from ${from}`);
}

/** Whether something accepts a TCP connection on `port` (no bytes sent: no wake). */
export const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
