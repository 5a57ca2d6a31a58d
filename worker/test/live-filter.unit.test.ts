import { createLogger, redactUrlSecrets } from '@persona-browser/service-kit';
import { EXTENDED_MOUSE_BUTTONS, RfbClientFilter, RfbProtocolError } from '../src/live/rfb-filter';

/** The client half of RFB as the bridge frames it, fed in arbitrary pieces. */

const handshake = Buffer.concat([Buffer.from('RFB 003.008\n', 'latin1'), Buffer.from([1, 0])]);
const pointer = Buffer.from([5, 1, 0, 10, 0, 20]);
const key = Buffer.from([4, 1, 0, 0, 0, 0, 0, 0x61]);
const update = Buffer.from([3, 0, 0, 0, 0, 0, 0, 16, 0, 16]);
const cut = Buffer.concat([Buffer.from([6, 0, 0, 0, 0, 0, 0, 3]), Buffer.from('abc')]);
const qemuKey = Buffer.from([255, 0, 0, 1, 0, 0, 0, 0x61, 0, 0, 0, 30]);
const resize = Buffer.concat([Buffer.from([251, 0, 4, 0, 3, 0, 1, 0]), Buffer.alloc(16)]);
const fence = Buffer.concat([Buffer.from([248, 0, 0, 0, 0, 0, 0, 1, 2]), Buffer.from('ok')]);
const continuous = Buffer.from([150, 1, 0, 0, 0, 0, 0, 16, 0, 16]);
const xvp = Buffer.from([250, 0, 1, 2]);

function feed(f: RfbClientFilter, bytes: Buffer, piece: number): Buffer {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += piece) out.push(f.push(bytes.subarray(i, i + piece)));
  return Buffer.concat(out);
}

test.each([1, 3, 7, 1000])(
  'without control only the non-input messages pass (pieces of %i)',
  (piece) => {
    const f = new RfbClientFilter(() => false);
    const all = Buffer.concat([
      handshake,
      pointer,
      update,
      key,
      cut,
      qemuKey,
      resize,
      fence,
      continuous,
      xvp,
    ]);
    const out = feed(f, all, piece);
    // ClientInit goes on as shared (1) whatever the client asked.
    expect(out).toEqual(
      Buffer.concat([
        Buffer.from('RFB 003.008\n', 'latin1'),
        Buffer.from([1, 1]),
        update,
        fence,
        continuous,
      ]),
    );
  },
);

test('with control the input passes byte for byte (xvp never does)', () => {
  const f = new RfbClientFilter(() => true);
  const msgs = Buffer.concat([pointer, key, cut, qemuKey, resize, update]);
  const out = feed(f, Buffer.concat([handshake, msgs, xvp]), 5);
  expect(out.subarray(14)).toEqual(msgs);
});

test('control is asked per message: input stops passing the moment it ends', () => {
  let allowed = true;
  const f = new RfbClientFilter(() => allowed);
  f.push(handshake);
  expect(f.push(pointer)).toEqual(pointer);
  allowed = false;
  expect(f.push(pointer).length).toBe(0);
});

test('SetEncodings loses the extended pointer pseudo-encoding, so PointerEvent keeps 6 bytes', () => {
  const f = new RfbClientFilter(() => false);
  f.push(handshake);
  const msg = Buffer.alloc(4 + 12);
  msg[0] = 2;
  msg.writeUInt16BE(3, 2);
  msg.writeInt32BE(7, 4);
  msg.writeInt32BE(EXTENDED_MOUSE_BUTTONS, 8);
  msg.writeInt32BE(0, 12);
  const out = f.push(msg);
  expect(out.readUInt16BE(2)).toBe(2);
  expect([out.readInt32BE(4), out.readInt32BE(8)]).toEqual([7, 0]);
});

test('extended clipboard (negative length) is framed by its absolute length', () => {
  const f = new RfbClientFilter(() => false);
  f.push(handshake);
  const ext = Buffer.concat([Buffer.from([6, 0, 0, 0, 0xff, 0xff, 0xff, 0xfc]), Buffer.alloc(4)]);
  expect(f.push(Buffer.concat([ext, update]))).toEqual(update);
});

test('anything unframeable ends the session', () => {
  const bad = [
    Buffer.from('HTTP/1.1 200\r\n'),
    Buffer.concat([Buffer.from('RFB 003.008\n', 'latin1'), Buffer.from([2])]),
    Buffer.concat([handshake, Buffer.from([99])]),
    Buffer.concat([handshake, Buffer.from([255, 1, 0, 0])]),
    Buffer.concat([handshake, Buffer.from([6, 0, 0, 0, 0x7f, 0, 0, 0])]),
  ];
  for (const b of bad)
    expect(() => new RfbClientFilter(() => true).push(b)).toThrow(RfbProtocolError);
});

test('RFB 3.3 has no security choice from the client', () => {
  const f = new RfbClientFilter(() => false);
  const out = f.push(
    Buffer.concat([Buffer.from('RFB 003.003\n', 'latin1'), Buffer.from([0]), update]),
  );
  expect(out.subarray(12)).toEqual(Buffer.concat([Buffer.from([1]), update]));
});

test('key= and token= values in URLs never reach a log line', () => {
  expect(redactUrlSecrets('/vnc/?key=s3cret&x=1#token=abc')).toBe(
    '/vnc/?key=[redacted]&x=1#token=[redacted]',
  );
  expect(redactUrlSecrets('GET /vnc/?api_key=zz other')).toBe('GET /vnc/?api_key=[redacted] other');
  const lines: string[] = [];
  const logger = createLogger({ secrets: [] });
  logger.transports[0]!.log = (info: unknown, next: () => void) => {
    lines.push(JSON.stringify(info));
    next();
  };
  logger.info('request', { url: '/vnc/?key=abc123secret', note: 'see /vnc/#key=abc123secret' });
  expect(lines).toHaveLength(1);
  expect(lines.join('\n')).not.toContain('abc123secret');
});
