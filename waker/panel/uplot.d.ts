// uPlot, loaded by the fleet panel as a classic script (/vendor/uplot/uPlot.iife.min.js), is
// the global `uPlot` (undefined when the file did not load); its types come with the package.
import type UPlot from 'uplot';

declare global {
  const uPlot: typeof UPlot | undefined;
}
