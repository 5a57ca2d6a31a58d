import type { Protocol } from 'puppeteer-core';
import { epochSeconds } from '../util';
import { base64Bytes, cutBase64, cutText } from './body';
import type { CaptureContext } from './context';
import type { NewWsLine, WsKind } from './lines';

/** The WebSocket side of a page's capture: one line per opening, message, error and closing. */

interface Socket {
  url: string;
  gen: number;
}

const MAX_SOCKETS = 512;

export class SocketTracker {
  private readonly sockets = new Map<string, Socket>();

  constructor(private readonly ctx: CaptureContext) {}

  stop(): void {
    this.sockets.clear();
  }

  onCreated(e: Protocol.Network.WebSocketCreatedEvent): void {
    if (this.sockets.size >= MAX_SOCKETS) {
      const oldest = this.sockets.keys().next();
      if (!oldest.done) this.sockets.delete(oldest.value);
    }
    this.sockets.set(e.requestId, { url: e.url, gen: this.ctx.doc.gen });
  }

  onHandshake(e: Protocol.Network.WebSocketHandshakeResponseReceivedEvent): void {
    const status = e.response.status;
    if (status === 101) this.socketLine(e.requestId, 'open', null, false);
    else this.socketLine(e.requestId, 'error', `handshake answered ${status}`, false);
  }

  onFrame(
    requestId: string,
    kind: 'sent' | 'received',
    frame: Protocol.Network.WebSocketFrame,
  ): void {
    if (frame.opcode === 1) {
      this.socketLine(requestId, kind, frame.payloadData, false);
    } else {
      this.socketLine(requestId, kind, frame.payloadData, true);
    }
  }

  onFrameError(e: Protocol.Network.WebSocketFrameErrorEvent): void {
    this.socketLine(e.requestId, 'error', e.errorMessage, false);
  }

  onClosed(e: Protocol.Network.WebSocketClosedEvent): void {
    this.socketLine(e.requestId, 'close', null, false);
    this.sockets.delete(e.requestId);
  }

  /** A failed load that is a socket's makes an error line; returns whether it was one. */
  onFailed(e: Protocol.Network.LoadingFailedEvent): boolean {
    if (!this.sockets.has(e.requestId)) return false;
    this.socketLine(e.requestId, 'error', e.errorText, false);
    return true;
  }

  private socketLine(
    requestId: string,
    kind: WsKind,
    payload: string | null,
    binary: boolean,
  ): void {
    const socket = this.sockets.get(requestId);
    if (!socket || !this.ctx.doc.fresh(socket)) return;
    if (this.ctx.blocked(socket.url)) return;
    const limit = this.ctx.settings.bodyLimitChars;
    let length = 0;
    let stored = payload;
    if (payload !== null) {
      if (binary) {
        length = base64Bytes(payload);
        stored = cutBase64(payload, limit);
      } else {
        length = payload.length;
        stored = cutText(payload, limit).text;
      }
    }
    const line: NewWsLine = {
      ts: epochSeconds(),
      kind,
      url: socket.url,
      binary,
      payload_length: length,
    };
    this.ctx.store.appendWs(line, stored);
  }
}
