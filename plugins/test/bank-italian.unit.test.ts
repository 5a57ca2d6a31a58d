import {
  currencyIn,
  parseAmount,
  parseDate,
  resolvePeriod,
  toItalianDate,
  todayIso,
  totalsOf,
} from '../bank/italian';

test('amounts as Italian banks write them', () => {
  const cases: Array<[string, number | null]> = [
    ['-1.234,56 €', -1234.56],
    ['+12,00', 12],
    ['1.234,56-', -1234.56],
    ['\u2212 3,50', -3.5],
    ['EUR 1.000', 1000],
    ['€ -0,99', -0.99],
    ['1.234.567,8', 1234567.8],
    ['1234,56', 1234.56],
    ['12,5 EUR', 12.5],
    ['0,00', 0],
    ['\u00a01.000,00\u00a0€', 1000],
    ['12.5', null],
    ['1,234.56', null],
    ['--12,00', null],
    ['abc', null],
    ['', null],
  ];
  for (const [text, want] of cases) expect([text, parseAmount(text)]).toEqual([text, want]);
});

test('currencies by symbol or code', () => {
  expect(currencyIn('-12,00 €')).toBe('EUR');
  expect(currencyIn('Importi in EUR')).toBe('EUR');
  expect(currencyIn('USD 4,99')).toBe('USD');
  expect(currencyIn('£ 3,00')).toBe('GBP');
  expect(currencyIn('CHF 10,00')).toBe('CHF');
  expect(currencyIn('12,00')).toBeNull();
  expect(currencyIn('EURO')).toBeNull();
});

test('dates in every form a statement uses, and only real days', () => {
  const cases: Array<[string, string | null]> = [
    ['23/11/2026', '2026-11-23'],
    ['3/1/2026', '2026-01-03'],
    ['23-11-2026', '2026-11-23'],
    ['23.11.2026', '2026-11-23'],
    ['23/11/26', '2026-11-23'],
    ['23 nov 2026', '2026-11-23'],
    ['1 Settembre 2026', '2026-09-01'],
    ['2026-11-23', '2026-11-23'],
    ['29/02/2028', '2028-02-29'],
    ['29/02/2026', null],
    ['31/04/2026', null],
    ['23 foo 2026', null],
    ['2026/11/23', null],
    ['', null],
  ];
  for (const [text, want] of cases) expect([text, parseDate(text)]).toEqual([text, want]);
  expect(toItalianDate('2026-01-03')).toBe('03/01/2026');
  expect(todayIso(new Date(2026, 0, 3, 23, 59))).toBe('2026-01-03');
});

test('periods from presets count back from today, both ends included', () => {
  const today = '2026-03-15';
  expect(resolvePeriod({ preset: 'last_7_days' }, today)).toEqual({
    from: '2026-03-09',
    to: today,
    preset: 'last_7_days',
  });
  expect(resolvePeriod({}, today)).toMatchObject({ from: '2026-02-14', preset: 'last_30_days' });
  expect(resolvePeriod({ preset: 'last_90_days' }, today)).toMatchObject({ from: '2025-12-16' });
  expect(resolvePeriod({ preset: 'this_month' }, today)).toMatchObject({ from: '2026-03-01' });
  expect(resolvePeriod({ preset: 'last_month' }, today)).toMatchObject({
    from: '2026-02-01',
    to: '2026-02-28',
  });
  expect(resolvePeriod({ preset: 'last_month' }, '2026-01-10')).toMatchObject({
    from: '2025-12-01',
    to: '2025-12-31',
  });
  expect(resolvePeriod({ preset: 'this_year' }, today)).toMatchObject({ from: '2026-01-01' });
});

test('explicit periods, and what is wrong with a bad one', () => {
  const today = '2026-03-15';
  expect(resolvePeriod({ from: '01/02/2026', to: '2026-02-10' }, today)).toEqual({
    from: '2026-02-01',
    to: '2026-02-10',
    preset: null,
  });
  expect(resolvePeriod({ preset: 'custom', from: '01/02/2026', to: '01/02/2026' }, today)).toEqual({
    from: '2026-02-01',
    to: '2026-02-01',
    preset: null,
  });
  expect(resolvePeriod({ from: '01/02/2026' }, today)).toMatch(/both/);
  expect(
    resolvePeriod({ preset: 'this_year', from: '01/02/2026', to: '02/02/2026' }, today),
  ).toMatch(/either a preset/);
  expect(resolvePeriod({ from: '31/02/2026', to: '01/03/2026' }, today)).toMatch(/^from must be/);
  expect(resolvePeriod({ from: '10/02/2026', to: '01/02/2026' }, today)).toMatch(/is after to/);
  expect(resolvePeriod({ from: '10/02/2026', to: '16/03/2026' }, today)).toMatch(/after today/);
  expect(resolvePeriod({ preset: 'custom' }, today)).toMatch(/needs from and to/);
  expect(resolvePeriod({ preset: 'forever' }, today)).toMatch(/^preset must be one of/);
});

test('totals add cents exactly', () => {
  expect(totalsOf([0.1, 0.2, -1234.56, 1000, -0.01])).toEqual({
    income: 1000.3,
    outflow: -1234.57,
    net: -234.27,
  });
  expect(totalsOf([])).toEqual({ income: 0, outflow: 0, net: 0 });
});
