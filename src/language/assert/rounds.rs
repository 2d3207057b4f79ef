//! `rounds`: how many `input_required` rounds the request took.

use serde_json::Value;

use super::predicate::length_holds;
use super::{ExpectOutcome, Observed, failing};
use crate::language::dsl::document::LengthSpec;
use crate::language::dsl::scenario::expect::Expect;

pub(super) fn check(
    expect: &Expect,
    spec: &LengthSpec,
    seen: &Observed,
    ctx: &Value,
) -> ExpectOutcome {
    let fail = failing(expect, seen);
    let rounds = seen.exchange.rounds;
    match length_holds(spec, rounds.into(), ctx) {
        Err(why) => fail(why, None, None),
        Ok((true, _)) => ExpectOutcome::Pass,
        Ok((false, wanted)) => fail(
            format!("the request took {rounds} `input_required` round(s), expected {wanted}"),
            Some(format!("{wanted} round(s)")),
            Some(rounds.to_string()),
        ),
    }
}
