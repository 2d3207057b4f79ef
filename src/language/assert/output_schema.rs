//! The `outputSchema` expectation: a tool result's structured content against the tool's
//! declared schema.

use super::describe::{compact, describe_no_response};
use super::{ExpectOutcome, Observed};
use crate::language::dsl::scenario::expect::Expect;
use crate::protocol::fields;

pub(super) fn check_output_schema(expect: &Expect, seen: &Observed) -> ExpectOutcome {
    let fail = super::failing(expect, seen);
    let schema = match &seen.output_schema {
        Some(Ok(Some(schema))) => schema,
        Some(Ok(None)) => {
            return fail(
                "the tool declares no outputSchema to conform to".into(),
                None,
                None,
            );
        }
        Some(Err(e)) => {
            return fail(
                format!("cannot get the tool's outputSchema: {e}"),
                None,
                None,
            );
        }
        None => {
            return fail(
                "outputSchema applies to tools/call steps".into(),
                None,
                None,
            );
        }
    };
    let Some(result) = seen.reply.result else {
        return fail(
            "no tool result to check against outputSchema".into(),
            None,
            Some(describe_no_response(seen.exchange)),
        );
    };
    let Some(structured) = fields::structured_content(result) else {
        if fields::is_error(result) {
            return fail(
                "the tool returned an error result (isError: true), not structuredContent".into(),
                None,
                Some(compact(result, 300)),
            );
        }
        return fail(
            "the tool declares an outputSchema but the result has no structuredContent".into(),
            Some("structuredContent".into()),
            Some(compact(result, 300)),
        );
    };
    let validator = match crate::ground::bounds::validator(schema) {
        Ok(v) => v,
        Err(e) => {
            return fail(
                format!("the tool's outputSchema cannot be checked: {e}"),
                None,
                None,
            );
        }
    };
    let errors = super::describe::schema_errors(&validator, structured);
    if errors.is_empty() {
        ExpectOutcome::Pass
    } else {
        fail(
            format!(
                "structuredContent does not conform to outputSchema: {}",
                errors[0]
            ),
            Some(compact(schema, 500)),
            Some(format!(
                "{}\n{}",
                compact(structured, 500),
                errors.join("\n")
            )),
        )
    }
}
