import type { Box2d, PixelBox, TokenUsage, Viewport } from './answer';
import { prop } from '../util';
import {
  AnswerFormatError,
  buildPrompt,
  centerOf,
  costOf,
  readBoxAnswer,
  readUsage,
  toViewportBox,
} from './answer';

export interface VisionOptions {
  /** Service root, such as https://generativelanguage.googleapis.com (no trailing path). */
  baseUrl: string;
  model: string;
  keyGratis: string | null;
  keyPaga: string | null;
  /** US dollars per million input (prompt and image) tokens. */
  priceInputPerMTok: number;
  /** US dollars per million output (answer and thinking) tokens. */
  priceOutputPerMTok: number;
  /** One deadline for a whole `locate` call, fallback to the paid key included. */
  timeoutMs: number;
}

export type VisionKey = 'gratis' | 'paga';

/** Why a vision search failed; each kind has its own message (see VisionError). */
export type VisionErrorCause =
  | 'no_key'
  | 'key_refused'
  | 'rate_limited'
  | 'timeout'
  | 'unreachable'
  | 'upstream'
  | 'bad_answer'
  | 'not_found'
  | 'aborted';

/** A failed vision search. Messages name environment variables, never the keys themselves. */
export class VisionError extends Error {
  constructor(
    override readonly cause: VisionErrorCause,
    message: string,
    /** The HTTP status the service answered with, when it answered. */
    readonly httpStatus: number | null = null,
  ) {
    super(message);
    this.name = 'VisionError';
  }
}

export interface LocateResult {
  /** `[x1, y1, x2, y2]`: left, top, right, bottom, in CSS pixels of the viewport. */
  bounding_box: PixelBox;
  center_x: number;
  center_y: number;
  tokens_used: number;
  costs_usd: number;
  duration_seconds: number;
  key_used: VisionKey;
}

interface KeySlot {
  name: VisionKey;
  env: string;
  key: string;
}

type Attempt = { kind: 'answer'; box: Box2d | null; usage: TokenUsage } | { kind: 'exhausted' };

const ENV_GRATIS = 'VISION_API_KEY_GRATIS';
const ENV_PAGA = 'VISION_API_KEY_PAGA';
const REFUSED_STATUSES = new Set(['PERMISSION_DENIED', 'UNAUTHENTICATED']);

/**
 * A Gemini-style `generateContent` client that finds one described object in a screenshot.
 * The free key goes first; the paid key is used when the free one is missing, rate-limited or
 * out of quota. Keys travel only in the `x-goog-api-key` header, never in a URL.
 */
export class VisionClient {
  constructor(readonly opts: VisionOptions) {}

  get configured(): boolean {
    return this.slots().length > 0;
  }

  /** Fails fast, before any screenshot is taken, when neither key is set. */
  assertConfigured(): void {
    if (!this.configured) {
      throw new VisionError(
        'no_key',
        `No vision API key is configured: set ${ENV_GRATIS} or ${ENV_PAGA} in the server environment`,
      );
    }
  }

  /**
   * Asks the model where `description` is in `png` (a screenshot of exactly `viewport`, whatever
   * its device pixel ratio) and answers the box in viewport CSS pixels, `[x1, y1, x2, y2]`.
   */
  async locate(
    png: Buffer | string,
    description: string,
    viewport: Viewport,
    signal?: AbortSignal,
  ): Promise<LocateResult> {
    const started = performance.now();
    this.assertConfigured();
    const body = JSON.stringify(this.requestBody(png, description));
    const deadline = AbortSignal.timeout(this.opts.timeoutMs);
    const combined = signal ? AbortSignal.any([deadline, signal]) : deadline;
    const exhausted: KeySlot[] = [];
    for (const slot of this.slots()) {
      const attempt = await this.attempt(slot, body, combined, deadline);
      if (attempt.kind === 'exhausted') {
        exhausted.push(slot);
        continue;
      }
      if (!attempt.box) {
        throw new VisionError(
          'not_found',
          `The vision model found nothing matching ${JSON.stringify(description)} on the page`,
          200,
        );
      }
      const box = toViewportBox(attempt.box, viewport);
      const center = centerOf(box);
      return {
        bounding_box: box,
        center_x: center.x,
        center_y: center.y,
        tokens_used: attempt.usage.total,
        costs_usd: costOf(attempt.usage, this.opts.priceInputPerMTok, this.opts.priceOutputPerMTok),
        duration_seconds: Math.round(performance.now() - started) / 1000,
        key_used: slot.name,
      };
    }
    throw this.rateLimited(exhausted);
  }

  private slots(): KeySlot[] {
    const out: KeySlot[] = [];
    if (this.opts.keyGratis)
      out.push({ name: 'gratis', env: ENV_GRATIS, key: this.opts.keyGratis });
    if (this.opts.keyPaga) out.push({ name: 'paga', env: ENV_PAGA, key: this.opts.keyPaga });
    return out;
  }

  private get url(): string {
    const base = this.opts.baseUrl.replace(/\/+$/, '');
    const model = this.opts.model.replace(/^models\//, '');
    return `${base}/v1beta/models/${encodeURIComponent(model)}:generateContent`;
  }

  private requestBody(png: Buffer | string, description: string): Record<string, unknown> {
    const data = typeof png === 'string' ? png : png.toString('base64');
    return {
      contents: [
        {
          role: 'user',
          parts: [
            { inline_data: { mime_type: 'image/png', data } },
            { text: buildPrompt(description) },
          ],
        },
      ],
      generationConfig: { responseMimeType: 'application/json', temperature: 0 },
    };
  }

  /** One request with one key; the answer, or a note that this key is out of quota. */
  private async attempt(
    slot: KeySlot,
    body: string,
    signal: AbortSignal,
    deadline: AbortSignal,
  ): Promise<Attempt> {
    let status: number;
    let text: string;
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': slot.key },
        body,
        signal,
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      if (deadline.aborted) {
        throw new VisionError(
          'timeout',
          `The vision service did not answer within ${this.opts.timeoutMs / 1000} s (VISION_TIMEOUT_SECONDS)`,
        );
      }
      if (signal.aborted) throw new VisionError('aborted', 'The vision search was cancelled');
      const code = prop(prop(err, 'cause'), 'code');
      throw new VisionError(
        'unreachable',
        `The vision service at ${this.opts.baseUrl} could not be reached` +
          (typeof code === 'string' ? ` (${code})` : ''),
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (status < 200 || status >= 300) return this.failure(slot, status, json);
    if (json === undefined) throw this.badAnswer('the reply is not JSON', status);
    return { kind: 'answer', box: this.boxFrom(json, status), usage: readUsage(usageOf(json)) };
  }

  private failure(slot: KeySlot, status: number, json: unknown): Attempt {
    const err = prop(json, 'error');
    const errStatus = prop(err, 'status');
    const errMessage = prop(err, 'message');
    const details: unknown = prop(err, 'details');
    const state = typeof errStatus === 'string' ? errStatus : '';
    const message = typeof errMessage === 'string' ? errMessage : '';
    const reasons = Array.isArray(details) ? details.map((d: unknown) => prop(d, 'reason')) : [];
    const what = `HTTP ${status}${state ? ` ${state}` : ''}${message ? `: ${this.scrub(message)}` : ''}`;
    if (status === 429 || state === 'RESOURCE_EXHAUSTED') return { kind: 'exhausted' };
    const keyProblem =
      status === 401 ||
      status === 403 ||
      REFUSED_STATUSES.has(state) ||
      reasons.includes('API_KEY_INVALID') ||
      /api key not valid/i.test(message);
    if (keyProblem) {
      throw new VisionError(
        'key_refused',
        `The vision service refused the key in ${slot.env} (${what})`,
        status,
      );
    }
    throw new VisionError('upstream', `The vision service failed (${what})`, status);
  }

  private boxFrom(json: unknown, status: number): Box2d | null {
    const candidates = prop(json, 'candidates');
    const candidate: unknown = Array.isArray(candidates) ? candidates[0] : undefined;
    if (!candidate) {
      const blocked = prop(prop(json, 'promptFeedback'), 'blockReason');
      throw this.badAnswer(
        typeof blocked === 'string' ? `the prompt was blocked (${blocked})` : 'it has no candidate',
        status,
      );
    }
    const parts = prop(prop(candidate, 'content'), 'parts');
    const texts: string[] = [];
    for (const part of Array.isArray(parts) ? parts : []) {
      const partText = prop(part, 'text');
      if (typeof partText === 'string' && prop(part, 'thought') !== true) texts.push(partText);
    }
    const text = texts.join('');
    if (!text.trim()) throw this.badAnswer('the candidate has no text', status);
    try {
      return readBoxAnswer(text);
    } catch (err) {
      if (err instanceof AnswerFormatError) throw this.badAnswer(err.message, status);
      throw err;
    }
  }

  private badAnswer(why: string, status: number): VisionError {
    return new VisionError(
      'bad_answer',
      `The vision service's answer could not be read: ${why}`,
      status,
    );
  }

  private rateLimited(exhausted: KeySlot[]): VisionError {
    const names = exhausted.map((s) => s.env).join(' and ');
    const hint = this.opts.keyPaga ? '' : `; set ${ENV_PAGA} to fall back to a paid key`;
    return new VisionError(
      'rate_limited',
      `The vision service is rate-limiting the key in ${names} or it is out of quota${hint}`,
      429,
    );
  }

  /** Upstream text is shown to clients: make sure no key can ride along, and keep it short. */
  private scrub(text: string): string {
    let out = text;
    for (const slot of this.slots()) out = out.split(slot.key).join('[redacted]');
    return out.length > 300 ? `${out.slice(0, 300)}…` : out;
  }
}

function usageOf(json: unknown): unknown {
  return prop(json, 'usageMetadata');
}
