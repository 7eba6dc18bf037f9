// editors/test/tokenize.js — tokenizes .tdsl files with editors/tdsl.tmLanguage.json through
// vscode-textmate and vscode-oniguruma (the engine of VS Code) and checks the scopes against an
// independent scan of spec §2's lexical structure:
//   * every character of a comment (`//`, `/* */`, multi-line included) is scoped comment.*;
//   * every character of a string is scoped string.* (its escapes constant.character.escape);
//   * every reserved keyword outside comments and strings is scoped keyword.*; a loop kind
//     (serial parallel vectorized unrolled thread) is keyword.* in a `for` header and not
//     elsewhere (there it is a schedule primitive or a name);
//   * dtype names are storage.type.*; no other identifier is scoped keyword.*.
// Usage: node tokenize.js ROOT [NODE_MODULES [GRAMMAR]]  — every .tdsl file under ROOT (build
// folders, node_modules and .git skipped). Prints one line per mismatch and exits 1 if any.
'use strict';
const fs = require('fs');
const path = require('path');

const root = path.resolve(process.argv[2] || path.join(__dirname, '..', '..'));
const modules = process.argv[3] ? path.resolve(process.argv[3]) : path.join(__dirname, 'node_modules');
const vsctm = require(path.join(modules, 'vscode-textmate'));
const oniguruma = require(path.join(modules, 'vscode-oniguruma'));
const grammarPath = process.argv[4] || path.join(__dirname, '..', 'tdsl.tmLanguage.json');

const KEYWORDS = new Set(('import const func graph extern pure schedule intrinsic for in block spatial reduce init ' +
  'alloc scope if else let dataflow output return call where true false inf').split(' '));
const LOOP_KINDS = new Set('serial parallel vectorized unrolled thread'.split(' '));
const DTYPES = new Set('bool i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64'.split(' '));

function findFiles(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === '.git' || /^build/.test(e.name)) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) findFiles(p, out);
    else if (e.name.endsWith('.tdsl')) out.push(p);
  }
  return out;
}

// The reference scan: per character, 'c' comment, 's' string, ' ' code; and the identifiers
// of the code with their offsets, and whether they sit in a `for` header (after `for`, before
// the next `{`).
function scan(text) {
  const kind = new Array(text.length).fill(' ');
  const idents = [];
  let i = 0, inFor = false;
  while (i < text.length) {
    if (text.startsWith('//', i)) {
      while (i < text.length && text[i] !== '\n') kind[i++] = 'c';
    } else if (text.startsWith('/*', i)) {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      for (; i < stop; i++) if (text[i] !== '\n') kind[i] = 'c';
    } else if (text[i] === '"') {
      kind[i++] = 's';
      while (i < text.length && text[i] !== '"' && text[i] !== '\n') {
        if (text[i] === '\\' && i + 1 < text.length && text[i + 1] !== '\n') kind[i++] = 's';
        kind[i++] = 's';
      }
      if (text[i] === '"') kind[i++] = 's';
    } else if (/[A-Za-z_]/.test(text[i])) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i, i + 200));
      idents.push({ name: m[0], offset: i, inFor });
      if (m[0] === 'for') inFor = true;
      i += m[0].length;
    } else if (/[0-9]/.test(text[i])) {
      const m = /^[0-9A-Za-z_.]*/.exec(text.slice(i, i + 100)); // a number (e.g. 1e5, 0x1F)
      i += Math.max(1, m[0].replace(/\.\..*$/, '').length);
    } else {
      if (text[i] === '{' || text[i] === ';') inFor = false;
      i++;
    }
  }
  return { kind, idents };
}

async function main() {
  const wasm = fs.readFileSync(path.join(modules, 'vscode-oniguruma', 'release', 'onig.wasm')).buffer;
  await oniguruma.loadWASM(wasm);
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (s) => new oniguruma.OnigScanner(s),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () => vsctm.parseRawGrammar(
      fs.readFileSync(grammarPath, 'utf8'),
      'tdsl.tmLanguage.json'),
  });
  const grammar = await registry.loadGrammar('source.tdsl');
  const files = findFiles(root, []).sort();
  let errors = 0, checkedComments = 0, checkedKeywords = 0, checkedStrings = 0;
  const report = (file, text, offset, msg) => {
    const before = text.slice(0, offset).split('\n');
    if (errors++ < 50)
      console.log(`${path.relative(root, file)}:${before.length}:${before[before.length - 1].length + 1}: ${msg}`);
  };
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    // The innermost scope of every character, from the grammar.
    const scopes = new Array(text.length);
    let rule = vsctm.INITIAL, lineStart = 0;
    for (const line of text.split('\n')) {
      const r = grammar.tokenizeLine(line, rule);
      for (const t of r.tokens)
        for (let k = t.startIndex; k < Math.min(t.endIndex, line.length); k++)
          scopes[lineStart + k] = t.scopes;
      rule = r.ruleStack;
      lineStart += line.length + 1;
    }
    const { kind, idents } = scan(text);
    const has = (offset, prefix) => (scopes[offset] || []).some((s) => s.startsWith(prefix));
    for (let k = 0; k < text.length; k++) {
      if (kind[k] === 'c' && !/\s/.test(text[k])) {
        checkedComments++;
        if (!has(k, 'comment.')) { report(file, text, k, `comment not scoped comment.*: ${(scopes[k] || []).join(' ')}`); while (kind[k + 1] === 'c') k++; }
      } else if (kind[k] === 's') {
        checkedStrings++;
        if (!has(k, 'string.')) { report(file, text, k, `string not scoped string.*: ${(scopes[k] || []).join(' ')}`); while (kind[k + 1] === 's') k++; }
      } else if (kind[k] === ' ' && (has(k, 'comment.') || has(k, 'string.')) && !/\s/.test(text[k])) {
        report(file, text, k, `code scoped as ${(scopes[k] || []).join(' ')}`);
        while (k + 1 < text.length && kind[k + 1] === ' ' && text[k + 1] !== '\n') k++;
      }
    }
    for (const id of idents) {
      const kw = has(id.offset, 'keyword.');
      const want = KEYWORDS.has(id.name) || (LOOP_KINDS.has(id.name) && id.inFor);
      if (want) checkedKeywords++;
      if (want && !kw) report(file, text, id.offset, `keyword '${id.name}' not scoped keyword.*: ${(scopes[id.offset] || []).join(' ')}`);
      if (!want && kw) report(file, text, id.offset, `identifier '${id.name}' scoped as a keyword`);
      if (DTYPES.has(id.name) && !has(id.offset, 'storage.type.'))
        report(file, text, id.offset, `dtype '${id.name}' not scoped storage.type.*`);
    }
  }
  console.log(`tokenize: ${files.length} files, ${checkedKeywords} keywords, ` +
    `${checkedComments} comment and ${checkedStrings} string characters checked, ${errors} mismatches`);
  process.exit(errors ? 1 : 0);
}

main().catch((e) => { console.error(e); process.exit(2); });
