//! `http`: the HTTP status and headers of the response (over HTTP only).

use regex::Regex;

use super::{ExpectOutcome, Observed, failing};
use crate::language::dsl::document::CodeSpec;
use crate::language::dsl::scenario::expect::Expect;

pub(super) fn check(
    expect: &Expect,
    status: Option<&CodeSpec>,
    headers: &[(String, Option<Regex>)],
    seen: &Observed,
) -> ExpectOutcome {
    let fail = failing(expect, seen);
    if !seen.is_http {
        return ExpectOutcome::NotApplicable("`http` expectations apply only over HTTP".into());
    }
    let Some(http) = &seen.exchange.http else {
        return fail("no HTTP response".into(), None, None);
    };
    if let Some(s) = status
        && !s.accepts(http.status as i64)
    {
        return fail(
            format!("expected HTTP status {}, got {}", s.describe(), http.status),
            Some(s.describe()),
            Some(http.status.to_string()),
        );
    }
    for (name, re) in headers {
        match (http.header(name), re) {
            (Some(v), None) => {
                return fail(
                    format!("expected no `{name}` header, got `{v}`"),
                    Some("absent".into()),
                    Some(v.into()),
                );
            }
            (None, Some(r)) => {
                return fail(
                    format!("expected a `{name}` header matching /{}/", r.as_str()),
                    Some(format!("/{}/", r.as_str())),
                    Some("absent".into()),
                );
            }
            (Some(v), Some(r)) if !r.is_match(v) => {
                return fail(
                    format!("header `{name}: {v}` does not match /{}/", r.as_str()),
                    Some(format!("/{}/", r.as_str())),
                    Some(v.into()),
                );
            }
            _ => {}
        }
    }
    ExpectOutcome::Pass
}
