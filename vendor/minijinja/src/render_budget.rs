//! mcpspec patch (not upstream): a per-thread budget for writing containers out.
//!
//! Upstream charges fuel for a value when it is *created*, but a container written out as
//! text (`~`, `|string`, `|join`) or serialized (`|tojson`) is walked without a bound: a
//! lazily repeated list (`[1]*100000000`) or a value that shares itself (`[a, a]` nested
//! a few times) writes out to gigabytes from a template of a few bytes. Inside
//! [`with_budget`], every container item written or serialized is charged; once the budget
//! is spent, containers are cut short and [`with_budget`] reports it, so the caller throws
//! the (truncated) result away and reports the template as too large.

use std::cell::Cell;

thread_local! {
    static LEFT: Cell<Option<u64>> = const { Cell::new(None) };
    static SPENT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with `bytes` to spend on writing out containers; the second value is `true`
/// when the budget ran out (the result of `f` is then truncated and must not be used).
pub fn with_budget<R>(bytes: u64, f: impl FnOnce() -> R) -> (R, bool) {
    let outer = (LEFT.with(|l| l.replace(Some(bytes))), SPENT.with(|s| s.replace(false)));
    let rv = f();
    let spent = SPENT.with(|s| s.get());
    LEFT.with(|l| l.set(outer.0));
    SPENT.with(|s| s.set(outer.1 || spent));
    (rv, spent)
}

/// Charges `bytes`; `false` when the budget is spent (then, and from then on).
pub(crate) fn charge(bytes: u64) -> bool {
    LEFT.with(|l| match l.get() {
        None => true,
        Some(left) if left >= bytes && !SPENT.with(|s| s.get()) => {
            l.set(Some(left - bytes));
            true
        }
        Some(_) => {
            SPENT.with(|s| s.set(true));
            false
        }
    })
}

/// The cost of writing one container item: its text if it is a string, else a slot.
pub(crate) fn item_cost(value: &crate::value::Value) -> u64 {
    value.as_str().map_or(4, |s| s.len() as u64 + 4)
}
