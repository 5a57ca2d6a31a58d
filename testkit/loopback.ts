import type http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A stand-in site on loopback, for the tests and benchmarks. */
export interface LoopbackSite {
  url: string;
  close: () => Promise<void>;
}

/** Listens on an ephemeral loopback port; `close` drops open connections first. */
export async function listenLoopback(server: http.Server): Promise<LoopbackSite> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
