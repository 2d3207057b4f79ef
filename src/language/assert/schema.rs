//! `schema`: the answer (or the nodes a path matches in it) against a JSON Schema.

use serde_json::Value;

use super::describe::describe_no_response;
use super::{ExpectOutcome, Observed, describe, failing};
use crate::ground::json::path::CompiledPath;
use crate::language::dsl::scenario::expect::Expect;

pub(super) fn check(
    expect: &Expect,
    path: Option<&(CompiledPath, String)>,
    validator: &jsonschema::Validator,
    seen: &Observed,
) -> ExpectOutcome {
    let fail = failing(expect, seen);
    let Some(doc) = &seen.document else {
        return fail(
            "schema: no JSON-RPC response to validate".into(),
            None,
            Some(describe_no_response(seen.exchange)),
        );
    };
    let (instance, label) = match path {
        Some((p, src)) => match p.query(doc).as_slice() {
            [one] => ((*one).clone(), src.clone()),
            [] => return fail(format!("`{src}` matched nothing to validate"), None, None),
            many => (
                Value::Array(many.iter().map(|v| (*v).clone()).collect()),
                src.clone(),
            ),
        },
        None => (doc.as_ref().clone(), "$".to_string()),
    };
    let errors = describe::schema_errors(validator, &instance);
    if errors.is_empty() {
        ExpectOutcome::Pass
    } else {
        fail(
            format!("`{label}` does not match the schema: {}", errors[0]),
            Some("a value valid against the schema".into()),
            Some(errors.join("\n")),
        )
    }
}
