/**
 * The client→server half of an RFB session (RFC 6143, with the extensions noVNC sends), parsed
 * so that a viewer without control cannot touch the display: input messages (keys, pointer,
 * clipboard, desktop resize) are dropped unless `allowInput()` says yes. A viewer confined to
 * one page (`confinedTop()` not null) loses what would take it off that page as well
 * (confined-input.ts). Everything else passes byte for byte, in order. Anything this parser does
 * not understand ends the session: a stream we cannot frame is a stream we cannot filter.
 */

import { ConfinedInput } from './confined-input';

export class RfbProtocolError extends Error {}

/** Client message types (RFC 6143 §7.5 and the community registry). */
export const MSG = {
  SetPixelFormat: 0,
  SetEncodings: 2,
  FramebufferUpdateRequest: 3,
  KeyEvent: 4,
  PointerEvent: 5,
  ClientCutText: 6,
  EnableContinuousUpdates: 150,
  ClientFence: 248,
  Xvp: 250,
  SetDesktopSize: 251,
  Qemu: 255,
} as const;

/**
 * Pseudo-encoding of the extended pointer event (7 bytes instead of 6). Taken out of every
 * SetEncodings, so the server never enables it and a PointerEvent always has one size.
 */
export const EXTENDED_MOUSE_BUTTONS = -316;

/** Clipboard payloads (either way of encoding them) above this end the session. */
export const MAX_CUT_TEXT = 10 * 1024 * 1024;
const MAX_SCREENS = 255;
const INPUT = new Set<number>([
  MSG.KeyEvent,
  MSG.PointerEvent,
  MSG.ClientCutText,
  MSG.SetDesktopSize,
]);

type Phase = 'version' | 'security' | 'init' | 'messages';

export interface FilterStats {
  forwarded: number;
  dropped: number;
}

export class RfbClientFilter {
  private phase: Phase = 'version';
  private buf: Buffer = Buffer.alloc(0);
  /** Per message type: how many were forwarded and dropped (tests and logs). */
  readonly counts = new Map<number, FilterStats>();
  private readonly input = new ConfinedInput();

  constructor(
    private readonly allowInput: () => boolean,
    /**
     * While the viewer drives a page-limited control: the screen row where that page's content
     * begins (presses above it are dropped); null otherwise.
     */
    private readonly confinedTop: () => number | null = () => null,
  ) {}

  /** Feeds bytes from the client; returns what may go on to the server (possibly nothing). */
  push(chunk: Buffer): Buffer {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: Buffer[] = [];
    for (;;) {
      const n = this.next(out);
      if (n === 0) break;
      this.buf = this.buf.subarray(n);
    }
    const [only] = out;
    return out.length === 1 && only ? only : Buffer.concat(out);
  }

  /** Handles one complete unit at the head of the buffer; returns its length, 0 when incomplete. */
  private next(out: Buffer[]): number {
    const b = this.buf;
    switch (this.phase) {
      case 'version': {
        if (b.length < 12) return 0;
        const text = b.subarray(0, 12).toString('latin1');
        const m = /^RFB (\d{3})\.(\d{3})\n$/.exec(text);
        if (!m) throw new RfbProtocolError('not an RFB protocol version');
        const minor = Number(m[2]);
        // 3.3: the server alone picks the security type, the client answers nothing.
        this.phase = Number(m[1]) === 3 && minor < 7 ? 'init' : 'security';
        out.push(b.subarray(0, 12));
        return 12;
      }
      case 'security': {
        if (b.length < 1) return 0;
        // Only "None": the server this bridge talks to is ours and asks for no password; any
        // other choice would bring client bytes (responses, credentials) we do not frame.
        if (b[0] !== 1) throw new RfbProtocolError(`security type ${b[0]} is not offered`);
        this.phase = 'init';
        out.push(b.subarray(0, 1));
        return 1;
      }
      case 'init': {
        if (b.length < 1) return 0;
        // ClientInit: always shared, so no viewer can make the server drop the others.
        this.phase = 'messages';
        out.push(Buffer.from([1]));
        return 1;
      }
      case 'messages':
        return this.message(out);
    }
  }

  private message(out: Buffer[]): number {
    const b = this.buf;
    if (b.length < 1) return 0;
    const type = b.readUInt8(0);
    const len = messageLength(b);
    if (len === 0) return 0;
    const msg = b.subarray(0, len);
    if (type === MSG.SetEncodings) {
      this.count(type, true);
      out.push(withoutEncoding(msg, EXTENDED_MOUSE_BUTTONS));
    } else if (type === MSG.Xvp) {
      // Power operations on the server machine: never for a viewer.
      this.count(type, false);
    } else if (type === MSG.KeyEvent) {
      this.forwardIf(out, msg, this.keyPasses(msg.readUInt32BE(4), msg[1] !== 0));
    } else if (type === MSG.PointerEvent) {
      this.forwardPointer(out, msg);
    } else if (type === MSG.Qemu) {
      // The only QEMU message framed here is the extended key event: input. A confined viewer
      // gets none (its key may be a keycode alone; the VNC server here asks for plain keys).
      this.forwardIf(out, msg, this.allowInput() && this.confinedTop() === null);
    } else if (INPUT.has(type)) {
      // Clipboard and desktop size; a confined viewer does not resize the display.
      const resize = type === MSG.SetDesktopSize;
      this.forwardIf(out, msg, this.allowInput() && !(resize && this.confinedTop() !== null));
    } else {
      this.forwardIf(out, msg, true);
    }
    return len;
  }

  /** Every key event is shown to `input`, so it knows the modifiers held when control begins. */
  private keyPasses(keysym: number, down: boolean): boolean {
    const allowed = this.allowInput();
    const confined = allowed && this.confinedTop() !== null;
    return this.input.key(keysym, down, confined) && allowed;
  }

  private forwardPointer(out: Buffer[], msg: Buffer): void {
    const allowed = this.allowInput();
    const mask = msg.readUInt8(1);
    const kept = allowed ? this.input.pointer(mask, msg.readUInt16BE(4), this.confinedTop()) : 0;
    if (!allowed || kept === mask) {
      this.forwardIf(out, msg, allowed);
      return;
    }
    // A press on the browser's bars: the pointer moves there, no button goes down.
    const moved = Buffer.from(msg);
    moved[1] = kept;
    this.count(MSG.PointerEvent, false);
    out.push(moved);
  }

  private forwardIf(out: Buffer[], msg: Buffer, forwarded: boolean): void {
    this.count(msg.readUInt8(0), forwarded);
    if (forwarded) out.push(msg);
  }

  private count(type: number, forwarded: boolean): void {
    const c = this.counts.get(type) ?? { forwarded: 0, dropped: 0 };
    if (forwarded) c.forwarded += 1;
    else c.dropped += 1;
    this.counts.set(type, c);
  }
}

/**
 * The full length of the client message at the head of `b`, or 0 while it is incomplete.
 * Throws for a type (or QEMU subtype) this bridge does not know, or an oversized payload.
 */
export function messageLength(b: Buffer): number {
  if (b.length < 1) return 0;
  const type = b.readUInt8(0);
  const need = (n: number): number => (b.length >= n ? n : 0);
  switch (type) {
    case MSG.SetPixelFormat:
      return need(20);
    case MSG.SetEncodings: {
      if (b.length < 4) return 0;
      return need(4 + 4 * b.readUInt16BE(2));
    }
    case MSG.FramebufferUpdateRequest:
      return need(10);
    case MSG.KeyEvent:
      return need(8);
    case MSG.PointerEvent:
      return need(6);
    case MSG.ClientCutText: {
      if (b.length < 8) return 0;
      // A negative length is the extended clipboard's (its payload is |length| bytes).
      const size = Math.abs(b.readInt32BE(4));
      if (size > MAX_CUT_TEXT) throw new RfbProtocolError(`clipboard of ${size} bytes`);
      return need(8 + size);
    }
    case MSG.EnableContinuousUpdates:
      return need(10);
    case MSG.ClientFence: {
      if (b.length < 9) return 0;
      const size = b.readUInt8(8);
      if (size > 64) throw new RfbProtocolError(`fence payload of ${size} bytes`);
      return need(9 + size);
    }
    case MSG.Xvp:
      return need(4);
    case MSG.SetDesktopSize: {
      if (b.length < 8) return 0;
      const screens = b.readUInt8(6);
      if (screens > MAX_SCREENS) throw new RfbProtocolError(`${screens} screens`);
      return need(8 + 16 * screens);
    }
    case MSG.Qemu: {
      if (b.length < 2) return 0;
      if (b[1] !== 0) throw new RfbProtocolError(`QEMU client message subtype ${b[1]}`);
      return need(12);
    }
    default:
      throw new RfbProtocolError(`unknown client message type ${type}`);
  }
}

/** A SetEncodings message with one encoding taken out of its list. */
function withoutEncoding(msg: Buffer, encoding: number): Buffer {
  const count = msg.readUInt16BE(2);
  const kept: number[] = [];
  for (let i = 0; i < count; i++) {
    const e = msg.readInt32BE(4 + 4 * i);
    if (e !== encoding) kept.push(e);
  }
  if (kept.length === count) return msg;
  const out = Buffer.alloc(4 + 4 * kept.length);
  out[0] = MSG.SetEncodings;
  out.writeUInt16BE(kept.length, 2);
  kept.forEach((e, i) => out.writeInt32BE(e, 4 + 4 * i));
  return out;
}
