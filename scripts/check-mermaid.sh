#!/usr/bin/env bash
# Parses every golden Mermaid file with Mermaid's own parser (mermaid 11 in
# Node, with jsdom standing in for a browser). Needs node and npm, and the npm
# registry once; the packages go to a temporary folder.
#
#   scripts/check-mermaid.sh [FILE.mmd ...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
files=("$@")
[ ${#files[@]} -eq 0 ] && files=("$root"/tests/golden/*.mmd)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm init -y >/dev/null
npm install --silent mermaid@11 jsdom@24 >/dev/null
cat > check.mjs <<'JS'
import { JSDOM } from 'jsdom';
import fs from 'fs';
const dom = new JSDOM('<!DOCTYPE html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });
let bad = 0;
for (const f of process.argv.slice(2)) {
  try { await mermaid.parse(fs.readFileSync(f, 'utf8')); }
  catch (e) { bad++; console.log(`${f}: ${String(e.message || e).split('\n').slice(0, 3).join(' | ')}`); }
}
console.log(`${process.argv.length - 2} files, ${bad} rejected by mermaid.parse`);
process.exit(bad ? 1 : 0);
JS
node check.mjs "${files[@]}"
