import { definePlugin } from '@persona-browser/plugin-sdk';
import { getList, validateScrolls } from '../lists';

interface Params {
  scrolls: number;
}

export default definePlugin<Params>({
  validate: validateScrolls,
  run: (ctx, p) => getList(ctx, 'followers', p.scrolls),
});
