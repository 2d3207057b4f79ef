//! `taskStatus`: the statuses a task step saw (collapsed), all of them or the last.

use super::{ExpectOutcome, Observed, failing};
use crate::language::dsl::scenario::expect::Expect;

pub(super) fn check(
    expect: &Expect,
    statuses: &[String],
    last: bool,
    seen: &Observed,
) -> ExpectOutcome {
    let fail = failing(expect, seen);
    let seen_all =
        crate::protocol::tasks::collapsed(seen.exchange.task_statuses.iter().map(String::as_str));
    let got: Vec<&str> = if last {
        seen_all.last().copied().into_iter().collect()
    } else {
        seen_all.clone()
    };
    if got == statuses {
        ExpectOutcome::Pass
    } else if seen_all.is_empty() {
        fail(
            "no task status was seen (a task step — `task:` on a tools/call — that the server answered with a task)".to_string(),
            Some(statuses.join(", ")),
            None,
        )
    } else {
        let message = if last {
            format!(
                "the task ended `{}`, expected `{}`",
                got.join(", "),
                statuses.join(", ")
            )
        } else {
            format!(
                "the task statuses were [{}], expected [{}]",
                got.join(", "),
                statuses.join(", ")
            )
        };
        fail(
            message,
            Some(statuses.join(", ")),
            Some(seen_all.join(", ")),
        )
    }
}
