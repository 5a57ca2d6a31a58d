/**
 * Every disagreement between the plugins' manifests under `root` and their code's parameter
 * types, as `folder: problem` lines (empty when all agree).
 */
export declare function checkPlugins(root: string, tsconfig?: string): string[];
