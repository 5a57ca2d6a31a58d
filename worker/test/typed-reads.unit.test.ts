import fs from 'node:fs';
import path from 'node:path';
import { pageHit, pageVisibility } from '../src/human/page-reads';
import { workerVersion } from '../src/paths';
import { at, prop } from '../src/util';

describe('reading values of unknown shape', () => {
  test('prop reads an own or inherited property of an object, undefined for anything else', () => {
    const reply: unknown = JSON.parse('{"error":{"status":"DENIED","details":[{"reason":"R"}]}}');
    expect(prop(prop(reply, 'error'), 'status')).toBe('DENIED');
    expect(prop(prop(reply, 'missing'), 'status')).toBeUndefined();
    for (const v of [null, undefined, 'text', 42, true]) expect(prop(v, 'length')).toBeUndefined();
  });

  test('at gives the item inside the bounds and throws outside them', () => {
    expect(at([10, 20, 30], 2)).toBe(30);
    expect(() => at([10, 20, 30], 3)).toThrow(RangeError);
    expect(() => at([10, 20, 30], -1)).toThrow(RangeError);
  });

  test("the worker's version is the one in its package.json", () => {
    const file = path.join(__dirname, '..', 'package.json');
    const pkg: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(workerVersion()).toBe(prop(pkg, 'version'));
    expect(workerVersion()).toMatch(/^\d+\.\d+\.\d+/);
  });

  test('what a page answers is taken as a measure only when every field has its type', () => {
    const measured = {
      found: true,
      visible: true,
      fully_visible: false,
      bounding_box: { x: 1, y: 2, width: 3, height: 4 },
      intersection: null,
      viewport: { width: 800, height: 600 },
    };
    expect(JSON.stringify(pageVisibility(measured))).toBe(JSON.stringify(measured));
    const box = { ...measured.bounding_box, width: '3' };
    expect(() => pageVisibility({ ...measured, bounding_box: box })).toThrow(
      'The page answered bounding_box.width = "3"',
    );
    expect(() => pageVisibility({ ...measured, viewport: undefined })).toThrow('viewport.width');
    expect(pageHit({ hits: false, cover: 'div#cover' })).toEqual({
      hits: false,
      cover: 'div#cover',
    });
    expect(() => pageHit({ hits: 'yes', cover: null })).toThrow('hits = "yes"');
  });
});
