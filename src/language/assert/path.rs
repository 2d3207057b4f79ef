//! `path`: the nodes a JSONPath matches in the answer, against the expectation's predicates.

use serde_json::Value;

use super::predicate::{check_predicate, held_vacuously, is_singular_path};
use super::{ExpectOutcome, Observed, failing, resolved};
use crate::language::dsl::PathExpr;
use crate::language::dsl::scenario::expect::Expect;
use crate::language::dsl::scenario::expect::Predicate;
use crate::results::outcome::Finding;

pub(super) fn check(
    expect: &Expect,
    path: &PathExpr,
    source: &str,
    predicates: &[Predicate],
    seen: &Observed,
    ctx: &Value,
) -> ExpectOutcome {
    let fail = failing(expect, seen);
    let (doc, path) = match resolved(seen, path, source, ctx) {
        Ok(found) => found,
        Err((why, actual)) => return fail(why, None, actual),
    };
    let matches = path.query(doc);
    let singular = is_singular_path(source);
    for pred in predicates {
        if let Err(Finding {
            message,
            expected,
            actual,
        }) = check_predicate(pred, source, matches.as_slice(), singular, ctx)
        {
            return fail(message, expected, actual);
        }
    }
    if held_vacuously(predicates, matches.as_slice(), singular) {
        return ExpectOutcome::Vacuous(matched_nothing(source));
    }
    ExpectOutcome::Pass
}

/// The note of an expectation that held over no match.
fn matched_nothing(src: &str) -> String {
    format!(
        "`{src}` matched nothing: its predicates held for no value (`minMatches: 1` demands a match)"
    )
}
