//! `noResponse`: whether the server answered at all.

use super::describe::{compact, describe_no_response};
use super::{ExpectOutcome, Observed, failing};
use crate::language::dsl::scenario::expect::Expect;

pub(super) fn check(expect: &Expect, want: bool, seen: &Observed) -> ExpectOutcome {
    let fail = failing(expect, seen);
    let got = !seen.reply.is_none()
        || seen.exchange.response.is_some()
        || seen
            .exchange
            .raw_body
            .as_ref()
            .is_some_and(|b| !b.trim().is_empty());
    match (want, got) {
        (true, true) => fail(
            "expected no response, but the server answered".into(),
            Some("no response".into()),
            Some(
                seen.exchange
                    .response
                    .as_ref()
                    .or(seen.reply.result)
                    .map(|r| compact(r, 500))
                    .or_else(|| seen.exchange.raw_body.clone())
                    .unwrap_or_default(),
            ),
        ),
        (false, false) => fail(
            "expected a response, got none".into(),
            Some("a response".into()),
            Some(describe_no_response(seen.exchange)),
        ),
        _ => ExpectOutcome::Pass,
    }
}
