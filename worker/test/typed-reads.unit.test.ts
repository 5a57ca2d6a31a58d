import fs from 'node:fs';
import path from 'node:path';
import { prop } from '../src/json';
import { workerVersion } from '../src/paths';
import { at } from '../src/util';

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
});
