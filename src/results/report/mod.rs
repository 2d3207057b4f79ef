//! Reports derived from the canonical result model ([`result::RunReport`]): a streaming
//! console view, JUnit XML and JSON. Every reporter redacts the secrets its caller passes in
//! from everything it writes.

pub mod console;
pub mod diff;
pub mod events;
pub mod html;
pub mod json;
pub mod junit;
pub mod page;
pub mod result;
pub mod sarif;

use crate::ground::redact::Redactor;

pub use console::{ConsoleOptions, Seen, render_streamed, render_suite, render_summary};
pub use html::to_html;
pub use json::to_json;
pub use junit::to_junit;
pub use result::{
    EraInfo, Failure, Level, Outcome, RunReport, StepResult, SuiteResult, SuiteStatus, Summary,
    TranscriptEntry,
};
pub use sarif::to_sarif;

/// `text` with the known `secrets` and every secret-shaped value masked (see
/// [`crate::ground::redact`]) and control characters escaped: for one-off messages to the
/// terminal. Reporters keep one [`Redactor`].
pub fn redact(text: &str, secrets: &[String]) -> String {
    crate::ground::redact::escape_controls(&Redactor::new(secrets).redact(text)).into_owned()
}

/// Transcript of a step, one entry per line: `--> {json}` for sent messages, `<-- {json}`
/// for received ones (prefixed with `[HTTP …]` when HTTP details are known) and `# note`
/// for transport notes. Multi-line JSON bodies are compacted, other multi-line bodies have
/// their newlines escaped, so each entry stays on one line. Not redacted.
pub fn format_transcript(entries: &[result::TranscriptEntry]) -> String {
    let mut out = String::new();
    for entry in entries {
        out.push_str(match entry.direction {
            result::Direction::Sent => "-->",
            result::Direction::Received => "<--",
            result::Direction::Note => "#",
        });
        if let Some(http) = entry.http.as_deref().filter(|h| !h.trim().is_empty()) {
            let http = one_line(http);
            if http.starts_with("HTTP") {
                out.push_str(&format!(" [{http}]"));
            } else {
                out.push_str(&format!(" [HTTP {http}]"));
            }
        }
        let body = one_line_body(&entry.body);
        if !body.is_empty() {
            out.push(' ');
            out.push_str(&body);
        }
        out.push('\n');
    }
    out
}

fn one_line_body(body: &str) -> String {
    let body = body.trim_end_matches(['\n', '\r']);
    if !body.contains('\n') {
        return body.to_string();
    }
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(body)
        && let Ok(compact) = serde_json::to_string(&value)
    {
        return compact;
    }
    body.replace("\r\n", "\\n").replace('\n', "\\n")
}

/// Collapse a text onto one line (for messages and attributes).
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.trim().lines().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(line.trim());
    }
    out
}

pub(crate) use crate::results::junit::truncate;

#[cfg(test)]
pub(crate) mod testdata {
    //! A small hand-built report covering every outcome, shared by the reporters' tests.

    use std::time::Duration;

    use super::result::*;

    pub const SECRET: &str = "s3cr3t-T0KEN";

    fn failure(kind: &str, message: &str, expected: Option<&str>, actual: Option<&str>) -> Failure {
        Failure {
            kind: kind.to_string(),
            message: message.to_string(),
            expected: expected.map(str::to_string),
            actual: actual.map(str::to_string),
            snippet: format!(
                "error: {message}\n  --> scenarios/tools.yaml:12:9\n   |\n12 |         length: 3\n   |         ^^^^^^ here"
            ),
            file: "scenarios/tools.yaml".to_string(),
            line: 12,
            column: 9,
        }
    }

    fn step(name: &str, line: u32, outcome: Outcome) -> StepResult {
        StepResult {
            name: name.to_string(),
            file: "scenarios/tools.yaml".to_string(),
            line,
            column: 5,
            level: if matches!(outcome, Outcome::Warning { .. }) {
                Level::Should
            } else {
                Level::Must
            },
            duration: Duration::from_millis(3),
            outcome,
            transcript: vec![],
            notes: Vec::new(),
            exchanged: None,
        }
    }

    fn suite(id: &str, steps: Vec<StepResult>) -> SuiteResult {
        let (scenario, era) = id.split_once('@').unwrap();
        SuiteResult {
            ordinal: 0,
            id: id.to_string(),
            scenario: scenario.to_string(),
            description: None,
            file: "scenarios/tools.yaml".to_string(),
            line: 1,
            pack: None,
            tags: Vec::new(),
            era: EraInfo {
                requested: era.to_string(),
                negotiated: Some("2025-06-18".to_string()),
                era: Some(era.to_string()),
                note: None,
            },
            started_at: "2026-01-02T03:04:05.678+00:00".to_string(),
            duration: Duration::from_millis(12),
            setup_error: None,
            setup_error_kind: None,
            steps,
            stderr_tail: None,
            target: None,
        }
    }

    pub fn report() -> RunReport {
        let mut init = step("initialize", 3, Outcome::Passed);
        init.transcript = vec![
            TranscriptEntry {
                direction: crate::results::report::result::Direction::Sent,
                at_ms: 0,
                body: format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"token":"{SECRET}"}}}}"#
                ),
                http: None,
            },
            TranscriptEntry {
                direction: crate::results::report::result::Direction::Received,
                at_ms: 2,
                body: "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}".to_string(),
                http: Some("200".to_string()),
            },
            TranscriptEntry {
                direction: crate::results::report::result::Direction::Note,
                at_ms: 3,
                body: "session established".to_string(),
                http: None,
            },
        ];
        let passing = suite("initialize@legacy", vec![init]);

        let mut listed = step(
            "tools/list lists 3 tools",
            10,
            Outcome::Failed {
                failures: vec![
                    failure(
                        "path",
                        "expected <3> & got \"2\"",
                        Some("[\n  \"a\",\n  \"b\",\n  \"c\"\n]"),
                        Some("[\n  \"a\",\n  \"b\"\n]"),
                    ),
                    failure(
                        "schema",
                        &format!("token {SECRET} leaked"),
                        Some("3"),
                        Some("2"),
                    ),
                ],
            },
        );
        listed.transcript = vec![TranscriptEntry {
            direction: crate::results::report::result::Direction::Received,
            at_ms: 1,
            body: format!(r#"{{"result":{{"echo":"{SECRET}"}}}}"#),
            http: Some("HTTP 200 content-type: application/json".to_string()),
        }];
        let mixed = suite(
            "tools@modern",
            vec![
                step("tools present", 5, Outcome::Passed),
                listed,
                step(
                    "titles are set",
                    20,
                    Outcome::Warning {
                        failures: vec![failure("path", "tool has no title", None, None)],
                    },
                ),
                step(
                    "call slow tool",
                    30,
                    Outcome::Error {
                        message: "timed out after 5s".to_string(),
                        detail: Some("no response to request id 7".to_string()),
                    },
                ),
                step(
                    "legacy batch",
                    40,
                    Outcome::Skipped {
                        reason: "era modern".to_string(),
                    },
                ),
                step(
                    "known bug",
                    50,
                    Outcome::ExpectedFailure {
                        failures: vec![failure("isError", "isError was false", None, None)],
                        entry: "tools@modern/known bug".to_string(),
                    },
                ),
            ],
        );

        let mut broken = suite("resources@auto", vec![]);
        broken.era.negotiated = None;
        broken.era.era = None;
        broken.era.note = Some("no answer".to_string());
        broken.setup_error = Some("server exited with status 1 before initialize".to_string());
        broken.stderr_tail = Some("panic: missing API_KEY\nexit".to_string());

        let suites = vec![passing, mixed, broken];
        let summary = Summary::from_suites(&suites);
        RunReport {
            mcpspec_version: "0.1.0".to_string(),
            target: format!("stdio: ./server --token {SECRET}"),
            transport: "stdio".to_string(),
            started_at: "2026-01-02T03:04:05.000+00:00".to_string(),
            duration: Duration::from_millis(123),
            suites,
            summary,
            stale_entries: Vec::new(),
            interrupted: None,
            shard: None,
            servers: None,
            models: Vec::new(),
        }
    }

    pub fn secrets() -> Vec<String> {
        vec![SECRET.to_string(), String::new()]
    }
}

#[cfg(test)]
mod tests {
    use super::result::TranscriptEntry;
    use super::*;

    #[test]
    fn transcript_is_one_entry_per_line() {
        let entries = vec![
            TranscriptEntry {
                direction: crate::results::report::result::Direction::Sent,
                at_ms: 0,
                body: r#"{"id":1}"#.into(),
                http: Some("POST /mcp".into()),
            },
            TranscriptEntry {
                direction: crate::results::report::result::Direction::Received,
                at_ms: 1,
                body: "{\n  \"id\": 1\n}\n".into(),
                http: Some("200".into()),
            },
            TranscriptEntry {
                direction: crate::results::report::result::Direction::Received,
                at_ms: 1,
                body: "not\njson".into(),
                http: None,
            },
            TranscriptEntry {
                direction: crate::results::report::result::Direction::Note,
                at_ms: 2,
                body: "timeout".into(),
                http: None,
            },
        ];
        assert_eq!(
            format_transcript(&entries),
            "--> [HTTP POST /mcp] {\"id\":1}\n<-- [HTTP 200] {\"id\":1}\n<-- not\\njson\n# timeout\n"
        );
    }

    #[test]
    fn truncate_marks_cut_text() {
        assert_eq!(truncate("short", 100), "short");
        let long = "é".repeat(100);
        let cut = truncate(&long, 50);
        assert!(cut.len() <= 50, "{}", cut.len());
        assert!(cut.ends_with("… (truncated)\n"));
    }
}
