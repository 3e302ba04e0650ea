#!/usr/bin/env node
// Reads the output of `tsc --pretty false` and judges each generated module:
//
//   node verify.mjs TSC_OUTPUT TSC_EXIT_CODE --pass DIR [--fail DIR --expect TSV] [--failed NAME]...
//
// --pass DIR     every DIR/*.ts must have no error.
// --fail DIR     every DIR/*.ts must have an error whose text contains the substring that
//                TSV gives for it (lines "NAME<TAB>substring", NAME without .ts; '#' comments),
//                so a fixture fails for the reason it was written for, not another one.
// --failed NAME  count NAME as failed (e.g. a catalog the CLI could not export).
// An error outside those files (a config error, a broken SDK import) fails the run, as does a
// tsc that crashed. Prints one line per module and ends with "N passed, M failed".
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';

const [outputFile, exitCodeText, ...rest] = process.argv.slice(2);
const passDirs = [];
const failDirs = [];
const preFailed = [];
let expectFile;
for (let i = 0; i < rest.length; i += 2) {
  const [flag, value] = [rest[i], rest[i + 1]];
  if (value === undefined) throw new Error(`verify: ${flag} needs a value`);
  if (flag === '--pass') passDirs.push(value);
  else if (flag === '--fail') failDirs.push(value);
  else if (flag === '--expect') expectFile = value;
  else if (flag === '--failed') preFailed.push(value);
  else throw new Error(`verify: unknown flag ${flag}`);
}

// gen.mjs writes `// tool: "NAME"` before each tool: the last one above a line names its tool.
const sources = new Map();
function toolAt(file, lineNo) {
  if (!sources.has(file)) {
    try {
      sources.set(file, readFileSync(file, 'utf8').split('\n'));
    } catch {
      sources.set(file, []);
    }
  }
  const lines = sources.get(file);
  for (let i = Math.min(lineNo, lines.length) - 1; i >= 0; i--) {
    const m = /^\s*\/\/ tool: (".*")$/.exec(lines[i]);
    if (m) return JSON.parse(m[1]);
  }
  return undefined;
}

// Group the diagnostics by file: "path(line,col): error TSnnnn: message" starts one,
// indented lines continue it; a line without a path is a global error.
const errors = new Map(); // absolute path -> [diagnostic text]
const global = [];
let current = null;
for (const line of readFileSync(outputFile, 'utf8').split('\n')) {
  const m = /^(.+?)\((\d+),\d+\): error TS\d+:/.exec(line);
  if (m) {
    const file = resolve(m[1]);
    const tool = toolAt(file, Number(m[2]));
    current = { text: tool ? `${line}\n  (in tool ${tool})` : line };
    if (!errors.has(file)) errors.set(file, []);
    errors.get(file).push(current);
  } else if (/^\s+\S/.test(line) && current) {
    current.text += '\n' + line;
  } else if (/error TS\d+:/.test(line)) {
    current = { text: line };
    global.push(current);
  } else if (line.trim() !== '') {
    current = null;
  }
}

const expect = new Map();
if (expectFile) {
  for (const line of readFileSync(expectFile, 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const tab = line.indexOf('\t');
    if (tab < 0) throw new Error(`verify: ${expectFile}: no tab in ${JSON.stringify(line)}`);
    expect.set(line.slice(0, tab), line.slice(tab + 1));
  }
}

const tsFiles = (dir) => readdirSync(dir).filter((f) => f.endsWith('.ts')).sort().map((f) => join(dir, f));
const seen = new Set();
let passed = 0;
let failed = 0;
const ok = (what) => {
  passed++;
  console.log(`ok    ${what}`);
};
const bad = (what, why) => {
  failed++;
  console.log(`FAIL  ${what}${why ? `\n${why.replace(/^/gm, '        ')}` : ''}`);
};

for (const name of preFailed) bad(name, 'not exported (see above)');

for (const dir of passDirs) {
  for (const file of tsFiles(dir)) {
    seen.add(resolve(file));
    const errs = errors.get(resolve(file)) ?? [];
    if (errs.length === 0) ok(file);
    else bad(file, errs.map((e) => e.text).join('\n'));
  }
}

for (const dir of failDirs) {
  const names = new Set();
  for (const file of tsFiles(dir)) {
    seen.add(resolve(file));
    const name = file.slice(dir.length + 1, -'.ts'.length);
    names.add(name);
    const errs = errors.get(resolve(file)) ?? [];
    const want = expect.get(name);
    if (want === undefined) bad(file, `no expected error listed for ${name} in ${expectFile}`);
    else if (errs.length === 0) bad(file, `type-checked, but should fail with: ${want}`);
    else if (!errs.some((e) => e.text.includes(want)))
      bad(file, `failed, but not with: ${want}\n${errs.map((e) => e.text).join('\n')}`);
    else ok(`${file} rejected: ${errs.find((e) => e.text.includes(want)).text.split('\n')[0].replace(/^.*?error /, '').slice(0, 160)}`);
  }
  for (const name of expect.keys()) if (!names.has(name)) bad(name, `listed in ${expectFile} but no ${name}.ts was generated`);
}

for (const [file, errs] of errors) if (!seen.has(file)) bad(file, errs.map((e) => e.text).join('\n'));
for (const e of global) bad('tsc', e.text);
const code = Number(exitCodeText);
if (!(code === 0 || code === 1 || code === 2)) bad('tsc', `exited with ${exitCodeText}`);
else if (code !== 0 && errors.size === 0 && global.length === 0) bad('tsc', `exited with ${code} but printed no error`);
if (passed + failed === 0) bad('verify', 'nothing was checked');

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
