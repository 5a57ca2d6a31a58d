/**
 * Pure halves of a vision search: the prompt we send, reading the model's text answer, mapping
 * its box to viewport pixels, and pricing the call. No I/O here, so all of it is unit-testable.
 */
import { prop } from '../util';

/** Viewport size in CSS pixels. */
export interface Viewport {
  width: number;
  height: number;
}

/** A box as the model gives it: `[ymin, xmin, ymax, xmax]`, each on a 0–1000 scale. */
export type Box2d = [number, number, number, number];

/** A box in viewport CSS pixels, as `[x1, y1, x2, y2]` = `[left, top, right, bottom]`. */
export type PixelBox = [number, number, number, number];

export interface TokenUsage {
  input: number;
  output: number;
  total: number;
}

/** The scale of the model's coordinates (Gemini's documented object-detection convention). */
export const BOX_SCALE = 1000;

/**
 * Object detection prompt in the documented style: ask for JSON with `box_2d` normalised to
 * 0–1000. The description is quoted as a JSON string so that quotes inside it cannot end it.
 */
export function buildPrompt(description: string): string {
  return [
    'This image is a screenshot of a web page.',
    `Find the single element that best matches this description: ${JSON.stringify(description)}.`,
    'Answer with a JSON list holding at most one object of the form',
    '{"box_2d": [ymin, xmin, ymax, xmax], "label": "<short label>"},',
    'where the coordinates are normalized to 0-1000 relative to the image.',
    'If nothing in the image matches the description, answer with an empty list [].',
  ].join(' ');
}

/** Thrown by `readBoxAnswer` when the text is not the JSON we asked for. */
export class AnswerFormatError extends Error {}

const isBox = (v: unknown): v is Box2d =>
  Array.isArray(v) && v.length === 4 && v.every((n) => typeof n === 'number' && Number.isFinite(n));

function boxOf(entry: unknown): Box2d {
  const box = prop(entry, 'box_2d');
  if (!isBox(box)) throw new AnswerFormatError('an entry has no box_2d of four numbers');
  return box;
}

/**
 * Reads the model's text: a JSON list of `{box_2d, label}` (the first entry is the match), or a
 * single such object. Markdown code fences around the JSON are tolerated, as models add them.
 * Returns null when the list is empty: the model found nothing.
 */
export function readBoxAnswer(text: string): Box2d | null {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  const body = (fenced ? fenced[1] : text)?.trim() ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new AnswerFormatError('the text is not JSON');
  }
  if (Array.isArray(parsed)) return parsed.length === 0 ? null : boxOf(parsed[0]);
  if (parsed && typeof parsed === 'object') return boxOf(parsed);
  throw new AnswerFormatError('the JSON is neither a list nor an object');
}

const clampScale = (n: number): number => Math.min(BOX_SCALE, Math.max(0, n));
const round2 = (n: number): number => Math.round(n * 100) / 100;

/**
 * Maps `[ymin, xmin, ymax, xmax]` on 0–1000 to `[x1, y1, x2, y2]` in CSS pixels of a viewport of
 * the given size (the screenshot covers exactly that viewport). Values are clamped to the scale
 * and put in order, so a swapped pair still gives a proper rectangle.
 */
export function toViewportBox(box: Box2d, viewport: Viewport): PixelBox {
  const [ymin, xmin, ymax, xmax] = box;
  const sx = viewport.width / BOX_SCALE;
  const sy = viewport.height / BOX_SCALE;
  return [
    round2(clampScale(Math.min(xmin, xmax)) * sx),
    round2(clampScale(Math.min(ymin, ymax)) * sy),
    round2(clampScale(Math.max(xmin, xmax)) * sx),
    round2(clampScale(Math.max(ymin, ymax)) * sy),
  ];
}

export function centerOf(box: PixelBox): { x: number; y: number } {
  return { x: round2((box[0] + box[2]) / 2), y: round2((box[1] + box[3]) / 2) };
}

const count = (v: unknown): number =>
  typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0;

/**
 * Input tokens are the prompt (image included); output tokens are the answer plus any thinking,
 * which thinking models bill at the output price.
 */
export function readUsage(meta: unknown): TokenUsage {
  const input = count(prop(meta, 'promptTokenCount'));
  const output =
    count(prop(meta, 'candidatesTokenCount')) + count(prop(meta, 'thoughtsTokenCount'));
  const total = count(prop(meta, 'totalTokenCount')) || input + output;
  return { input, output, total };
}

/** US dollars for a call: tokens times the price per million tokens, per direction. */
export function costOf(usage: TokenUsage, pricePerMTokIn: number, pricePerMTokOut: number): number {
  const usd = (usage.input * pricePerMTokIn + usage.output * pricePerMTokOut) / 1_000_000;
  return Math.round(usd * 1e10) / 1e10;
}
