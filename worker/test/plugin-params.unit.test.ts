import type { ParameterSpec } from '@persona-browser/plugin-sdk';
import { checkFields } from '@persona-browser/service-kit';
import { describeParameter, mergeQueryAndBody, parametersSchema } from '../src/plugins/params';

const SPECS: ParameterSpec[] = [
  { name: 'url', type: 'url', required_unless: 'from_check' },
  { name: 'from_check', type: 'checkbox', default: false },
  { name: 'paste_probability', type: 'number', min: 0, max: 1, default: 0.9 },
  { name: 'mode', type: 'select', options: ['fast', 'slow'], default: 'fast' },
  { name: 'handle', type: 'text', pattern: '@?[A-Za-z0-9._]+', message: 'handle: letters only' },
  { name: 'note', type: 'textarea', max_length: 5 },
];

/** The 400 message a body gets, or the validated value, as the plugin route checks it. */
function check(body: Record<string, unknown>): { error?: string; value?: Record<string, unknown> } {
  const r = checkFields<Record<string, unknown>>(parametersSchema(SPECS), body);
  return r.ok ? { value: r.value } : { error: r.message };
}

describe('parameter descriptors', () => {
  test('every documented field is present, with defaults filled in', () => {
    expect(describeParameter({ name: 'paste_probability', type: 'number', default: 0.9 })).toEqual({
      name: 'paste_probability',
      type: 'number',
      label: 'Paste probability',
      required: false,
      default: 0.9,
      placeholder: null,
      options: [],
      help_text: null,
    });
  });
});

describe('validation from declared parameters', () => {
  test("a number out of range is refused with the parameter's own bounds", () => {
    expect(check({ url: 'https://a.example', paste_probability: 1.5 }).error).toBe(
      'paste_probability must be between 0.0 and 1.0',
    );
    expect(check({ url: 'https://a.example', paste_probability: 'abc' }).error).toBe(
      'paste_probability must be between 0.0 and 1.0',
    );
  });

  test('defaults apply; an empty form field counts as absent', () => {
    expect(check({ url: 'https://a.example', paste_probability: '', mode: '' }).value).toEqual({
      url: 'https://a.example',
      from_check: false,
      paste_probability: 0.9,
      mode: 'fast',
    });
  });

  test('required unless a checkbox is true', () => {
    expect(check({}).error).toBe('url is required unless from_check is true');
    expect(check({ from_check: true }).value).toMatchObject({ from_check: true });
  });

  test('urls, selects, patterns and lengths say what they want', () => {
    expect(check({ url: 'ftp://a.example' }).error).toBe('url must be an http or https URL');
    expect(check({ from_check: true, mode: 'medium' }).error).toBe(
      'mode must be one of: fast, slow',
    );
    expect(check({ from_check: true, handle: 'a b' }).error).toBe('handle: letters only');
    expect(check({ from_check: true, handle: '@a.b_c' }).value).toMatchObject({ handle: '@a.b_c' });
    expect(check({ from_check: true, note: 'too long' }).error).toBe(
      'note must be text of at most 5 characters',
    );
    expect(check({ from_check: 'maybe' }).error).toBe('from_check must be true or false');
  });

  test('an undeclared field is refused by name, with the declared ones', () => {
    expect(check({ from_check: true, amount: 3 }).error).toBe(
      "Unknown field 'amount' (allowed: from_check, handle, mode, note, paste_probability, url)",
    );
  });
});

describe('GET parameters from the query string and the body', () => {
  test('numbers become floats, checkboxes read yes/no/on/off/1/0, the body wins', () => {
    const merged = mergeQueryAndBody(
      SPECS,
      { paste_probability: '0.25', from_check: 'on', mode: 'slow' },
      { mode: 'fast' },
    );
    expect(merged).toEqual({ paste_probability: 0.25, from_check: true, mode: 'fast' });
    for (const [raw, value] of [
      ['yes', true],
      ['1', true],
      ['TRUE', true],
      ['off', false],
      ['no', false],
      ['0', false],
    ] as const) {
      expect(mergeQueryAndBody(SPECS, { from_check: raw }, {}).from_check).toBe(value);
    }
  });

  test('unparseable values pass through for validation to refuse', () => {
    const merged = mergeQueryAndBody(SPECS, { paste_probability: '1e', from_check: 'maybe' }, {});
    expect(merged).toEqual({ paste_probability: '1e', from_check: 'maybe' });
    const schema = parametersSchema(SPECS);
    const number = schema.validate({ url: 'https://a.example', paste_probability: '1e' });
    expect(number.error?.details[0]?.message).toBe('paste_probability must be between 0.0 and 1.0');
    const flag = schema.validate({ url: 'https://a.example', from_check: 'maybe' });
    expect(flag.error?.details[0]?.message).toBe('from_check must be true or false');
  });
});
