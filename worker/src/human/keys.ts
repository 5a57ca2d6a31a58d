/** A key of a US keyboard as CDP `Input.dispatchKeyEvent` wants it. */
export interface KeyDef {
  key: string;
  code: string;
  keyCode: number;
  /** The character it types, if any. */
  text?: string;
  shift?: boolean;
}

const SHIFTED_DIGITS = ')!@#$%^&*(';
const PUNCT: Array<[string, string, string, number]> = [
  // unshifted, shifted, code, keyCode
  ['-', '_', 'Minus', 189],
  ['=', '+', 'Equal', 187],
  ['[', '{', 'BracketLeft', 219],
  [']', '}', 'BracketRight', 221],
  ['\\', '|', 'Backslash', 220],
  [';', ':', 'Semicolon', 186],
  ["'", '"', 'Quote', 222],
  [',', '<', 'Comma', 188],
  ['.', '>', 'Period', 190],
  ['/', '?', 'Slash', 191],
  ['`', '~', 'Backquote', 192],
];

const CHAR_KEYS = new Map<string, KeyDef>();
for (let i = 0; i < 26; i += 1) {
  const lower = String.fromCharCode(97 + i);
  const upper = lower.toUpperCase();
  const code = `Key${upper}`;
  CHAR_KEYS.set(lower, { key: lower, code, keyCode: 65 + i, text: lower });
  CHAR_KEYS.set(upper, { key: upper, code, keyCode: 65 + i, text: upper, shift: true });
}
for (const [d, sym] of Array.from(SHIFTED_DIGITS).entries()) {
  const digit = String(d);
  CHAR_KEYS.set(digit, { key: digit, code: `Digit${d}`, keyCode: 48 + d, text: digit });
  CHAR_KEYS.set(sym, { key: sym, code: `Digit${d}`, keyCode: 48 + d, text: sym, shift: true });
}
for (const [plain, shifted, code, keyCode] of PUNCT) {
  CHAR_KEYS.set(plain, { key: plain, code, keyCode, text: plain });
  CHAR_KEYS.set(shifted, { key: shifted, code, keyCode, text: shifted, shift: true });
}
CHAR_KEYS.set(' ', { key: ' ', code: 'Space', keyCode: 32, text: ' ' });
CHAR_KEYS.set('\n', { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' });
CHAR_KEYS.set('\r', { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' });
CHAR_KEYS.set('\t', { key: 'Tab', code: 'Tab', keyCode: 9 });

export const KEYS = {
  Enter: { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' },
  Tab: { key: 'Tab', code: 'Tab', keyCode: 9 },
  Escape: { key: 'Escape', code: 'Escape', keyCode: 27 },
  Backspace: { key: 'Backspace', code: 'Backspace', keyCode: 8 },
  Shift: { key: 'Shift', code: 'ShiftLeft', keyCode: 16 },
  Control: { key: 'Control', code: 'ControlLeft', keyCode: 17 },
  F5: { key: 'F5', code: 'F5', keyCode: 116 },
  A: { key: 'a', code: 'KeyA', keyCode: 65 },
  V: { key: 'v', code: 'KeyV', keyCode: 86 },
  Z: { key: 'z', code: 'KeyZ', keyCode: 90 },
} satisfies Record<string, KeyDef>;

/**
 * The key that types `char`; a character no US key types (é, ü, emoji, CJK) is sent as a key
 * event carrying the text, as an input method would.
 */
export function keyFor(char: string): KeyDef {
  return CHAR_KEYS.get(char) ?? { key: char, code: '', keyCode: 0, text: char };
}
