import { definePlugin } from '@persona-browser/plugin-sdk';
import { openList } from '../lists';

export default definePlugin<Record<string, never>>({
  run: (ctx) => openList(ctx, 'following'),
});
