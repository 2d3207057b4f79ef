//! `duration`: the step's latency against each bound (fixed, or a template rendered).

use serde_json::Value;

use super::describe::{describe_no_response, show_duration};
use super::{ExpectOutcome, Observed, failing};
use crate::language::dsl::scenario::expect::Expect;
use crate::language::dsl::scenario::expect::{CompareOp, DurationBound};

pub(super) fn check(
    expect: &Expect,
    bounds: &[(CompareOp, DurationBound)],
    seen: &Observed,
    ctx: &Value,
) -> ExpectOutcome {
    let fail = failing(expect, seen);
    let took = seen.exchange.elapsed;
    // A step that got no reply has no latency to judge: say so, not a time.
    if seen.reply.is_none()
        && seen.exchange.response.is_none()
        && seen.exchange.raw_body.is_none()
        && seen.exchange.http.is_none()
    {
        return fail(
            "no response to time".into(),
            None,
            Some(describe_no_response(seen.exchange)),
        );
    }
    for (op, bound) in bounds {
        let bound = match bound {
            DurationBound::Fixed(d) => *d,
            DurationBound::Template(t) => match render_duration(t, ctx) {
                Ok(d) => d,
                Err(why) => return fail(why, None, None),
            },
        };
        if !op.holds(took, bound) {
            let want = format!("{} {}", op.symbol(), humantime::format_duration(bound));
            return fail(
                format!("the response took {}, expected {want}", show_duration(took)),
                Some(want),
                Some(show_duration(took)),
            );
        }
    }
    ExpectOutcome::Pass
}

/// A templated `duration` bound rendered and read as a duration (`200ms`).
fn render_duration(t: &str, ctx: &Value) -> Result<std::time::Duration, String> {
    let rendered = crate::language::dsl::template::render_str(t, ctx)
        .map_err(|e| format!("template error in `{t}`: {e}"))?;
    let text = match &rendered {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    crate::language::dsl::limits::duration(&text, &crate::language::dsl::limits::TIMEOUT)
        .map_err(|e| format!("`{t}` renders to `{text}`, not a duration such as `200ms`: {e}"))
}
