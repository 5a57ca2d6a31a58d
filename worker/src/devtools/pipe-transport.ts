import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { ConnectionTransport } from 'puppeteer-core';
import { commandNamed } from './quiet-transport';

/**
 * A connection that offers each message it reads, as bytes, to `claim` first: a message claimed
 * is not decoded and never reaches `onmessage`.
 */
export interface BytesTransport extends ConnectionTransport {
  claim?: (message: Buffer) => boolean;
}

/**
 * The DevTools connection of one Chromium started with `--remote-debugging-pipe`: messages are
 * JSON texts ended by a NUL byte, written to the browser's fd 3 and read from its fd 4.
 *
 * The transport knows its browser process, so that closing the browser ends when the process
 * has exited: the reply to `Browser.close` (and the end of the connection) is passed on only
 * then. Whoever closes the browser may then reuse its profile at once.
 */
export class ChromiumPipeTransport implements BytesTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  claim?: (message: Buffer) => boolean;
  private readonly writer: Writable;
  private readonly reader: Readable;
  private pending: Buffer[] = [];
  private closed = false;
  /** The id of a `Browser.close` sent and not yet answered to the caller. */
  private closingId: number | null = null;
  private pipeEnded = false;
  private readonly exited: Promise<void>;

  constructor(browser: ChildProcess) {
    const writer = browser.stdio[3];
    const reader = browser.stdio[4];
    if (!isWritable(writer) || !isReadable(reader)) {
      throw new Error('the browser was started without its DevTools pipe on fds 3 and 4');
    }
    this.writer = writer;
    this.reader = reader;
    this.exited = new Promise((resolve) => {
      if (browser.exitCode !== null || browser.signalCode !== null) resolve();
      else browser.once('exit', () => resolve());
    });
    reader.on('data', (chunk: Buffer) => this.receive(chunk));
    reader.on('close', () => this.ended());
    // A write after the browser died fails here; the closing pipe reports the end.
    reader.on('error', () => undefined);
    writer.on('error', () => undefined);
  }

  send(message: string): void {
    if (this.closed) throw new Error('the browser connection is closed');
    const close = commandNamed(message, 'Browser.close');
    if (close) this.closingId = close.id;
    // One write per message: each write(2) on the pipe can wake the browser's reader, and a
    // separate terminator would wake it a second time for every command.
    this.writer.write(`${message}\0`);
  }

  close(): void {
    this.closed = true;
    this.reader.removeAllListeners('data');
  }

  private receive(chunk: Buffer): void {
    let start = 0;
    let end = chunk.indexOf(0);
    if (end === -1) {
      this.pending.push(chunk);
      return;
    }
    while (end !== -1) {
      const piece = chunk.subarray(start, end);
      const message = this.pending.length ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      if (!this.claim?.(message)) this.deliver(message.toString('utf8'));
      start = end + 1;
      end = chunk.indexOf(0, start);
    }
    if (start < chunk.length) this.pending.push(chunk.subarray(start));
  }

  private deliver(message: string): void {
    if (this.closingId !== null && isReplyTo(message, this.closingId)) {
      void this.exited.then(() => this.pass(message));
      return;
    }
    this.pass(message);
  }

  private pass(message: string): void {
    // On a later turn, as puppeteer's own pipe does: a handler never runs inside a read.
    setImmediate(() => this.onmessage?.(message));
  }

  private ended(): void {
    if (this.pipeEnded) return;
    this.pipeEnded = true;
    // A browser asked to close has gone once its process has: not merely its pipe.
    const when = this.closingId !== null ? this.exited : Promise.resolve();
    void when.then(() => setImmediate(() => this.onclose?.()));
  }
}

function isWritable(stream: unknown): stream is Writable {
  return typeof stream === 'object' && stream !== null && 'write' in stream;
}

function isReadable(stream: unknown): stream is Readable {
  return typeof stream === 'object' && stream !== null && 'read' in stream && 'on' in stream;
}

/** Whether `message` answers the command `id` (a browser-level reply: no session). */
function isReplyTo(message: string, id: number): boolean {
  if (!message.includes(`"id":${id}`)) return false;
  const parsed: unknown = JSON.parse(message);
  return (
    typeof parsed === 'object' &&
    parsed !== null &&
    Reflect.get(parsed, 'id') === id &&
    !('method' in parsed) &&
    !('sessionId' in parsed)
  );
}
