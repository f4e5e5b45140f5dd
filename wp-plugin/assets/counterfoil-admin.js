// The admin pages' live checks, in the browser, with the Rust core compiled
// to WebAssembly (counterfoil.wasm). Convenience only: the server validates
// every form again. No rule is written here; every answer is the wasm's.
import { loadCounterfoil } from './counterfoil-core.js';

const $ = (id) => document.getElementById(id);
const say = (el, text, ok) => {
  if (!el) return;
  el.textContent = text;
  el.classList.toggle('counterfoil-ok', ok);
  el.classList.toggle('counterfoil-refused', !ok);
};

// The sentences, translated by the server (data-strings of #counterfoil-i18n),
// with sprintf-style placeholders (%s, %1$s, …).
const strings = JSON.parse($('counterfoil-i18n')?.dataset.strings ?? '{}');
const t = (key, ...args) => {
  let i = 0;
  return (strings[key] ?? key).replace(/%(?:(\d+)\$)?s/g, (_, n) => String(args[n ? Number(n) - 1 : i++]));
};

// The webhook secret is not in the page: "Show" asks the server for it
// (admin-ajax, the page's nonce), "Hide" forgets it again (no wasm needed).
const reveal = $('counterfoil-secret-reveal');
if (reveal) {
  const show = reveal.textContent;
  reveal.addEventListener('click', async () => {
    const field = $('counterfoil-secret');
    if (field.type === 'text') {
      field.type = 'password';
      field.value = '';
      reveal.textContent = show;
      return;
    }
    const body = new URLSearchParams({ action: 'counterfoil_reveal_secret', _wpnonce: field.dataset.nonce });
    const answer = await fetch(field.dataset.url, { method: 'POST', credentials: 'same-origin', body })
      .then((r) => r.json())
      .catch(() => null);
    if (!answer || !answer.success) {
      field.placeholder = answer?.data?.message ?? field.placeholder;
      return;
    }
    field.value = answer.data.secret;
    field.type = 'text';
    reveal.textContent = reveal.dataset.hide;
  });
}

let cf;
try {
  cf = await loadCounterfoil(new URL('counterfoil.wasm', import.meta.url));
} catch (e) {
  // No wasm (not built, or blocked): the forms still work, checked by the server.
  console.warn('counterfoil: live checks unavailable', e);
}
if (cf) {
  document.documentElement.dataset.counterfoilWasm = 'ready';
  // Settings: preview the next number as the typed format renders it, for
  // the site's period (its clock and time zone, given by the server), not the
  // browser's.
  const format = $('counterfoil-format');
  if (format) {
    const year = Number(format.dataset.year);
    const month = Number(format.dataset.month);
    const first = document.querySelector('#counterfoil-series tbody tr[data-next]');
    const next = first ? first.dataset.next : '1';
    const scope = first ? first.dataset.scope : '';
    const preview = () => {
      const fiscal = [Number(format.dataset.fiscalMonth ?? 0), Number(format.dataset.fiscalDay ?? 0)];
      const r = cf.format(format.value, BigInt(next), year, month, fiscal);
      say($('counterfoil-format-preview'), r.ok
        ? (scope ? t('continues', scope, r.text) : t('first', r.text))
        : `${r.error}`, r.ok);
    };
    format.addEventListener('input', preview);
    preview();
  }

  // Advance: show the refusal before submitting a next number that is not
  // higher. The scope key and the typed number are judged by the core, as
  // the server judges them (no trimming or number parsing here).
  const scopeInput = document.querySelector('#counterfoil-advance input[name=scope_key]');
  const nextInput = document.querySelector('#counterfoil-advance input[name=next]');
  const submit = document.querySelector('#counterfoil-advance [type=submit]');
  const check = () => {
    const out = $('counterfoil-advance-check');
    const allow = (ok) => { if (submit) submit.disabled = !ok; };
    if (scopeInput.value === '') {
      say(out, '', true);
      allow(true);
      return;
    }
    const key = cf.scopeKey(scopeInput.value);
    if (!key.ok) {
      say(out, key.error, false);
      allow(false);
      return;
    }
    const row = [...document.querySelectorAll('#counterfoil-series tbody tr[data-scope]')]
      .find((tr) => tr.dataset.scope === scopeInput.value);
    if (!row || nextInput.value === '') {
      say(out, '', true);
      allow(true);
      return;
    }
    const r = cf.advanceTyped(row.dataset.current, nextInput.value);
    const refused = !r.ok || !r.moves;
    say(out, !r.ok ? r.error : r.moves
      ? t('willContinue', row.dataset.scope, String(r.next))
      : t('refused', row.dataset.scope, nextInput.value, r.next), !refused);
    allow(!refused);
  };
  if (scopeInput && nextInput) {
    scopeInput.addEventListener('input', check);
    nextInput.addEventListener('input', check);
  }

  // Tools → AWB check.
  const awb = $('counterfoil-awb-input');
  if (awb) {
    const show = () => {
      const r = cf.awb(awb.value);
      if (r.kind === 'empty') {
        say($('counterfoil-awb-result'), '', true);
        return;
      }
      say($('counterfoil-awb-result'), r.ok
        ? t('awbValid', r.canonical, r.check_digit)
        : r.kind === 'check_digit'
          ? t('awbCheck', r.expected, r.got, r.error)
          : t('awbInvalid', r.error), r.ok);
    };
    awb.addEventListener('input', show);
    show();
  }
}
