#!/usr/bin/env node
/**
 * The web page's files beside its compiled scripts (dist/web/app, from `tsc -p web/tsconfig.json`):
 * index.html, styles.css, and the ES module builds of the Markdown renderer and the sanitiser in
 * dist/web/vendor, which the page imports as `/vendor/<name>.js`. The page has no bundler: these
 * two files are served as the packages ship them (license headers kept), without their source-map
 * comment (the maps are not served). Run by `npm run build:web`.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'web');

/** The served name, and the package whose ES module build (what `import` resolves to) it is. */
const VENDOR = [
  ['marked.js', 'marked'],
  ['purify.js', 'dompurify'],
];

for (const file of ['index.html', 'styles.css']) copyFileSync(join(root, 'web', file), join(out, file));
mkdirSync(join(out, 'vendor'), { recursive: true });
for (const [name, source] of VENDOR) {
  const text = readFileSync(fileURLToPath(import.meta.resolve(source)), 'utf8').replace(
    /\n\/\/# sourceMappingURL=\S+\s*$/,
    '\n',
  );
  writeFileSync(join(out, 'vendor', name), text);
}
