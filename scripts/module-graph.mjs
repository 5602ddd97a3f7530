#!/usr/bin/env node
// The import graph of src/ folded to its top-level folders (`npm run modules:measure`): how many
// folders there are, and which pairs import each other (A imports B and B imports A, through any
// file of each). Unit specs are left out, as dependency-cruiser leaves them out.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SRC = path.join(ROOT, 'src');

function sources(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const abs = path.join(dir, e.name);
    if (e.isDirectory()) return sources(abs);
    return e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts') ? [abs] : [];
  });
}

/** The top-level folder under src/ holding `abs`, or null for a file at the root of src/. */
function folderOf(abs) {
  const parts = path.relative(SRC, abs).split(path.sep);
  return parts.length > 1 ? parts[0] : null;
}

const edges = new Map();
for (const file of sources(SRC)) {
  const from = folderOf(file);
  if (!from) continue;
  for (const ref of ts.preProcessFile(fs.readFileSync(file, 'utf8'), true, true).importedFiles) {
    if (!ref.fileName.startsWith('.')) continue;
    const to = folderOf(path.resolve(path.dirname(file), ref.fileName));
    if (!to || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Set());
    edges.get(from).add(to);
  }
}

const folders = fs
  .readdirSync(SRC, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();
const pairs = [];
for (const a of folders)
  for (const b of folders) if (a < b && edges.get(a)?.has(b) && edges.get(b)?.has(a)) pairs.push(`${a} <-> ${b}`);
console.log(`folders under src/: ${folders.length}`);
console.log(`folder pairs importing each other: ${pairs.length}`);
for (const p of pairs) console.log(`  ${p}`);
