import { definePlugin } from '@persona-browser/plugin-sdk';
import { goToSection } from '../navigation';

export default definePlugin<Record<string, never>>({
  run: (ctx) => goToSection(ctx, 'conto'),
});
