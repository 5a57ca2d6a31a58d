import { ConfinedInput, isBrowserShortcut } from '../src/live/confined-input';
import { RfbClientFilter } from '../src/live/rfb-filter';

/** What a viewer confined to one page may send: the page's input, not the browser's. */

const XK = {
  Control_L: 0xffe3,
  Shift_L: 0xffe1,
  Alt_L: 0xffe9,
  Tab: 0xff09,
  Page_Down: 0xff56,
  Escape: 0xff1b,
  Return: 0xff0d,
  Left: 0xff51,
  F4: 0xffc1,
  F5: 0xffc2,
  F12: 0xffc9,
  KP_1: 0xffb1,
};
const ch = (c: string): number => c.charCodeAt(0);
const none = { ctrl: false, alt: false, shift: false };
const ctrl = { ...none, ctrl: true };
const ctrlShift = { ...ctrl, shift: true };
const alt = { ...none, alt: true };
const shift = { ...none, shift: true };

test.each([
  ['Ctrl+T', ch('t'), ctrl],
  ['Ctrl+Shift+T', ch('T'), ctrlShift],
  ['Ctrl+N', ch('n'), ctrl],
  ['Ctrl+W', ch('w'), ctrl],
  ['Ctrl+Shift+W', ch('W'), ctrlShift],
  ['Ctrl+Tab', XK.Tab, ctrl],
  ['Ctrl+PageDown', XK.Page_Down, ctrl],
  ['Ctrl+2', ch('2'), ctrl],
  ['Ctrl+keypad 1', XK.KP_1, ctrl],
  ['Alt+3', ch('3'), alt],
  ['Alt+F4', XK.F4, alt],
  ['Alt+F (the app menu)', ch('f'), alt],
  ['Ctrl+Shift+A (tab search)', ch('A'), ctrlShift],
  ['F12', XK.F12, none],
  ['Shift+Escape (task manager)', XK.Escape, shift],
])('%s is the browser’s', (_name, keysym, mods) => {
  expect(isBrowserShortcut(keysym, mods)).toBe(true);
});

test.each([
  ['a', ch('a'), none],
  ['Shift+A', ch('A'), shift],
  ['@ (AltGr)', ch('@'), alt],
  ['Ctrl+C', ch('c'), ctrl],
  ['Ctrl+V', ch('v'), ctrl],
  ['Ctrl+A', ch('a'), ctrl],
  ['Ctrl+Z', ch('z'), ctrl],
  ['Ctrl+Shift+Z', ch('Z'), ctrlShift],
  ['Ctrl+F (find in the page)', ch('f'), ctrl],
  ['Ctrl+L (the address bar: the page’s own navigation)', ch('l'), ctrl],
  ['Alt+Left (back)', XK.Left, alt],
  ['F5', XK.F5, none],
  ['Enter', XK.Return, none],
  ['Escape', XK.Escape, none],
  ['Tab', XK.Tab, none],
  ['2', ch('2'), none],
])('%s is the page’s', (_name, keysym, mods) => {
  expect(isBrowserShortcut(keysym, mods)).toBe(false);
});

test('a confined viewer’s chord is dropped, its release too; the modifier passes; unconfined, all pass', () => {
  const input = new ConfinedInput();
  expect(input.key(XK.Control_L, true, true)).toBe(true);
  expect(input.key(ch('t'), true, true)).toBe(false);
  expect(input.key(ch('t'), false, true)).toBe(false);
  expect(input.key(ch('c'), true, true)).toBe(true);
  expect(input.key(ch('c'), false, true)).toBe(true);
  expect(input.key(XK.Control_L, false, true)).toBe(true);
  // Ctrl is up: t types.
  expect(input.key(ch('t'), true, true)).toBe(true);
  expect(input.key(ch('t'), false, true)).toBe(true);

  const free = new ConfinedInput();
  free.key(XK.Control_L, true, false);
  expect(free.key(ch('t'), true, false)).toBe(true);
  expect(free.key(ch('t'), false, false)).toBe(true);
});

test('a press held when Shift comes up is released under the other keysym: still dropped', () => {
  const input = new ConfinedInput();
  input.key(XK.Control_L, true, true);
  input.key(XK.Shift_L, true, true);
  expect(input.key(ch('T'), true, true)).toBe(false);
  input.key(XK.Shift_L, false, true);
  expect(input.key(ch('t'), false, true)).toBe(false);
});

test('a press above the page’s content is dropped (the pointer still moves); in the page, presses and releases pass', () => {
  const input = new ConfinedInput();
  expect(input.pointer(0, 20, 143)).toBe(0);
  expect(input.pointer(1, 20, 143)).toBe(0);
  expect(input.pointer(0, 20, 143)).toBe(0);
  // The wheel over the tab strip (buttons 4 and 5) switches tabs: dropped too.
  expect(input.pointer(8, 20, 143)).toBe(0);
  expect(input.pointer(1, 600, 143)).toBe(1);
  // A drag that began in the page goes on over the bars and ends there.
  expect(input.pointer(1, 20, 143)).toBe(1);
  expect(input.pointer(0, 20, 143)).toBe(0);
  // Not confined: the bars take presses.
  expect(input.pointer(1, 20, null)).toBe(1);
});

test('the filter of a confined viewer: the bars get a move without the press, Ctrl+T never arrives, the page gets the rest', () => {
  const f = new RfbClientFilter(
    () => true,
    () => 143,
  );
  const handshake = Buffer.concat([Buffer.from('RFB 003.008\n', 'latin1'), Buffer.from([1, 0])]);
  const key = (keysym: number, down: boolean): Buffer => {
    const b = Buffer.alloc(8);
    b[0] = 4;
    b[1] = down ? 1 : 0;
    b.writeUInt32BE(keysym, 4);
    return b;
  };
  const press = (y: number): Buffer => Buffer.from([5, 1, 0, 100, y >> 8, y & 0xff]);
  const qemuKey = Buffer.from([255, 0, 0, 1, 0, 0, 0, 0x61, 0, 0, 0, 30]);
  const out = f.push(
    Buffer.concat([
      handshake,
      press(20),
      key(XK.Control_L, true),
      key(ch('t'), true),
      key(ch('t'), false),
      key(XK.Control_L, false),
      qemuKey,
      key(ch('x'), true),
      press(600),
    ]),
  );
  expect(out.subarray(14)).toEqual(
    Buffer.concat([
      Buffer.from([5, 0, 0, 100, 0, 20]),
      key(XK.Control_L, true),
      key(XK.Control_L, false),
      key(ch('x'), true),
      press(600),
    ]),
  );
});
