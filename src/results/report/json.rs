//! JSON reporter: the result model as is, under a `"format": "mcpspec-result/1"` tag.

use serde_json::{Map, Value};

use super::result::RunReport;
use crate::ground::redact::{Redactor, count_masks};

/// Identifies the document's schema; bumped on incompatible changes.
pub const FORMAT: &str = "mcpspec-result/1";

/// Render the run as pretty-printed JSON, `format` first, with secrets redacted.
///
/// Redaction applies to every string value of the serialized document (not to keys or
/// numbers), so a secret can never break the JSON structure, and a secret containing `"`
/// or `\` is found in its escaped form inside transcript bodies too. `redacted` counts the
/// masks in the document (omitted when there are none).
pub fn to_json(report: &RunReport, secrets: &[String]) -> String {
    let redactor = Redactor::new(secrets);
    let mut value = serde_json::to_value(report).expect("the result model always serializes");
    redactor.redact_json(&mut value);
    let mut doc = Map::new();
    doc.insert("format".to_string(), Value::String(FORMAT.to_string()));
    let masks = masks_in(&value);
    if let Value::Object(fields) = value {
        doc.extend(fields);
    }
    if masks > 0 {
        doc.insert("redacted".to_string(), Value::from(masks));
    }
    let mut out =
        serde_json::to_string_pretty(&Value::Object(doc)).expect("a JSON value always serializes");
    out.push('\n');
    out
}

fn masks_in(value: &Value) -> usize {
    match value {
        Value::String(s) => count_masks(s),
        Value::Array(items) => items.iter().map(masks_in).sum(),
        Value::Object(fields) => fields.values().map(masks_in).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::super::testdata;
    use super::*;

    #[test]
    fn format_first_and_redacted() {
        let text = to_json(&testdata::report(), &testdata::secrets());
        assert!(text.starts_with(
            "{\n  \"format\": \"mcpspec-result/1\",\n  \"mcpspecVersion\": \"0.1.0\","
        ));
        assert!(!text.contains(testdata::SECRET));
        let value: Value = serde_json::from_str(&text).unwrap();
        assert!(
            value["redacted"].as_u64() >= Some(3),
            "{}",
            value["redacted"]
        );
        assert_eq!(value["target"], "stdio: ./server --token ***");
        assert_eq!(value["duration"], 0.123);
        assert_eq!(value["summary"]["steps"], 8);
        let step = &value["suites"][1]["steps"][1];
        assert_eq!(step["outcome"]["status"], "failed");
        assert_eq!(
            step["outcome"]["failures"][1]["message"],
            "token *** leaked"
        );
        assert_eq!(
            value["suites"][0]["steps"][0]["transcript"][0]["body"],
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"token":"***"}}"#
        );
    }

    #[test]
    fn secret_that_looks_like_structure_does_not_break_json() {
        // A secret equal to a key name or a number must not corrupt the document.
        let secrets = vec!["status".to_string(), "0.012".to_string(), "\"".to_string()];
        let text = to_json(&testdata::report(), &secrets);
        let value: Value = serde_json::from_str(&text).expect("still valid JSON");
        assert_eq!(
            value["suites"][0]["steps"][0]["outcome"]["status"],
            "passed"
        );
        assert_eq!(value["suites"][0]["duration"], 0.012);
    }
}
