import net from 'node:net';
import { boundPort } from '@persona-browser/service-kit';

/** A port the kernel hands out as free on `host` right now. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const port = boundPort(srv);
      srv.close(() => resolve(port));
    });
  });
}
