//! `json`: a text that holds JSON (a tool's text content) decoded, and judged by the
//! nested expectation as if it were the result.

use serde_json::Value;

use super::describe::compact;
use super::{ExpectOutcome, Observed, Reply, resolved};
use crate::language::dsl::PathExpr;
use crate::language::dsl::scenario::expect::Expect;

pub(super) fn check(
    expect: &Expect,
    path: &PathExpr,
    source: &str,
    inner: &Expect,
    seen: &Observed,
    ctx: &Value,
) -> ExpectOutcome {
    let fail = super::failing(expect, seen);
    let (doc, path) = match resolved(seen, path, source, ctx) {
        Ok(found) => found,
        Err((why, actual)) => return fail(why, None, actual),
    };
    let text = match path.query(doc).as_slice() {
        [] => return fail(format!("`{source}` matched nothing"), None, None),
        [Value::String(text)] => text.clone(),
        [other] => {
            return fail(
                format!("`{source}` is not a text holding JSON"),
                Some("a string".into()),
                Some(compact(other, 300)),
            );
        }
        many => {
            return fail(
                format!("`{source}` matched {} values, not one text", many.len()),
                Some("one string".into()),
                None,
            );
        }
    };
    let decoded: Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => {
            return fail(
                format!("`{source}` is not JSON: {e}"),
                Some("a text holding JSON".into()),
                Some(crate::ground::redact::excerpt(&text).to_string()),
            );
        }
    };
    let inside = Observed::with_reply(seen.exchange, Reply::result(&decoded), seen.is_http);
    let inside = Observed {
        severity: seen.severity,
        ..inside
    };
    match super::check(inner, &inside, ctx) {
        ExpectOutcome::Fail(mut f) => {
            f.kind = expect.kind.name().to_string();
            f.finding.message = format!("in the JSON of `{source}`: {}", f.finding.message);
            f.snippet =
                inner
                    .pos
                    .snippet(seen.severity, &f.finding.message, "this expectation failed");
            ExpectOutcome::Fail(f)
        }
        other => other,
    }
}
