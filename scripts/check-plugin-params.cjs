#!/usr/bin/env node
/**
 * A plugin's parameters are declared twice: in its manifest.json (what the worker validates,
 * documents and shows in the panel) and in the type its index.ts hands `definePlugin` (what
 * run() and validate() read). This check compiles every plugin and fails when the two disagree:
 * a name only one side has, a type that is not the one the worker delivers (text, url, textarea
 * and select are strings, number a number, checkbox a boolean), a select's literal that is not
 * among its options, or a parameter that may be absent (neither required nor defaulted) typed as
 * always present, or the other way round.
 *
 * Usage: node scripts/check-plugin-params.cjs [plugins folder]   (exit 1 on any disagreement)
 */
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const STRING_TYPES = new Set(['text', 'url', 'textarea', 'select']);

/** Every folder under `root` with a manifest.json that is not a placeholder. */
function pluginFolders(root) {
  const out = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || ['dist', 'test', 'node_modules'].includes(entry.name)) continue;
      const folder = path.join(dir, entry.name);
      const manifestFile = path.join(folder, 'manifest.json');
      if (fs.existsSync(manifestFile)) {
        const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
        if (!manifest.placeholder) out.push({ folder, manifest });
      }
      walk(folder);
    }
  };
  walk(root);
  return out;
}

/** The type of the parameters a plugin module's default export declares, or null. */
function declaredParams(checker, sourceFile) {
  const moduleSymbol = checker.getSymbolAtLocation(sourceFile);
  const exported = moduleSymbol && checker.getExportsOfModule(moduleSymbol);
  const def = exported && exported.find((s) => s.escapedName === 'default');
  if (!def) return null;
  const moduleType = checker.getTypeOfSymbolAtLocation(def, sourceFile);
  const run = moduleType.getProperty('run');
  if (!run) return null;
  const [signature] = checker.getTypeOfSymbolAtLocation(run, sourceFile).getCallSignatures();
  const params = signature && signature.getParameters()[1];
  return params ? checker.getTypeOfSymbolAtLocation(params, sourceFile) : null;
}

const parts = (t) => (t.isUnion() ? t.types : [t]);
const isUndefined = (t) => (t.flags & ts.TypeFlags.Undefined) !== 0;

/** What is wrong with one property's type for the manifest's parameter `p`. */
function typeProblem(checker, p, propType) {
  const present = parts(propType).filter((t) => !isUndefined(t));
  const shown = checker.typeToString(propType);
  if (p.type === 'number') {
    return present.every((t) => t.flags & ts.TypeFlags.NumberLike)
      ? null
      : `is a number in the manifest, ${shown} in the code`;
  }
  if (p.type === 'checkbox') {
    return present.every((t) => t.flags & ts.TypeFlags.BooleanLike)
      ? null
      : `is a checkbox (a boolean) in the manifest, ${shown} in the code`;
  }
  if (!STRING_TYPES.has(p.type)) return `has a type the worker does not know: ${p.type}`;
  if (!present.every((t) => t.flags & ts.TypeFlags.StringLike))
    return `is ${p.type} (a string) in the manifest, ${shown} in the code`;
  const literals = present.filter((t) => t.isStringLiteral()).map((t) => t.value);
  const stray = literals.filter((v) => !(p.options || []).includes(v));
  if (stray.length > 0) return `allows ${stray.join(', ')} in the code, not among its options`;
  return null;
}

/** The disagreements between one plugin's manifest and the parameters type of its code. */
function problemsOf(checker, sourceFile, manifest) {
  const params = declaredParams(checker, sourceFile);
  if (!params) return ['index.ts exports no plugin (a default export from definePlugin)'];
  const problems = [];
  const declared = new Map(manifest.parameters.map((p) => [p.name, p]));
  // A union (`{ from_check: true; url?: string } | { from_check: false; url: string }`) is
  // checked member by member: each must agree with the manifest.
  for (const member of parts(params)) {
    const props = member.flags & ts.TypeFlags.Object ? checker.getPropertiesOfType(member) : [];
    const names = new Set(props.map((s) => s.name));
    for (const name of declared.keys()) {
      if (!names.has(name)) problems.push(`${name} is in manifest.json but not in the code's type`);
    }
    for (const prop of props) {
      const p = declared.get(prop.name);
      if (!p) {
        problems.push(`${prop.name} is in the code's type but not in manifest.json`);
        continue;
      }
      const propType = checker.getTypeOfSymbolAtLocation(prop, sourceFile);
      const why = typeProblem(checker, p, propType);
      if (why) problems.push(`${p.name} ${why}`);
      const mayBeAbsent =
        (prop.flags & ts.SymbolFlags.Optional) !== 0 || parts(propType).some(isUndefined);
      const always = p.required === true || (p.default !== undefined && p.default !== null);
      if (always && mayBeAbsent)
        problems.push(
          `${p.name} is always given (required or defaulted): its type must not be optional`,
        );
      // Required unless another checkbox is true: a union member may say either.
      if (!always && !p.required_unless && !mayBeAbsent)
        problems.push(
          `${p.name} may be absent (neither required nor defaulted): its type must be optional`,
        );
    }
  }
  return [...new Set(problems)];
}

/**
 * Every disagreement under `root`, as `folder: problem` lines (empty when all agree), compiled
 * with the options of `tsconfig` (the plugins package's own by default).
 */
function checkPlugins(root, tsconfig = path.join(root, 'tsconfig.json')) {
  const plugins = pluginFolders(root);
  const missing = plugins.filter((p) => !fs.existsSync(path.join(p.folder, 'index.ts')));
  const found = plugins.filter((p) => !missing.includes(p));
  const config = ts.getParsedCommandLineOfConfigFile(
    tsconfig,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  const options = config ? config.options : { strict: true };
  const program = ts.createProgram(
    found.map((p) => path.join(p.folder, 'index.ts')),
    { ...options, noEmit: true, composite: false, incremental: false },
  );
  const checker = program.getTypeChecker();
  const lines = missing.map((p) => `${path.relative(root, p.folder)}: no index.ts`);
  for (const p of found) {
    const sourceFile = program.getSourceFile(path.join(p.folder, 'index.ts'));
    for (const problem of problemsOf(checker, sourceFile, p.manifest))
      lines.push(`${path.relative(root, p.folder)}: ${problem}`);
  }
  return lines;
}

module.exports = { checkPlugins };

if (require.main === module) {
  const root = path.resolve(
    process.argv[2] || path.join(path.dirname(module.filename), '..', 'plugins'),
  );
  const lines = checkPlugins(root);
  if (lines.length > 0) {
    process.stderr.write(
      `Plugin parameters disagree with their manifests:\n  ${lines.join('\n  ')}\n`,
    );
    process.exit(1);
  }
  process.stdout.write(`Plugin parameters agree with their manifests (${root}).\n`);
}
