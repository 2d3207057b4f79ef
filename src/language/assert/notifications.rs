//! The `notifications` expectation: which notifications arrived during the exchange; and
//! `asked`, the same over the requests the server asked the client.

use serde_json::Value;

use super::describe::failure;
use super::predicate::{check_predicate, held_vacuously, length_holds};
use super::{ExpectOutcome, Observed};
use crate::language::dsl::document::LengthSpec;
use crate::language::dsl::scenario::expect::{Expect, ExpectKind};
use crate::results::exchange::Exchange;
use crate::results::outcome::Finding;

/// The notifications an exchange received (`method`: of that method only): how many
/// arrived, and those kept to judge. The one place that reads what a transport kept of
/// the messages received meanwhile. Server requests (they have an id) are not counted.
pub fn received_notifications<'a>(
    ex: &'a Exchange,
    method: Option<&str>,
) -> (usize, Vec<&'a Value>) {
    let kept: Vec<&Value> = ex
        .other_messages
        .iter()
        .filter(|m| m.get("id").is_none())
        .filter(
            |m| match (m.get("method").and_then(Value::as_str), method) {
                (Some(got), Some(wanted)) => method_matches(wanted, got),
                (Some(_), None) => true,
                (None, _) => false,
            },
        )
        .collect();
    if ex.other_messages.dropped() == 0 {
        return (kept.len(), kept);
    }
    // A flood: only the first and last few were kept, so count by method. Server requests
    // are never named `notifications/…`, so these counts are of notifications alone.
    let arrived = ex
        .other_messages
        .counts()
        .filter_map(|(got, n)| {
            let got = got?;
            let wanted = match method {
                Some(wanted) => method_matches(wanted, got),
                None => got.starts_with("notifications/"),
            };
            wanted.then_some(n)
        })
        .sum();
    (arrived, kept)
}

/// The requests the server asked the client during the exchange (`method`: of that
/// method only): legacy requests on the connection (they have an id), then the modern
/// `input_required` rounds' input requests. How many, and those kept to judge.
pub fn asked_requests<'a>(ex: &'a Exchange, method: Option<&str>) -> (usize, Vec<&'a Value>) {
    let wanted = |m: &&Value| match (m.get("method").and_then(Value::as_str), method) {
        (Some(got), Some(wanted)) => method_matches(wanted, got),
        (Some(_), None) => true,
        (None, _) => false,
    };
    let kept: Vec<&Value> = ex
        .other_messages
        .iter()
        .filter(|m| m.get("id").is_some())
        .chain(ex.input_requests.iter())
        .filter(wanted)
        .collect();
    (kept.len(), kept)
}

/// A method name against a pattern in which `*` stands for any text
/// (`notifications/*/list_changed`).
pub(super) fn method_matches(pattern: &str, method: &str) -> bool {
    let Some((first, rest)) = pattern.split_once('*') else {
        return pattern == method;
    };
    let Some(mut tail) = method.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('*').collect();
    let (last, middle) = parts.split_last().expect("split yields one part at least");
    for part in middle {
        match tail.find(part) {
            Some(at) => tail = &tail[at + part.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
}

/// A `notifications` (or `asked`) expectation: how many arrived, then the predicates over
/// `path` evaluated on each of them (all matches judged together, as a multi-node path).
pub(super) fn check_notifications(expect: &Expect, seen: &Observed, ctx: &Value) -> ExpectOutcome {
    let ExpectKind::Notifications {
        method,
        count,
        path,
        predicates,
        asked,
        ..
    } = &expect.kind
    else {
        unreachable!("a notifications expectation");
    };
    let (method, asked) = (method.as_deref(), *asked);
    let fail = super::failing(expect, seen);
    let label = method.unwrap_or("*");
    let of = |method| {
        if asked {
            asked_requests(seen.exchange, method)
        } else {
            received_notifications(seen.exchange, method)
        }
    };
    let (one, noun) = if asked {
        ("server request", "server request(s)")
    } else {
        ("notification", "notification(s)")
    };
    let (total, kept) = of(method);
    // Without a count or a path: at least one.
    let at_least_one = LengthSpec::Compare(crate::language::dsl::document::LengthCompare {
        gte: Some(crate::language::dsl::document::Num::Value(1)),
        ..Default::default()
    });
    let wanted_count = match (count, path) {
        (Some(c), _) => Some(c),
        (None, None) => Some(&at_least_one),
        (None, Some(_)) => None,
    };
    if let Some(spec) = wanted_count {
        let (ok, wanted) = match length_holds(spec, total as u64, ctx) {
            Ok(verdict) => verdict,
            Err(why) => {
                return ExpectOutcome::Fail(failure(expect, seen.severity, Finding::message(why)));
            }
        };
        if !ok {
            let (_, all) = of(None);
            return fail(
                format!("received {total} `{label}` {noun}, expected {wanted}"),
                Some(format!("{wanted} `{label}` {noun}")),
                Some(summarize_methods(&all)),
            );
        }
    }
    let Some((path, source)) = path else {
        return ExpectOutcome::Pass;
    };
    let matches: Vec<&Value> = kept
        .iter()
        .flat_map(|n| path.query(n).as_slice().to_vec())
        .collect();
    // Reported as `notifications/message $.params.level`.
    let src = format!("{label} {source}");
    for pred in predicates {
        if let Err(Finding {
            message,
            expected,
            actual,
        }) = check_predicate(pred, &src, matches.as_slice(), false, ctx)
        {
            return fail(message, expected, actual);
        }
    }
    if held_vacuously(predicates, matches.as_slice(), false) {
        return ExpectOutcome::Vacuous(if total == 0 {
            format!(
                "no `{label}` {one} arrived, so `{source}` held for none (`minMatches: 1` demands a match)"
            )
        } else {
            format!(
                "`{source}` matched nothing in the {total} `{label}` {noun} received (`minMatches: 1` demands a match)"
            )
        });
    }
    ExpectOutcome::Pass
}

/// `method ×count` of the notifications received, for failure messages.
pub(super) fn summarize_methods(all: &[&Value]) -> String {
    if all.is_empty() {
        return "no notifications".into();
    }
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for m in all {
        let name = m.get("method").and_then(Value::as_str).unwrap_or("?");
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    counts
        .iter()
        .map(|(n, c)| format!("{n} ×{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}
