import type { Duplex } from 'node:stream';

const REASONS: Record<number, string> = {
  401: 'Unauthorized',
  404: 'Not Found',
  423: 'Locked',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Answers a WebSocket upgrade that is not taken with a plain HTTP reply and a JSON body. */
export function refuseUpgrade(socket: Duplex, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(text)}\r\n` +
      'Connection: close\r\n\r\n' +
      text,
  );
}
