// The wasm build of the core answers the shared vectors exactly as the Rust
// core does. Usage: node vectors.mjs path/to/counterfoil_wasm.wasm tests/vectors
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCounterfoil } from '../../wp-plugin/assets/counterfoil-core.js';

const [wasmPath, vectors] = process.argv.slice(2);
const cf = await loadCounterfoil(readFileSync(wasmPath));
// JSON with u64 numbers: keep big integers exact.
const load = (name) => JSON.parse(readFileSync(join(vectors, name), 'utf8').replace(/:\s*(\d{16,})/g, ': "$1"'));

let passed = 0;
let failed = 0;
function expect(cond, what) {
  if (cond) { passed++; } else { failed++; console.error(`FAIL ${what}`); }
}

for (const c of load('formats.json')) {
  // A fiscal rule `fiscal-year:MM-DD` as the [month, day] the module takes.
  const fiscal = c.rule ? c.rule.slice('fiscal-year:'.length).split('-').map(Number) : [0, 0];
  const r = cf.format(c.template, BigInt(c.number ?? 0), c.year ?? 2019, c.month ?? 1, fiscal);
  if (c.expect !== undefined) {
    expect(r.ok && r.text === c.expect, `format ${JSON.stringify(c.template)} → ${JSON.stringify(r)}`);
  } else if (c.at !== undefined) {
    expect(!r.ok && r.kind === c.error && r.at === c.at, `format error ${JSON.stringify(c.template)} → ${JSON.stringify(r)}`);
  } else {
    expect(!r.ok && r.kind === c.error, `format render error ${JSON.stringify(c)} → ${JSON.stringify(r)}`);
  }
}
for (const c of load('awb.json')) {
  const r = cf.awb(c.text);
  if (c.canonical) {
    expect(r.ok && r.canonical === c.canonical, `awb ${JSON.stringify(c.text)} → ${JSON.stringify(r)}`);
  } else {
    const digits = c.error !== 'check_digit' || (r.expected === c.expected && r.got === c.got);
    expect(!r.ok && r.kind === c.error && digits, `awb ${JSON.stringify(c.text)} → ${JSON.stringify(r)}`);
  }
}
for (const c of load('scope_keys.json')) {
  const key = c.key ?? c.key_repeat[0].repeat(c.key_repeat[1]);
  const r = cf.scopeKey(key);
  expect(c.error ? (!r.ok && r.kind === c.error) : r.ok, `scope key ${JSON.stringify(key).slice(0, 40)} → ${JSON.stringify(r)}`);
}
const rules = load('series_rules.json');
for (const c of rules.next) {
  const r = cf.advance(0n, BigInt(c.value));
  expect(c.error ? !r.ok : r.ok, `advance to ${c.value} → ${JSON.stringify(r)}`);
}
expect(cf.advance(199n, 100n).moves === false && cf.advance(199n, 201n).moves === true, 'advance never moves down');

console.log(`wasm vectors: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
