import http from 'node:http';
import { boundPort, isRecord, listen } from '../src';

describe('isRecord', () => {
  test('objects and arrays can be read field by field; null and scalars cannot', () => {
    expect([{}, { a: 1 }, [], new Error('x')].map(isRecord)).toEqual([true, true, true, true]);
    expect([null, undefined, 'text', 3, true].map(isRecord)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('boundPort', () => {
  test('the port the kernel chose for a server asked for port 0; none before it listens', async () => {
    const server = http.createServer();
    expect(() => boundPort(server)).toThrow('the server is not listening on a TCP port');
    await listen(server, 0, '127.0.0.1');
    try {
      const port = boundPort(server);
      expect(port).toBeGreaterThan(0);
      const status = await new Promise<number | undefined>((resolve, reject) => {
        server.once('request', (_req, res: http.ServerResponse) => res.end('ok'));
        http.get(`http://127.0.0.1:${port}/`, (res) => resolve(res.statusCode)).on('error', reject);
      });
      expect(status).toBe(200);
    } finally {
      server.close();
    }
  });
});
