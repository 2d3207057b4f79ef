//! `error`: a JSON-RPC error response, its code, message and data.

use regex::Regex;
use serde_json::Value;

use super::describe::{compact, describe_no_response, first_line, pretty};
use super::{ExpectOutcome, Observed, failing};
use crate::ground::json::subset_of;
use crate::ground::yaml::value::TValue;
use crate::language::dsl::document::CodeSpec;
use crate::language::dsl::scenario::expect::Expect;
use crate::language::dsl::template::render_value;

pub(super) fn check(
    expect: &Expect,
    code: Option<&CodeSpec>,
    message: Option<&Regex>,
    data: Option<&TValue>,
    seen: &Observed,
    ctx: &Value,
) -> ExpectOutcome {
    let fail = failing(expect, seen);
    let Some(err) = seen.reply.error else {
        let actual = match seen.reply.result {
            Some(r) => format!("a result: {}", compact(r, 300)),
            None => describe_no_response(seen.exchange),
        };
        let wanted = code
            .map(|c| format!("JSON-RPC error {}", c.describe()))
            .unwrap_or("a JSON-RPC error".into());
        return fail(
            format!("expected {wanted}, got {}", first_line(&actual)),
            Some(wanted),
            Some(actual),
        );
    };
    let got_code = err.get("code").and_then(Value::as_i64);
    if let Some(c) = code
        && !got_code.is_some_and(|g| c.accepts(g))
    {
        let got = got_code.map(|g| g.to_string()).unwrap_or("no code".into());
        return fail(
            format!("expected error code {}, got {got}", c.describe()),
            Some(c.describe()),
            Some(compact(err, 500)),
        );
    }
    if let Some(re) = message {
        let msg = err.get("message").and_then(Value::as_str).unwrap_or("");
        if !re.is_match(msg) {
            return fail(
                format!("error message `{msg}` does not match /{}/", re.as_str()),
                Some(format!("/{}/", re.as_str())),
                Some(msg.to_string()),
            );
        }
    }
    if let Some(d) = data {
        let expected = match render_value(d, ctx) {
            Ok(v) => v,
            Err((_, _, e)) => return fail(format!("template error: {e}"), None, None),
        };
        let actual = err.get("data").cloned().unwrap_or(Value::Null);
        if !subset_of(&expected, &actual) {
            return fail(
                "error.data does not contain the expected values".into(),
                Some(pretty(&expected)),
                Some(pretty(&actual)),
            );
        }
    }
    ExpectOutcome::Pass
}
