//! The AWB stock's rules that both engines apply (pure: no I/O): input
//! checks, and what a transition does to a number read under its row lock.
//!
//! Invariants: every status change goes through [`crate::awb::can_transition`];
//! a ready number is assigned only unfrozen and unexpired; a request naming
//! the shipment it expects changes nothing once the number moved on (a stale
//! second click); leaving `assigned` releases the live assignment.

use crate::awb::{can_transition, Awb, AwbError, AwbState};
use crate::error::{Error, Result};

/// A stock number as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AwbStock {
    /// Canonical number.
    pub number: String,
    /// Pool name.
    pub pool: String,
    /// State.
    pub status: AwbState,
    /// Taken out of circulation (state unchanged).
    pub frozen: bool,
    /// Last day it may be issued (`YYYY-MM-DD`), if it expires.
    pub valid_to: Option<String>,
    /// The shipment it is assigned to.
    pub shipment: Option<String>,
    /// Why it was voided or cancelled.
    pub reason: Option<String>,
}

/// What a transition did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AwbTransition {
    /// The number moved from one state to another.
    Moved {
        /// Before.
        from: AwbState,
        /// After.
        to: AwbState,
    },
    /// Nothing: the number had moved on since the caller looked (stale click).
    Unchanged,
}

/// Counts of a pool.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolReport {
    /// Per state: (state, numbers).
    pub by_status: Vec<(String, u64)>,
    /// Frozen numbers.
    pub frozen: u64,
    /// Ready numbers past their valid_to.
    pub expired: u64,
    /// Ready, unfrozen, unexpired: what issue_next can still give.
    pub available: u64,
}

/// A business refusal (nothing changed).
pub fn refused(reason: String) -> Error {
    Error::Refused(reason)
}

/// An AWB number that does not parse.
pub fn bad_awb(e: AwbError) -> Error {
    Error::InvalidArgument {
        name: "awb",
        reason: e.to_string(),
    }
}

/// A pool, shipment or reason: 1 to `max` printable characters.
pub fn check_name(name: &'static str, value: &str, max: usize) -> Result<()> {
    if value.trim().is_empty() || value.len() > max || value.chars().any(char::is_control) {
        return Err(Error::InvalidArgument {
            name,
            reason: format!("must be 1 to {max} printable characters"),
        });
    }
    Ok(())
}

/// A block's last day of validity: `YYYY-MM-DD`.
pub fn check_valid_to(valid_to: Option<&str>) -> Result<()> {
    if let Some(d) = valid_to {
        let ok = d.len() == 10
            && d.as_bytes()[4] == b'-'
            && d.as_bytes()[7] == b'-'
            && d.chars().filter(char::is_ascii_digit).count() == 8;
        if !ok {
            return Err(Error::InvalidArgument {
                name: "valid_to",
                reason: format!("`{d}` is not a date YYYY-MM-DD"),
            });
        }
    }
    Ok(())
}

/// Checks a transition request before anything is sent; the canonical number.
pub fn check_transition_request(
    number: &str,
    to: AwbState,
    shipment: Option<&str>,
    reason: Option<&str>,
) -> Result<String> {
    let canonical = Awb::normalize(number).map_err(bad_awb)?;
    if matches!(to, AwbState::Voided | AwbState::Cancelled) {
        check_name("reason", reason.unwrap_or(""), 255)?;
    }
    if to == AwbState::Assigned {
        check_name("shipment", shipment.unwrap_or(""), 64)?;
    }
    Ok(canonical)
}

/// A number as read under its row lock.
#[derive(Clone, Debug)]
pub struct LockedNumber<'a> {
    /// Canonical number.
    pub number: &'a str,
    /// Its stored status.
    pub status: &'a str,
    /// Its pool's name.
    pub pool: &'a str,
    /// Frozen.
    pub frozen: bool,
    /// Past its valid_to.
    pub expired: bool,
    /// The shipment it is assigned to.
    pub shipment: Option<&'a str>,
}

/// What a transition does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransitionPlan {
    /// Nothing: the number moved on since the caller looked.
    Unchanged,
    /// Move it.
    Move {
        /// Its state now.
        from: AwbState,
        /// Release its live assignment first.
        release_assignment: bool,
        /// Keep its shipment (issued, executed) or clear it.
        keep_shipment: bool,
    },
}

/// Decides a transition of `row` to `to`; `pool`, when given, must be the
/// number's pool; `expect_shipment`, when given, makes the request a no-op
/// if the number is no longer assigned to it.
pub fn plan_transition(
    row: &LockedNumber<'_>,
    to: AwbState,
    pool: Option<&str>,
    expect_shipment: Option<&str>,
) -> Result<TransitionPlan> {
    let number = row.number;
    if let Some(p) = pool {
        if p != row.pool {
            return Err(refused(format!(
                "{number} belongs to pool {}, not {p}",
                row.pool
            )));
        }
    }
    if let Some(e) = expect_shipment {
        if row.shipment != Some(e) {
            return Ok(TransitionPlan::Unchanged);
        }
    }
    let from = AwbState::parse(row.status).unwrap_or(AwbState::Executed);
    if !can_transition(from, to) {
        return Err(refused(format!(
            "{number} is {}; it cannot become {}{}",
            row.status,
            to.as_str(),
            if from == AwbState::Executed {
                " (executed numbers are final)"
            } else {
                ""
            }
        )));
    }
    if to == AwbState::Assigned && from == AwbState::Ready {
        if row.frozen {
            return Err(refused(format!("{number} is frozen; unfreeze it first")));
        }
        if row.expired {
            return Err(refused(format!(
                "{number} has expired; it is never offered"
            )));
        }
    }
    Ok(TransitionPlan::Move {
        from,
        release_assignment: from == AwbState::Assigned
            && matches!(
                to,
                AwbState::Ready | AwbState::Assigned | AwbState::Voided | AwbState::Cancelled
            ),
        keep_shipment: matches!(to, AwbState::Issued | AwbState::Executed),
    })
}
