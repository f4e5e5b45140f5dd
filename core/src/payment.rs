//! Payment references: the idempotency key of a payment callback.
//!
//! Invariants of a [`PaymentRef`]: the gateway is 1–32 characters of
//! `[a-z0-9_-]`; the transaction id is 1–191 bytes with no control character
//! and no surrounding whitespace (the unique index compares it with a PAD
//! SPACE collation). The pair is unique in the payments table: a callback
//! delivered twice finds the first delivery's row (docs/design.md §2 rule 8). A
//! payment held for a missing series has a row without a number ([`Held`]);
//! the delivery that finds its series gives it one.

use crate::error::{Error, Result};
use crate::format::Period;

/// A validated (gateway, transaction id) pair.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PaymentRef {
    gateway: String,
    transaction_id: String,
}

impl PaymentRef {
    /// Longest gateway name.
    pub const MAX_GATEWAY: usize = 32;
    /// Longest transaction id, in bytes.
    pub const MAX_TRANSACTION_ID: usize = 191;

    /// Validates both parts.
    pub fn new(gateway: &str, transaction_id: &str) -> Result<Self> {
        let bad = |name: &'static str, reason: String| Err(Error::InvalidArgument { name, reason });
        if gateway.is_empty() || gateway.len() > Self::MAX_GATEWAY {
            return bad(
                "gateway",
                format!(
                    "the gateway name must be 1 to {} characters",
                    Self::MAX_GATEWAY
                ),
            );
        }
        if let Some(c) = gateway
            .chars()
            .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_' || *c == '-'))
        {
            return bad(
                "gateway",
                format!(
                    "the gateway name holds `{}`; use a-z, 0-9, _ and -",
                    c.escape_default()
                ),
            );
        }
        if transaction_id.is_empty() || transaction_id.len() > Self::MAX_TRANSACTION_ID {
            return bad(
                "transaction_id",
                format!(
                    "the transaction id must be 1 to {} bytes, got {}",
                    Self::MAX_TRANSACTION_ID,
                    transaction_id.len()
                ),
            );
        }
        if let Some((at, _)) = transaction_id.char_indices().find(|(_, c)| c.is_control()) {
            return bad(
                "transaction_id",
                format!("the transaction id holds a control character at byte {at}"),
            );
        }
        if transaction_id.starts_with(char::is_whitespace)
            || transaction_id.ends_with(char::is_whitespace)
        {
            return bad(
                "transaction_id",
                "the transaction id starts or ends with whitespace".into(),
            );
        }
        Ok(Self {
            gateway: gateway.to_owned(),
            transaction_id: transaction_id.to_owned(),
        })
    }

    /// The gateway.
    pub fn gateway(&self) -> &str {
        &self.gateway
    }

    /// The transaction id.
    pub fn transaction_id(&self) -> &str {
        &self.transaction_id
    }
}

/// The reason recorded with a number voided because its call lost the
/// answer to its COMMIT and was retried: the retry issued another number.
pub const UNANSWERED_REASON: &str = "outcome unknown: the call lost its answer while committing and was retried, which issued another number; nobody received this one";

/// Status of a number in the registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberStatus {
    /// Allocated and recorded; its invoice is not created yet.
    Reserved,
    /// Claimed by one process that is creating its invoice (see
    /// [`Claim`]); another delivery waits for it, or takes it over once the
    /// claim is stale.
    Creating,
    /// Its invoice exists.
    Issued,
    /// Withdrawn, with a recorded reason.
    Void,
    /// Taken by a recorded allocation whose caller may not have received
    /// it: the answer to its COMMIT never arrived (a lost connection, the
    /// deadline). A call that gets its answer marks its number `issued`;
    /// the books list what stays unconfirmed.
    Unconfirmed,
}

impl NumberStatus {
    /// The stored text.
    pub fn as_str(self) -> &'static str {
        match self {
            NumberStatus::Reserved => "reserved",
            NumberStatus::Creating => "creating",
            NumberStatus::Issued => "issued",
            NumberStatus::Void => "void",
            NumberStatus::Unconfirmed => "unconfirmed",
        }
    }

    /// Parses the stored text.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "reserved" => Some(NumberStatus::Reserved),
            "creating" => Some(NumberStatus::Creating),
            "issued" => Some(NumberStatus::Issued),
            "void" => Some(NumberStatus::Void),
            "unconfirmed" => Some(NumberStatus::Unconfirmed),
            _ => None,
        }
    }
}

/// A payment as recorded, with the number it received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaymentRecord {
    /// The series the number came from.
    pub scope: String,
    /// The number.
    pub number: u64,
    /// True when this call recorded the payment; false when an earlier
    /// delivery of the same payment had.
    pub created: bool,
    /// The number's status in the registry.
    pub status: NumberStatus,
    /// The invoice post, once created.
    pub post_id: Option<u64>,
    /// The period (site's local year and month) the payment was received in,
    /// where it was recorded (payments held for a series record it).
    pub period: Option<Period>,
}

impl PaymentRecord {
    /// A payment this call numbered: `number` of `scope`, reserved for it
    /// (no invoice yet), received in `period`.
    pub fn reserved(scope: String, number: u64, period: Option<Period>) -> Self {
        Self {
            scope,
            number,
            created: true,
            status: NumberStatus::Reserved,
            post_id: None,
            period,
        }
    }
}

/// What claiming a reserved number to create its invoice found (the payment
/// flow's second phase, on the store's own connection: a claim is a committed
/// row state, not a lock that a reconnecting client could silently lose).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// This caller holds the claim: create the invoice, then
    /// `issue_claimed` (or `release_claim` on failure).
    Claimed,
    /// Another caller holds a fresh claim: its invoice is being created.
    Busy,
    /// The invoice exists.
    Issued {
        /// Its post (or document) id.
        post_id: u64,
    },
    /// The number was voided: no invoice is created.
    Void,
}

/// What a claim attempt that changed no row found, from the number's state
/// (`status`, `post_id`, the holder's claim id): both engines read the same
/// three columns and decide here.
pub fn claim_from_state(
    scope: &str,
    number: u64,
    claim: &str,
    status: &str,
    post_id: Option<u64>,
    holder: Option<&str>,
) -> Result<Claim> {
    match (status, post_id) {
        ("issued", Some(post_id)) => Ok(Claim::Issued { post_id }),
        ("void", _) => Ok(Claim::Void),
        // A retry of our own claim whose answer was lost.
        ("creating", _) if holder == Some(claim) => Ok(Claim::Claimed),
        ("creating", _) => Ok(Claim::Busy),
        (other, _) => Err(Error::Unexpected(format!(
            "number {number} of series `{scope}` is `{other}` without an invoice"
        ))),
    }
}

/// A payment row read back with its number's registry row (both engines
/// read the same columns and decide here): `None` when the payment is held
/// without a number, else its record (`created: false`). A number without a
/// registry row, or with a status nobody knows, is an error, never a guess.
#[allow(clippy::too_many_arguments)]
pub fn recorded_payment(
    gateway: &str,
    txn: &str,
    scope: String,
    number: Option<u64>,
    status: Option<&str>,
    post_id: Option<u64>,
    period: Option<&str>,
) -> Result<Option<PaymentRecord>> {
    let Some(number) = number else {
        return Ok(None);
    };
    let Some(status) = status else {
        return Err(Error::Unexpected(format!(
            "payment {gateway}/{txn} is recorded with number {number} of series `{scope}`, \
             which the registry does not hold"
        )));
    };
    let Some(status) = NumberStatus::parse(status) else {
        return Err(Error::Unexpected(format!(
            "unknown registry status `{status}`"
        )));
    };
    Ok(Some(PaymentRecord {
        scope,
        number,
        created: false,
        status,
        post_id,
        period: period.and_then(Period::parse_stored),
    }))
}

/// A statement that must change exactly one row (a payment row taking its
/// number) changed `changed`: anything else is an error, and the caller's
/// transaction rolls back.
pub fn exactly_one_row(what: &str, changed: u64) -> Result<()> {
    if changed == 1 {
        return Ok(());
    }
    Err(Error::Unexpected(format!(
        "{what} changed {changed} rows, not one; nothing was kept"
    )))
}

/// After issuing a claimed number changed no row: whether the number is
/// already issued to `post_id` — an earlier try of the same call committed
/// and lost its answer (only the claim's holder issues to its post), so the
/// call succeeded. Anything else means the claim was lost.
pub fn issued_to(status: &str, issued_post: Option<u64>, post_id: u64) -> bool {
    status == NumberStatus::Issued.as_str() && issued_post == Some(post_id)
}

/// Checks a claim id: 1–40 ASCII letters, digits, `-` or `_` (the caller
/// makes it random, so that two processes never share one).
pub fn check_claim_id(claim: &str) -> Result<()> {
    if claim.is_empty()
        || claim.len() > 40
        || !claim
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(Error::InvalidArgument {
            name: "claim",
            reason: "a claim id is 1 to 40 letters, digits, - or _".into(),
        });
    }
    Ok(())
}

/// Longest `source` of a recorded number, in characters (the column's size).
pub const MAX_SOURCE: usize = 32;
/// Most digits before the point of a recorded amount.
pub const MAX_AMOUNT_WHOLE_DIGITS: usize = 12;
/// Most decimals of a recorded amount.
pub const MAX_AMOUNT_DECIMALS: usize = 4;

/// Checks the `source` recorded with a number (`api`, `payment`, a plugin's
/// name): 1–32 characters, no control character, no surrounding whitespace.
/// Checked before anything is sent, so a bad one is a typed refusal that
/// changes nothing (docs/design.md §9), never a database error.
pub fn check_source(source: &str) -> Result<()> {
    let bad = |reason: String| {
        Err(Error::InvalidArgument {
            name: "source",
            reason,
        })
    };
    let length = source.chars().count();
    if length == 0 || length > MAX_SOURCE {
        return bad(format!(
            "the source must be 1 to {MAX_SOURCE} characters, got {length}"
        ));
    }
    if source.chars().any(char::is_control) {
        return bad("the source holds a control character".into());
    }
    if source.starts_with(char::is_whitespace) || source.ends_with(char::is_whitespace) {
        return bad("the source starts or ends with whitespace".into());
    }
    Ok(())
}

/// Checks a payment's amount as recorded: a decimal string of 1–12 digits,
/// optionally a point and 1–4 decimals (`19.99`, `500`, `1.999`); no sign,
/// no exponent, no spaces.
pub fn check_amount(amount: &str) -> Result<()> {
    let (whole, decimals) = match amount.split_once('.') {
        Some((w, d)) => (w, Some(d)),
        None => (amount, None),
    };
    let digits = |s: &str, most: usize| {
        !s.is_empty() && s.len() <= most && s.bytes().all(|b| b.is_ascii_digit())
    };
    if digits(whole, MAX_AMOUNT_WHOLE_DIGITS)
        && decimals.is_none_or(|d| digits(d, MAX_AMOUNT_DECIMALS))
    {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        name: "amount",
        reason: format!(
            "an amount is a decimal string such as 19.99 (1 to {MAX_AMOUNT_WHOLE_DIGITS} digits, \
             then at most {MAX_AMOUNT_DECIMALS} decimals), got `{}`",
            amount.escape_default()
        ),
    })
}

/// Checks a payment's currency as recorded: three upper-case ASCII letters
/// (an ISO 4217 code such as `EUR`).
pub fn check_currency(currency: &str) -> Result<()> {
    if currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase()) {
        return Ok(());
    }
    Err(Error::InvalidArgument {
        name: "currency",
        reason: format!(
            "a currency is a three-letter upper-case ISO code such as EUR, got `{}`",
            currency.escape_default()
        ),
    })
}

/// Longest request key of a recorded allocation.
pub const MAX_REQUEST_KEY: usize = 64;

/// Checks a recorded allocation's request key: 1–64 ASCII letters, digits,
/// `.`, `_`, `:` or `-` (a caller's idempotency key: a repeat of the call
/// with the same key, in the same series, returns the same number).
pub fn check_request_key(key: &str) -> Result<()> {
    if key.is_empty()
        || key.len() > MAX_REQUEST_KEY
        || !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
    {
        return Err(Error::InvalidArgument {
            name: "request_key",
            reason: format!(
                "a request key is 1 to {MAX_REQUEST_KEY} letters, digits, `.`, `_`, `:` or `-`"
            ),
        });
    }
    Ok(())
}

/// What a repeat of a keyed recorded allocation answers, from the row its
/// key already holds (`status`): the number, for an `issued` or
/// `unconfirmed` one (the repeat's caller receives it now, so an
/// unconfirmed one becomes issued); a voided number is never handed out.
pub fn repeat_of_request(scope: &str, key: &str, number: u64, status: &str) -> Result<u64> {
    match NumberStatus::parse(status) {
        Some(NumberStatus::Issued | NumberStatus::Unconfirmed) => Ok(number),
        _ => Err(Error::Unexpected(format!(
            "request key `{key}` took number {number} of series `{scope}`, which is now `{status}`; \
             it is not handed out again"
        ))),
    }
}

/// Checks what a payment records besides its reference: each value that is
/// given must pass [`check_amount`] / [`check_currency`].
pub fn check_payment_values(amount: Option<&str>, currency: Option<&str>) -> Result<()> {
    amount.map(check_amount).transpose()?;
    currency.map(check_currency).transpose()?;
    Ok(())
}

/// What holding a payment (its series does not exist yet) did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Held {
    /// The payment is recorded without a number; `created` is false when an
    /// earlier delivery had already recorded it.
    Waiting {
        /// True when this call recorded the payment.
        created: bool,
    },
    /// The payment had already received its number (its series was created
    /// and a delivery completed it meanwhile).
    Numbered(PaymentRecord),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_payments_are_read_by_one_rule() {
        let read = |number, status| {
            recorded_payment(
                "g",
                "t",
                "s:1".into(),
                number,
                status,
                None,
                Some("2026-03"),
            )
        };
        assert_eq!(read(None, None).unwrap(), None, "held");
        let r = read(Some(4), Some("reserved")).unwrap().unwrap();
        assert_eq!(
            (r.number, r.status, r.created),
            (4, NumberStatus::Reserved, false)
        );
        assert_eq!(r.period, Period::parse_stored("2026-03"));
        assert!(
            matches!(read(Some(4), None), Err(Error::Unexpected(m)) if m.contains("does not hold"))
        );
        assert!(matches!(
            read(Some(4), Some("lost")),
            Err(Error::Unexpected(_))
        ));
        assert!(exactly_one_row("x", 1).is_ok());
        assert!(exactly_one_row("x", 0).is_err());
        assert!(exactly_one_row("x", 2).is_err());
        assert!(issued_to("issued", Some(9), 9));
        assert!(!issued_to("issued", Some(8), 9));
        assert!(!issued_to("reserved", None, 9));
        assert!(!issued_to("creating", Some(9), 9));
    }

    #[test]
    fn refs() {
        assert!(PaymentRef::new("stripe", "ch_1A2b").is_ok());
        assert!(PaymentRef::new("Stripe", "x").is_err());
        assert!(PaymentRef::new("", "x").is_err());
        assert!(PaymentRef::new("paypal", "").is_err());
        assert!(PaymentRef::new("paypal", " x").is_err());
        assert!(PaymentRef::new("paypal", "a\nb").is_err());
        assert!(PaymentRef::new("paypal", &"x".repeat(192)).is_err());
        assert!(PaymentRef::new("paypal", "x'; DROP TABLE y; --").is_ok());
        assert_eq!(NumberStatus::parse("void"), Some(NumberStatus::Void));
    }
}
