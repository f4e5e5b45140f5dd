//! counterfoil-wasm: the pure part of counterfoil-core for the browser.
//!
//! A small C ABI (no JavaScript glue to generate): the page writes a UTF-8
//! string into memory it got from [`cf_alloc`], calls a function, and reads
//! the answer — a JSON object — from [`cf_result_ptr`] / [`cf_result_len`].
//! Every answer comes from counterfoil-core; no rule is written here or in
//! JavaScript. Invariants: the result buffer is valid until the next call;
//! inputs that are not UTF-8 are answered `{"ok":false,...}`, never a trap.

use std::cell::RefCell;

use counterfoil_core::awb::{Awb, AwbError};
use counterfoil_core::fiscal::PeriodRule;
use counterfoil_core::series::{advance_outcome, Advanced};
use counterfoil_core::{NumberFormat, Period, ScopeKey};

thread_local! {
    static RESULT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

fn json_str(s: &str) -> String {
    counterfoil_core::export::json_string(s)
}

fn answer(json: String) -> usize {
    let len = json.len();
    RESULT.with(|r| *r.borrow_mut() = json.into_bytes());
    len
}

/// # Safety
/// `ptr..ptr+len` must be memory the caller wrote (from [`cf_alloc`]).
unsafe fn input<'a>(ptr: *const u8, len: usize) -> Result<&'a str, usize> {
    if ptr.is_null() && len > 0 {
        return Err(answer(r#"{"ok":false,"error":"null input"}"#.into()));
    }
    let bytes = if len == 0 {
        &[][..]
    } else {
        std::slice::from_raw_parts(ptr, len)
    };
    std::str::from_utf8(bytes)
        .map_err(|_| answer(r#"{"ok":false,"error":"the input is not UTF-8"}"#.into()))
}

/// Memory for an input of `len` bytes (freed with [`cf_free`]).
#[no_mangle]
pub extern "C" fn cf_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::with_capacity(len.max(1));
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Frees memory from [`cf_alloc`].
///
/// # Safety
/// `ptr` and `len` must come from one [`cf_alloc`] call.
#[no_mangle]
pub unsafe extern "C" fn cf_free(ptr: *mut u8, len: usize) {
    if !ptr.is_null() {
        drop(Vec::from_raw_parts(ptr, 0, len.max(1)));
    }
}

/// Where the last answer is.
#[no_mangle]
pub extern "C" fn cf_result_ptr() -> *const u8 {
    RESULT.with(|r| r.borrow().as_ptr())
}

/// How long the last answer is.
#[no_mangle]
pub extern "C" fn cf_result_len() -> usize {
    RESULT.with(|r| r.borrow().len())
}

/// Renders `number` with the template for year and month, under the
/// fiscal year starting on (`fiscal_month`, `fiscal_day`) — `0, 0` for the
/// calendar year — for `{fy}` and `{fy_end}`:
/// `{"ok":true,"text":"2019-0002"}` or `{"ok":false,"error":"…","kind":"…","at":7}`.
///
/// # Safety
/// The template must be memory the caller wrote.
#[no_mangle]
pub unsafe extern "C" fn cf_format(
    ptr: *const u8,
    len: usize,
    number: u64,
    year: u32,
    month: u32,
    fiscal_month: u32,
    fiscal_day: u32,
) -> usize {
    let template = match input(ptr, len) {
        Ok(t) => t,
        Err(n) => return n,
    };
    let rule = if fiscal_month == 0 {
        Ok(PeriodRule::CalendarYear)
    } else {
        PeriodRule::parse(&format!("fiscal-year:{fiscal_month:02}-{fiscal_day:02}"))
    };
    let rule = match rule {
        Ok(r) => r,
        Err(e) => {
            return answer(format!(
                r#"{{"ok":false,"error":{},"kind":"period","at":0}}"#,
                json_str(&e.to_string())
            ))
        }
    };
    let rendered = NumberFormat::parse(template)
        .and_then(|f| Ok(f.render(number, Period::new(year, month)?.with_rule(rule))));
    answer(match rendered {
        Ok(text) => format!(r#"{{"ok":true,"text":{}}}"#, json_str(&text)),
        Err(e) => format!(
            r#"{{"ok":false,"error":{},"kind":"{}","at":{}}}"#,
            json_str(&e.to_string()),
            e.kind.name(),
            e.at
        ),
    })
}

/// Checks an AWB number: `{"ok":true,"canonical":"157-40121012"}` or
/// `{"ok":false,"error":"…","kind":"check_digit","expected":2,"got":3}`.
///
/// # Safety
/// The text must be memory the caller wrote.
#[no_mangle]
pub unsafe extern "C" fn cf_awb(ptr: *const u8, len: usize) -> usize {
    let text = match input(ptr, len) {
        Ok(t) => t,
        Err(n) => return n,
    };
    answer(match Awb::parse(text) {
        Ok(a) => format!(
            r#"{{"ok":true,"canonical":"{a}","check_digit":{}}}"#,
            a.check_digit()
        ),
        Err(e) => {
            let extra = match &e {
                AwbError::CheckDigit { expected, got, .. } => {
                    format!(r#","expected":{expected},"got":{got}"#)
                }
                _ => String::new(),
            };
            format!(
                r#"{{"ok":false,"error":{},"kind":"{}"{extra}}}"#,
                json_str(&e.to_string()),
                e.name()
            )
        }
    })
}

/// Checks a scope key: `{"ok":true}` or `{"ok":false,"error":"…","kind":"…"}`.
///
/// # Safety
/// The text must be memory the caller wrote.
#[no_mangle]
pub unsafe extern "C" fn cf_scope_key(ptr: *const u8, len: usize) -> usize {
    let text = match input(ptr, len) {
        Ok(t) => t,
        Err(n) => return n,
    };
    answer(match ScopeKey::new(text) {
        Ok(_) => r#"{"ok":true}"#.into(),
        Err(e) => format!(
            r#"{{"ok":false,"error":{},"kind":"{}"}}"#,
            json_str(&e.to_string()),
            e.name()
        ),
    })
}

/// As [`cf_advance`], with the next number as typed (the core's
/// `parse_typed_number`): `{"ok":false,"error":"…"}` when it is not one.
///
/// # Safety
/// The text must be memory the caller wrote.
#[no_mangle]
pub unsafe extern "C" fn cf_advance_typed(current: u64, ptr: *const u8, len: usize) -> usize {
    let text = match input(ptr, len) {
        Ok(t) => t,
        Err(n) => return n,
    };
    match counterfoil_core::series::parse_typed_number("next", text) {
        Ok(next) => cf_advance(current, next),
        Err(e) => answer(format!(
            r#"{{"ok":false,"error":{}}}"#,
            json_str(&e.to_string())
        )),
    }
}

/// What advancing a series at counter `current` to next number `next` would
/// do: `{"ok":true,"moves":true,"next":200}`, `{"ok":true,"moves":false,"next":201}`
/// (refused: a series never moves down), or `{"ok":false,"error":"…"}`.
#[no_mangle]
pub extern "C" fn cf_advance(current: u64, next: u64) -> usize {
    answer(match advance_outcome(current, next) {
        Ok(Advanced::Moved { current }) => {
            format!(r#"{{"ok":true,"moves":true,"next":{}}}"#, current + 1)
        }
        Ok(Advanced::Unchanged { current }) => {
            format!(
                r#"{{"ok":true,"moves":false,"next":{}}}"#,
                current.saturating_add(1)
            )
        }
        Err(e) => format!(r#"{{"ok":false,"error":{}}}"#, json_str(&e.to_string())),
    })
}
