import fs from 'node:fs';
import { errnoCode, errorMessage } from '../src';

/** What a caught value says, read without assuming it is an Error. */
describe('errorMessage and errnoCode', () => {
  test('a system error gives its message and its code; anything thrown gives its text', () => {
    let caught: unknown;
    try {
      fs.readFileSync('/no/such/file/anywhere');
    } catch (err) {
      caught = err;
    }
    expect(errnoCode(caught)).toBe('ENOENT');
    expect(errorMessage(caught)).toMatch(/^ENOENT: no such file or directory/);
    expect(errorMessage('plain text')).toBe('plain text');
    expect(errorMessage(undefined)).toBe('undefined');
    expect(errorMessage({ message: 42 })).toBe('[object Object]');
    expect(errnoCode(new Error('no code'))).toBeUndefined();
    expect(errnoCode(Object.assign(new Error('odd'), { code: 42 }))).toBeUndefined();
  });
});
