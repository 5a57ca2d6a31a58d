/**
 * Countries a proxy session can exit in, and the language a person there most likely browses
 * in. Pure data and lookups: no I/O.
 */

/**
 * ISO 3166-1 alpha-2 codes in use (and XK, Kosovo, which proxy networks and GeoIP services
 * use). Withdrawn and reserved codes (UK, EU, SU, YU, ZZ…) are not countries a proxy exits in.
 */
const COUNTRIES = new Set(
  `AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ
  BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR
  CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR
  GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU
  ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ
  LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ
  MR MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF
  PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI
  SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR
  TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW`.split(/\s+/),
);

/** Whether `code` (upper case) is a country code a proxy session can be asked for. */
export const isCountryCode = (code: string): boolean => COUNTRIES.has(code);

/**
 * Country → BCP 47 locale: the language most of its people browse in, with the country as
 * region (what Chromium's `--lang` and `Accept-Language` expect). Where several languages
 * share a country the largest one wins (CH de-CH, BE nl-BE, CA en-CA, IN hi-IN).
 */
export const COUNTRY_LOCALES: Readonly<Record<string, string>> = {
  AE: 'ar-AE',
  AR: 'es-AR',
  AT: 'de-AT',
  AU: 'en-AU',
  BD: 'bn-BD',
  BE: 'nl-BE',
  BG: 'bg-BG',
  BR: 'pt-BR',
  BY: 'be-BY',
  CA: 'en-CA',
  CH: 'de-CH',
  CL: 'es-CL',
  CN: 'zh-CN',
  CO: 'es-CO',
  CY: 'el-CY',
  CZ: 'cs-CZ',
  DE: 'de-DE',
  DK: 'da-DK',
  DZ: 'ar-DZ',
  EC: 'es-EC',
  EE: 'et-EE',
  EG: 'ar-EG',
  ES: 'es-ES',
  FI: 'fi-FI',
  FR: 'fr-FR',
  GB: 'en-GB',
  GR: 'el-GR',
  HK: 'zh-HK',
  HR: 'hr-HR',
  HU: 'hu-HU',
  ID: 'id-ID',
  IE: 'en-IE',
  IL: 'he-IL',
  IN: 'hi-IN',
  IQ: 'ar-IQ',
  IR: 'fa-IR',
  IS: 'is-IS',
  IT: 'it-IT',
  JO: 'ar-JO',
  JP: 'ja-JP',
  KE: 'en-KE',
  KR: 'ko-KR',
  KW: 'ar-KW',
  KZ: 'kk-KZ',
  LB: 'ar-LB',
  LT: 'lt-LT',
  LU: 'fr-LU',
  LV: 'lv-LV',
  MA: 'ar-MA',
  MX: 'es-MX',
  MY: 'ms-MY',
  NG: 'en-NG',
  NL: 'nl-NL',
  NO: 'nb-NO',
  NZ: 'en-NZ',
  PE: 'es-PE',
  PH: 'en-PH',
  PK: 'ur-PK',
  PL: 'pl-PL',
  PT: 'pt-PT',
  QA: 'ar-QA',
  RO: 'ro-RO',
  RS: 'sr-RS',
  RU: 'ru-RU',
  SA: 'ar-SA',
  SE: 'sv-SE',
  SG: 'en-SG',
  SI: 'sl-SI',
  SK: 'sk-SK',
  TH: 'th-TH',
  TN: 'ar-TN',
  TR: 'tr-TR',
  TW: 'zh-TW',
  UA: 'uk-UA',
  US: 'en-US',
  UY: 'es-UY',
  VE: 'es-VE',
  VN: 'vi-VN',
  ZA: 'en-ZA',
};

/** The fallback for a country the table does not know. */
export const DEFAULT_LOCALE = 'en-US';

/** The locale pages should tell for a session exiting in `country` (any case); en-US if unknown. */
export function localeFor(country: string): string {
  return COUNTRY_LOCALES[country.toUpperCase()] ?? DEFAULT_LOCALE;
}

/**
 * `PROXY_COUNTRY` of a persona.env: two letters, any case, an ISO 3166-1 alpha-2 code. The
 * code in upper case, or an error message that says what is expected.
 */
export function parseCountry(value: string): { country: string } | { error: string } {
  const code = value.trim().toUpperCase();
  if (!/^[A-Z]{2}$/.test(code)) {
    return { error: 'must be a two-letter ISO 3166-1 country code such as DE or US' };
  }
  if (code === 'UK') return { error: 'UK is not an ISO 3166-1 code: use GB' };
  if (!isCountryCode(code)) return { error: `${code} is not an ISO 3166-1 country code` };
  return { country: code };
}
