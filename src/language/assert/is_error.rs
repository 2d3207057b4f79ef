//! `isError`: a tool result's `isError` flag.

use super::describe::{compact, describe_no_response};
use super::{ExpectOutcome, Observed, failing};
use crate::language::dsl::scenario::expect::Expect;

pub(super) fn check(expect: &Expect, want: bool, seen: &Observed) -> ExpectOutcome {
    let fail = failing(expect, seen);
    if let Some(err) = seen.reply.error {
        return fail(
            format!(
                "expected a tool result with isError: {want}, got JSON-RPC error {}",
                err.get("code").map(|c| c.to_string()).unwrap_or_default()
            ),
            Some(format!("result with isError: {want}")),
            Some(compact(err, 500)),
        );
    }
    let Some(result) = seen.reply.result else {
        return fail(
            format!("expected a tool result with isError: {want}"),
            None,
            Some(describe_no_response(seen.exchange)),
        );
    };
    let got = crate::protocol::fields::is_error(result);
    if got == want {
        ExpectOutcome::Pass
    } else {
        fail(
            format!("expected isError: {want}, got isError: {got}"),
            Some(want.to_string()),
            Some(format!("{got}: {}", compact(result, 300))),
        )
    }
}
