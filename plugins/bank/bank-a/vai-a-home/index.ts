import { definePlugin } from '@persona-browser/plugin-sdk';
import { arrived, openSection } from '../navigation';
import { LOGGED_IN, landing, readPage, readUntil, requireState, stateOf } from '../page-state';

interface Params {
  confirmation_wait_s: number;
}

/** How often the page is read while the person confirms on the phone. */
const CONFIRMATION_POLL_MS = 500;
/** After the confirmation the site loads its logged-in area. */
const AREA_WAIT_MS = 15_000;

export default definePlugin<Params>({
  async run(ctx, p) {
    let page = await readPage(ctx);
    const from_state = requireState(
      page,
      ['app_confirmation', ...LOGGED_IN],
      'the confirmation on the phone app or a page of the logged-in area',
    );
    const steps: string[] = [];
    if (from_state === 'app_confirmation') {
      const started = Date.now();
      // The person confirms on the phone; they may take control in the live view meanwhile.
      page = await ctx.waitingForPerson('the login confirmed on the bank-a app', () =>
        readUntil(
          ctx,
          (pg) => stateOf(pg) !== 'app_confirmation',
          p.confirmation_wait_s * 1000,
          CONFIRMATION_POLL_MS,
        ),
      );
      if (stateOf(page) === 'app_confirmation') {
        return {
          success: false,
          error: 'confirmation_timeout',
          ...landing(page),
          message: `The login was not confirmed on the phone app within ${p.confirmation_wait_s} s: confirm it (bank/bank-a/read-qr shows the QR code) and call bank/bank-a/vai-a-home again`,
        };
      }
      steps.push(
        `waited ${Math.round((Date.now() - started) / 1000)} s for the confirmation on the phone app`,
      );
      page = await readUntil(
        ctx,
        (pg) => LOGGED_IN.includes(stateOf(pg)) || !!pg.login,
        AREA_WAIT_MS,
      );
      requireState(page, LOGGED_IN, 'the logged-in area after the confirmation');
    }
    const home = await openSection(ctx, page, 'home', steps);
    return arrived(home, from_state, steps);
  },
});
