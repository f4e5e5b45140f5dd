// Loads counterfoil.wasm (the Rust core's pure rules) and wraps its C ABI.
// No rule lives here: every answer comes from the wasm module.
export async function loadCounterfoil(source) {
  const bytes = source instanceof ArrayBuffer || ArrayBuffer.isView(source)
    ? source
    : await (await fetch(source)).arrayBuffer();
  const { instance } = await WebAssembly.instantiate(bytes, {});
  const e = instance.exports;
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const read = (n) => JSON.parse(decoder.decode(new Uint8Array(e.memory.buffer, e.cf_result_ptr(), n)));
  const withText = (text, call) => {
    const bytes = encoder.encode(text);
    const ptr = e.cf_alloc(bytes.length);
    new Uint8Array(e.memory.buffer, ptr, bytes.length).set(bytes);
    try {
      return read(call(ptr, bytes.length));
    } finally {
      e.cf_free(ptr, bytes.length);
    }
  };
  return {
    // fiscal: [month, day] the fiscal year starts on, or [0, 0] for the calendar year.
    format: (template, number, year, month, fiscal = [0, 0]) =>
      withText(template, (p, n) => e.cf_format(p, n, BigInt(number), year, month, fiscal[0], fiscal[1])),
    awb: (text) => withText(text, (p, n) => e.cf_awb(p, n)),
    scopeKey: (text) => withText(text, (p, n) => e.cf_scope_key(p, n)),
    advance: (current, next) => read(e.cf_advance(BigInt(current), BigInt(next))),
    advanceTyped: (current, typed) => withText(typed, (p, n) => e.cf_advance_typed(BigInt(current), p, n)),
  };
}
