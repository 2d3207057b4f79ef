//! A small hand-built report covering every outcome, shared by the reporters' tests.

use std::time::Duration;

use super::result::{EraInfo, RunReport, StepResult, SuiteResult, Summary};
use crate::results::exchange::TranscriptEntry;
use crate::results::outcome::{Failure, Finding, Level, Outcome};

pub const SECRET: &str = "s3cr3t-T0KEN";

/// A step of `s.yaml` with nothing but its name and outcome (tests change what they need).
pub fn bare_step(name: &str, outcome: Outcome) -> StepResult {
    StepResult {
        name: name.into(),
        file: "s.yaml".into(),
        line: 1,
        column: 1,
        level: Level::Must,
        duration: Duration::ZERO,
        outcome,
        transcript: Vec::new(),
        notes: Vec::new(),
        exchanged: None,
    }
}

/// The suite `scenario@era` of `s.yaml`, in that requested era, with `steps` and nothing
/// else (tests change what they need).
pub fn bare_suite(id: &str, steps: Vec<StepResult>) -> SuiteResult {
    let (scenario, era) = id.rsplit_once('@').expect("an id `scenario@era`");
    SuiteResult {
        ordinal: 0,
        id: id.into(),
        scenario: scenario.into(),
        description: None,
        file: "s.yaml".into(),
        line: 1,
        pack: None,
        tags: Vec::new(),
        era: EraInfo {
            requested: era.into(),
            ..EraInfo::default()
        },
        started_at: String::new(),
        duration: Duration::ZERO,
        setup_error: None,
        setup_error_kind: None,
        steps,
        stderr_tail: None,
        target: None,
    }
}

fn failure(kind: &str, message: &str, expected: Option<&str>, actual: Option<&str>) -> Failure {
    Failure {
        kind: kind.to_string(),
        finding: Finding {
            message: message.to_string(),
            expected: expected.map(str::to_string),
            actual: actual.map(str::to_string),
        },
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
            direction: crate::results::exchange::Direction::Sent,
            at_ms: 0,
            body: format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"token":"{SECRET}"}}}}"#
            ),
            http: None,
        },
        TranscriptEntry {
            direction: crate::results::exchange::Direction::Received,
            at_ms: 2,
            body: "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 1,\n  \"result\": {}\n}".to_string(),
            http: Some("200".to_string()),
        },
        TranscriptEntry {
            direction: crate::results::exchange::Direction::Note,
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
        direction: crate::results::exchange::Direction::Received,
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
