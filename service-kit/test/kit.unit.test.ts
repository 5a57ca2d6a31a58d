import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Joi from 'joi';
import {
  AuthError,
  ConfigError,
  checkFields,
  checkServiceKey,
  layeredEnv,
  validateEnv,
} from '../src';

/** The one bearer-key check the worker, the waker and the supervisor share. */
describe('checkServiceKey', () => {
  const failure = (header: string | undefined, key: string | null): unknown => {
    try {
      checkServiceKey(header, key);
      return null;
    } catch (err) {
      return err instanceof AuthError ? { status: err.status, body: err.body } : err;
    }
  };

  test('the right key passes, whatever the case of the scheme and the spacing', () => {
    for (const header of [
      'Bearer k3y-long',
      'bearer k3y-long',
      'BEARER   k3y-long ',
      ' Bearer k3y-long',
    ])
      expect(failure(header, 'k3y-long')).toBeNull();
  });

  test('a missing, wrong, prefixed or schemeless key is 401 {detail}', () => {
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer k3y',
      'Bearer k3y-long2',
      'k3y-long',
      'Basic k3y-long',
    ])
      expect(failure(header, 'k3y-long')).toEqual({
        status: 401,
        body: { detail: 'Invalid API key' },
      });
  });

  test('without a configured key every call is 500 {detail}, the right-looking one too', () => {
    for (const key of [null, ''])
      expect(failure('Bearer anything', key)).toEqual({
        status: 500,
        body: { detail: 'Server not properly configured' },
      });
  });
});

describe('layeredEnv and validateEnv', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-kit-env-'));
  fs.mkdirSync(path.join(root, 'p'));
  fs.writeFileSync(
    path.join(root, '.env'),
    'A=from-env-file\nB=from-env-file\nC=from-env-file\nDIR=p\n',
  );
  fs.writeFileSync(path.join(root, 'p', 'more.env'), 'B=from-further\nC=from-further\n');

  test('.env, then the further file, then the process environment on top', () => {
    const { repoRoot, files, merged } = layeredEnv(
      { REPO_ROOT: root, C: 'from-process' },
      '/elsewhere',
      (so) => (so.DIR ? path.join(so.DIR, 'more.env') : null),
    );
    expect(repoRoot).toBe(root);
    expect(files).toMatchObject({ A: 'from-env-file', B: 'from-further', C: 'from-further' });
    expect(merged).toMatchObject({ A: 'from-env-file', B: 'from-further', C: 'from-process' });
  });

  test('values come back typed; a bad one is a ConfigError naming the variable', () => {
    const schema = Joi.object<{ PORT: number; ON: boolean }, true>({
      PORT: Joi.number().integer().default(5000),
      ON: Joi.boolean().default(false),
    });
    expect(validateEnv(schema, { ON: 'true', OTHER: 'kept out of the type' })).toMatchObject({
      PORT: 5000,
      ON: true,
    });
    expect(() => validateEnv(schema, { PORT: 'five' })).toThrow(
      new ConfigError('invalid PORT: "PORT" must be a number'),
    );
  });

  test('an unreadable .env is a ConfigError naming the file', () => {
    const bad = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-kit-env-'));
    fs.mkdirSync(path.join(bad, '.env'));
    expect(() => layeredEnv({}, bad)).toThrow(ConfigError);
    expect(() => layeredEnv({}, bad)).toThrow(/cannot read .*\.env/);
  });
});

describe('checkFields', () => {
  const schema = Joi.object({ url: Joi.string().required(), ttl: Joi.number() });

  test('a field the schema does not declare is refused by name, with the declared ones', () => {
    expect(checkFields(schema, { url: 'x', tll: 3 })).toEqual({
      ok: false,
      message: "Unknown field 'tll' (allowed: ttl, url)",
    });
  });

  test("'ignore' drops it instead; other problems keep joi's words, single-quoted", () => {
    expect(checkFields(schema, { url: 'x', tll: 3 }, 'ignore')).toEqual({
      ok: true,
      value: { url: 'x' },
    });
    expect(checkFields(schema, { ttl: 3 })).toEqual({ ok: false, message: "'url' is required" });
  });

  test('a route without a schema takes no fields', () => {
    expect(checkFields(undefined, { x: 1 })).toEqual({
      ok: false,
      message: "Unknown field 'x' (this route takes no fields)",
    });
    expect(checkFields(undefined, {})).toEqual({ ok: true, value: {} });
  });
});
