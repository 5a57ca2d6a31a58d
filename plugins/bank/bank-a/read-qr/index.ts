import { definePlugin, SiteError } from '@persona-browser/plugin-sdk';
import { guide, readPage, readUntil, requireState, stateOf } from '../page-state';
import { SELECTORS } from '../site';

/** The confirmation page asks the site for its QR code after it loaded. */
const QR_WAIT_MS = 10_000;

export default definePlugin<Record<string, never>>({
  async run(ctx) {
    requireState(await readPage(ctx), ['app_confirmation']);
    const page = await readUntil(
      ctx,
      (p) => stateOf(p) !== 'app_confirmation' || !!p.confirmation?.qrLoaded,
      QR_WAIT_MS,
    );
    requireState(page, ['app_confirmation']);
    if (!page.confirmation?.qrLoaded) {
      throw new SiteError(
        'the QR code on the confirmation page',
        `no QR image loaded at ${page.url}`,
        {
          ...guide(page),
        },
      );
    }
    const png = await ctx.page.screenshot(SELECTORS.qrBox);
    const [text] = await ctx.codes.readQr(png);
    if (!text) {
      throw new SiteError(
        'a QR code that can be read',
        `no decodable QR code in the image at ${page.url}`,
        {
          ...guide(page),
        },
      );
    }
    // The code logs the person in: from here on it stays out of the log, capture and errors.
    ctx.conceal(text);
    const { media_url } = ctx.media.put(png, 'bank-a-qr.png', 'image/png');
    return {
      text,
      media_url,
      state: 'app_confirmation',
      page_url: page.url,
      message:
        'The QR code of the login: frame it with the bank-a app on the phone and confirm; then bank/bank-a/vai-a-home waits for the confirmation',
    };
  },
});
