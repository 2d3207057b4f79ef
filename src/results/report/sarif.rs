//! SARIF 2.1.0 for security findings, so GitHub code scanning (and any SARIF viewer) shows
//! them.
//!
//! Mapping (a documented contract):
//! - One run, tool `mcpspec`; a rule per check id (`scenario/step`), tagged `security`.
//! - A result per step of a suite tagged `security` that did not pass: a failure is
//!   `error` (`must`) , a warning `warning` (`should`), an error of the step (the check
//!   could not be judged) `note`; an expected failure is a result with an external
//!   suppression (the baseline), so code scanning shows it as dismissed, not as new.
//! - Location: `--sarif-source PATH` when given (the server's source, so the alert sits on
//!   the server's code), else the scenario file and line of the check.
//! - `partialFingerprints` hash the check id and era, so an alert keeps its identity across
//!   runs while its message changes.
//! - Every text is redacted.

use serde_json::{Value, json};

use super::result::{RunReport, StepResult, SuiteResult, stable_hash};
use crate::ground::redact::{Redactor, escape_controls};
use crate::results::outcome::Outcome;

/// The tag that makes a suite's findings security findings.
pub const SECURITY_TAG: &str = "security";

/// Render the security findings of the run as a SARIF 2.1.0 log.
pub fn to_sarif(report: &RunReport, secrets: &[String], source: Option<&str>) -> String {
    let redactor = Redactor::new(secrets);
    let text = |t: &str| escape_controls(&redactor.redact(t)).into_owned();
    let mut rules: Vec<Value> = Vec::new();
    let mut rule_ids: Vec<String> = Vec::new();
    let mut results = Vec::new();
    for suite in report.suites.iter().filter(|s| is_security(s)) {
        for step in &suite.steps {
            let Some((level, message)) = finding(step) else {
                continue;
            };
            let rule_id = format!("{}/{}", suite.scenario, step.name);
            let index = match rule_ids.iter().position(|r| *r == rule_id) {
                Some(i) => i,
                None => {
                    rules.push(json!({
                        "id": text(&rule_id),
                        "name": text(&step.name),
                        "shortDescription": { "text": text(&format!("{}: {}", suite.scenario, step.name)) },
                        "properties": { "tags": suite.tags.iter().map(|t| text(t)).collect::<Vec<_>>() },
                    }));
                    rule_ids.push(rule_id.clone());
                    rule_ids.len() - 1
                }
            };
            let (uri, line) = match source {
                Some(path) => (path.to_string(), 1),
                None => (step.file.clone(), step.line.max(1)),
            };
            let mut result = json!({
                "ruleId": text(&rule_id),
                "ruleIndex": index,
                "level": level,
                "message": { "text": text(&format!("{} [{}]: {message}", suite.id, step.name)) },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": text(&uri) },
                        "region": { "startLine": line },
                    }
                }],
                "partialFingerprints": { "mcpspecCheck/v1": stable_hash(format!("{}|{}", rule_id, suite.era.requested).bytes()) },
                "properties": { "era": text(&suite.era.requested), "target": text(suite.target_of(report).0) },
            });
            if let Outcome::ExpectedFailure { entry, .. } = &step.outcome {
                result["suppressions"] = json!([{
                    "kind": "external",
                    "justification": text(&format!("expected-failures baseline entry {entry}")),
                }]);
            }
            results.push(result);
        }
    }
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "mcpspec",
                "version": report.mcpspec_version,
                "rules": rules,
            }},
            "invocations": [{
                "executionSuccessful": report.interrupted.is_none(),
                "startTimeUtc": report.started_at,
            }],
            "results": results,
        }],
    });
    let mut out = serde_json::to_string_pretty(&log).unwrap_or_default();
    out.push('\n');
    out
}

fn is_security(suite: &SuiteResult) -> bool {
    suite.tags.iter().any(|t| t == SECURITY_TAG)
}

/// The SARIF level and message of a step that did not pass; `None` for passed and skipped.
fn finding(step: &StepResult) -> Option<(&'static str, String)> {
    let messages = |failures: &[crate::results::outcome::Failure]| {
        failures
            .iter()
            .map(|f| f.finding.message.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    };
    match &step.outcome {
        Outcome::Passed | Outcome::Skipped { .. } => None,
        Outcome::Failed { failures } | Outcome::ExpectedFailure { failures, .. } => {
            Some(("error", messages(failures)))
        }
        Outcome::Warning { failures } => Some(("warning", messages(failures))),
        Outcome::Error { message, .. } => Some(("note", format!("not judged: {message}"))),
    }
}
