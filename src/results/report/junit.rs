//! JUnit XML reporter (via quick-junit).
//!
//! Mapping (a documented contract):
//! - `<testsuites name="mcpspec">` with totals, timestamp and time of the run.
//! - One `<testsuite>` per suite, named by its id (`scenario@era`), with properties
//!   `target`, `transport`, `era.requested`, `era.negotiated`, `era`, `era.note`, `pack`
//!   (each only when known), `mcpspec.version` and `file`; the setup error and the server's
//!   stderr tail go to the suite's `<system-err>`.
//! - One `<testcase>` per step: `name` = step name, `classname` = suite id, plus `file`
//!   and `line` attributes. Failed → `<failure>`, Error → `<error>`, Skipped →
//!   `<skipped>`, expected failure → `<skipped type="xfail">`; a warning passes, with
//!   `WARNING:` lines in `<system-err>`. The step's transcript is its `<system-out>`.
//! - A suite with a setup error and no steps gets one `connect` test case in error; a
//!   suite a signal stopped before it finished gets one `interrupted` test case,
//!   `<error type="interrupted">`.
//! - Every text is redacted, then control characters are shown escaped (`\u{1B}`); a
//!   suite whose texts hold masks has a `redacted` property: how many.

use std::sync::Arc;
use std::time::Duration;

use super::events::RunInfo;
use super::result::{RunReport, StaleEntry, StepResult, SuiteResult};
use super::transcript::{format_transcript, one_line};
use crate::ground::redact::Redactor;
use crate::results::junit::{Flavor, Policy, Spool, TestCase, TestCaseStatus, TestSuite};
use crate::results::outcome::{Failure, Outcome};

/// What every suite of a run names: where it ran (unless it says otherwise) and by which
/// mcpspec.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    pub target: &'a str,
    pub transport: &'a str,
    pub version: &'a str,
}

impl<'a> Run<'a> {
    pub fn of_report(report: &'a RunReport) -> Run<'a> {
        Run {
            target: &report.target,
            transport: &report.transport,
            version: &report.mcpspec_version,
        }
    }

    pub fn of_info(info: &'a RunInfo) -> Run<'a> {
        Run {
            target: &info.target,
            transport: &info.transport,
            version: &info.mcpspec_version,
        }
    }
}

/// Render the run as a JUnit XML document in `flavor`.
pub fn to_junit(report: &RunReport, secrets: &[String], flavor: Flavor) -> String {
    let policy = Policy::new(Arc::new(Redactor::new(secrets)));
    let run = Run::of_report(report);
    let suites: Vec<TestSuite> = report
        .suites
        .iter()
        .map(|suite| test_suite(&policy, run, suite))
        .chain(stale_suite(&policy, &report.stale_entries))
        .collect();
    crate::results::junit::document(
        "mcpspec",
        Some(&report.started_at),
        Some(report.duration),
        suites,
        flavor,
    )
}

/// A run's JUnit report written as its suites come (see [`crate::results::junit::Spool`]): what
/// it keeps is the totals, not the suites.
pub struct JunitStream {
    spool: Spool,
    policy: Policy,
    secrets: Vec<String>,
    /// Process-known secrets the redactor was built with (rebuilt when the run learns one).
    known: usize,
}

impl JunitStream {
    /// In `flavor`, redacting `secrets` and whatever secrets the process learns as the run
    /// goes.
    pub fn new(secrets: &[String], flavor: Flavor) -> std::io::Result<JunitStream> {
        Ok(JunitStream {
            spool: Spool::new(flavor)?,
            policy: Policy::new(Arc::new(Redactor::new(secrets))),
            secrets: secrets.to_vec(),
            known: 0,
        })
    }

    fn refresh(&mut self) {
        let known = crate::ground::redact::known();
        if known.values().len() != self.known {
            self.known = known.values().len();
            let mut all = self.secrets.clone();
            all.extend(known.values().iter().cloned());
            self.policy.set_redactor(Arc::new(Redactor::new(&all)));
        }
    }

    pub fn suite(&mut self, run: Run<'_>, suite: &SuiteResult) -> std::io::Result<()> {
        self.refresh();
        let suite = test_suite(&self.policy, run, suite);
        self.spool.add(suite)
    }

    /// The document, with the stale entries of the finished `report`, to `out`.
    pub fn finish(
        mut self,
        report: &RunReport,
        out: &mut impl std::io::Write,
    ) -> std::io::Result<()> {
        self.refresh();
        self.spool.set_timestamp(Some(&report.started_at));
        if let Some(stale) = stale_suite(&self.policy, &report.stale_entries) {
            self.spool.add(stale)?;
        }
        self.spool.finish(
            "mcpspec",
            Some(&report.started_at),
            Some(report.duration),
            out,
        )
    }
}

fn stale_suite(ctx: &Policy, stale_entries: &[StaleEntry]) -> Option<TestSuite> {
    if stale_entries.is_empty() {
        return None;
    }
    let mut ts = TestSuite::new("expected-failures");
    for stale in stale_entries {
        let status = ctx.failure("stale_entry", &stale.message, None);
        let mut tc = ctx.case(
            &format!("stale entry: {}", stale.entry),
            "expected-failures",
            status,
        );
        tc.extra.insert("file".into(), ctx.text(&stale.file).into());
        tc.extra
            .insert("line".into(), stale.line.to_string().into());
        ts.add_test_case(tc);
    }
    Some(ts)
}

fn test_suite(ctx: &Policy, run: Run<'_>, suite: &SuiteResult) -> TestSuite {
    ctx.take_masks();
    let id = ctx.text(&suite.id);
    let mut ts = TestSuite::new(id.as_str());
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&suite.started_at) {
        ts.set_timestamp(t);
    }
    ts.set_time(suite.duration);

    let (target, transport) = match &suite.target {
        Some(t) => (t.target.as_str(), t.transport.as_str()),
        None => (run.target, run.transport),
    };
    let mut props: Vec<(&str, String)> = vec![
        ("target", target.to_string()),
        ("transport", transport.to_string()),
        ("era.requested", suite.era.requested.clone()),
    ];
    if let Some(v) = &suite.era.negotiated {
        props.push(("era.negotiated", v.clone()));
    }
    if let Some(v) = &suite.era.era {
        props.push(("era", v.clone()));
    }
    if let Some(v) = &suite.era.note {
        props.push(("era.note", one_line(v)));
    }
    if let Some(v) = &suite.pack {
        props.push(("pack", v.clone()));
    }
    props.push(("mcpspec.version", run.version.to_string()));
    props.push(("file", suite.file.clone()));
    ts.add_properties(
        props
            .into_iter()
            .map(|(name, value)| ctx.property(name, &value)),
    );

    if let Some(setup_error) = &suite.setup_error
        && suite.steps.is_empty()
    {
        // An interrupted suite is an error (CI reporters show those; a skip would pass
        // unnoticed), named for what happened.
        let interrupted =
            suite.setup_error_kind.as_deref() == Some(crate::results::report::result::INTERRUPTED);
        let name = if interrupted {
            "interrupted"
        } else {
            "connect"
        };
        let status = ctx.error(
            if interrupted { "interrupted" } else { "error" },
            &one_line(setup_error),
            Some(setup_error),
        );
        let mut case = TestCase::new(name, status);
        case.set_classname(id.as_str()).set_time(Duration::ZERO);
        case.extra
            .insert("file".into(), ctx.text(&suite.file).into());
        case.extra
            .insert("line".into(), suite.line.to_string().into());
        ts.add_test_case(case);
    }
    for step in &suite.steps {
        ts.add_test_case(test_case(ctx, &id, step));
    }

    let mut err = String::new();
    if let Some(setup_error) = &suite.setup_error {
        err.push_str("setup error: ");
        err.push_str(setup_error.trim_end());
        err.push('\n');
    }
    if let Some(tail) = suite
        .stderr_tail
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        if !err.is_empty() {
            err.push('\n');
        }
        err.push_str("server stderr (last lines):\n");
        err.push_str(tail.trim_end());
        err.push('\n');
    }
    if !err.is_empty() {
        ts.set_system_err(ctx.body(&err));
    }
    let masks = ctx.take_masks();
    if masks > 0 {
        ts.add_property(quick_junit::Property::new("redacted", masks.to_string()));
    }
    ts
}

fn test_case(ctx: &Policy, suite_id: &str, step: &StepResult) -> TestCase {
    let mut warnings = String::new();
    let status = match &step.outcome {
        Outcome::Passed => TestCaseStatus::success(),
        Outcome::Failed { failures } => {
            let ty = failures.first().map_or("failure", |f| f.kind.as_str());
            ctx.failure(ty, &headline(failures), Some(&failures_body(failures)))
        }
        Outcome::Warning { failures } => {
            for failure in failures {
                warnings.push_str("WARNING: ");
                warnings.push_str(&one_line(&failure.finding.message));
                warnings.push('\n');
                warnings.push_str(&failure_body(failure));
                warnings.push('\n');
            }
            TestCaseStatus::success()
        }
        Outcome::Error { message, detail } => ctx.error(
            "error",
            &one_line(message),
            detail.as_deref().filter(|d| !d.trim().is_empty()),
        ),
        Outcome::Skipped { reason } => ctx.skipped(None, &one_line(reason)),
        Outcome::ExpectedFailure { failures, entry } => {
            let message = format!(
                "expected failure (baseline entry: {}): {}",
                one_line(entry),
                headline(failures)
            );
            ctx.skipped(Some("xfail"), &message)
        }
    };

    let mut case = TestCase::new(ctx.text(&step.name), status);
    case.set_classname(suite_id).set_time(step.duration);
    case.extra
        .insert("file".into(), ctx.text(&step.file).into());
    case.extra
        .insert("line".into(), step.line.to_string().into());
    for note in &step.notes {
        case.add_property(ctx.property("note", note));
    }
    if !step.transcript.is_empty() {
        ctx.system_out(&mut case, &format_transcript(&step.transcript));
    }
    if !warnings.is_empty() {
        case.set_system_err(ctx.body(&warnings));
    }
    case
}

/// First failure's message on one line, with ` (+N more)` when there are several.
fn headline(failures: &[Failure]) -> String {
    match failures {
        [] => "expectation failed".to_string(),
        [only] => one_line(&only.finding.message),
        [first, rest @ ..] => format!(
            "{} (+{} more)",
            one_line(&first.finding.message),
            rest.len()
        ),
    }
}

/// Every failure's snippet (or location and message) with expected/actual lines.
fn failures_body(failures: &[Failure]) -> String {
    failures
        .iter()
        .map(failure_body)
        .collect::<Vec<_>>()
        .join("\n")
}

fn failure_body(failure: &Failure) -> String {
    let mut out = String::new();
    if failure.snippet.trim().is_empty() {
        out.push_str(&format!(
            "{}:{}:{}: {}\n",
            failure.file, failure.line, failure.column, failure.finding.message
        ));
    } else {
        out.push_str(failure.snippet.trim_end());
        out.push('\n');
    }
    for (label, value) in [
        ("expected:", &failure.finding.expected),
        ("actual:  ", &failure.finding.actual),
    ] {
        if let Some(value) = value {
            let value = value.trim_end_matches('\n');
            if value.contains('\n') {
                out.push_str(label.trim_end());
                out.push('\n');
                for line in value.lines() {
                    out.push_str("  ");
                    out.push_str(line);
                    out.push('\n');
                }
            } else {
                out.push_str(&format!("{label} {value}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use quick_junit::{NonSuccessKind, Report};

    use super::super::testdata;
    use super::*;
    use crate::results::exchange::TranscriptEntry;
    use crate::results::junit::MAX_OUTPUT_BYTES;

    /// Written as it goes, the document is the one written at once, byte for byte, in
    /// either flavour.
    #[test]
    fn streamed_document_is_the_whole_one() {
        for flavor in [Flavor::Default, Flavor::Jenkins] {
            streamed_document_is_the_whole_one_in(flavor);
        }
    }

    fn streamed_document_is_the_whole_one_in(flavor: Flavor) {
        let mut report = testdata::report();
        report.stale_entries = vec![StaleEntry {
            entry: "tools@modern/gone".into(),
            file: "expected.yaml".into(),
            line: 3,
            message: "`tools@modern/gone` passes now".into(),
        }];
        let mut stream = JunitStream::new(&testdata::secrets(), flavor).unwrap();
        for suite in &report.suites {
            stream.suite(Run::of_report(&report), suite).unwrap();
        }
        let mut out = Vec::new();
        stream.finish(&report, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            to_junit(&report, &testdata::secrets(), flavor)
        );
        // No suites at all: still the same document.
        report.suites.clear();
        report.stale_entries.clear();
        let mut out = Vec::new();
        JunitStream::new(&[], flavor)
            .unwrap()
            .finish(&report, &mut out)
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            to_junit(&report, &[], flavor)
        );
    }

    fn xml() -> String {
        to_junit(&testdata::report(), &testdata::secrets(), Flavor::Default)
    }

    /// The strict flavour (junit-10.xsd; `tests/cases/junit-flavor-jenkins` validates it):
    /// no `file`/`line` on test cases, their properties as `<system-out>` lines, no
    /// `skipped` nor `timestamp` on the totals, the run's timestamp on a suite without one.
    #[test]
    fn jenkins_flavor() {
        let mut report = testdata::report();
        report.suites[1].steps[0].notes = vec!["line 6: matched nothing".into()];
        report.stale_entries = vec![StaleEntry {
            entry: "tools@modern/gone".into(),
            file: "expected.yaml".into(),
            line: 3,
            message: "`tools@modern/gone` passes now".into(),
        }];
        let xml = to_junit(&report, &testdata::secrets(), Flavor::Jenkins);
        assert!(
            xml.contains(
                r#"<testsuites name="mcpspec" tests="9" failures="2" errors="2" time="0.123">"#
            ),
            "{xml}"
        );
        assert!(!xml.contains(" file=") && !xml.contains(" line="), "{xml}");
        assert!(!xml.contains("<property name=\"note\""), "{xml}");
        assert!(
            xml.contains(
                r#"<testcase name="tools present" classname="tools@modern" time="0.003">"#
            ),
            "{xml}"
        );
        assert!(
            xml.contains("<system-out>note: line 6: matched nothing\n"),
            "{xml}"
        );
        assert!(xml.contains(r#"<testsuite name="expected-failures" tests="1" skipped="0" errors="0" failures="1" timestamp="2026-01-02T03:04:05.000+00:00">"#), "{xml}");
        // What it keeps: the suites' counts, properties, outcomes.
        assert!(xml.contains(r#"<property name="era.negotiated" value="2025-06-18"/>"#));
        assert!(xml.contains(r#"type="xfail""#));
        let parsed = Report::deserialize_from_str(&xml).expect("valid JUnit XML");
        assert_eq!(parsed.test_suites.len(), 4);
        // The default flavour keeps all of it.
        let xml = to_junit(&report, &testdata::secrets(), Flavor::Default);
        assert!(
            xml.contains(r#"<property name="note" value="line 6: matched nothing"/>"#),
            "{xml}"
        );
        assert!(
            xml.contains(r#" skipped="2" failures="2" errors="2" timestamp="#),
            "{xml}"
        );
    }

    #[test]
    fn totals_and_suite_counts() {
        let xml = xml();
        assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
        assert!(
            xml.contains(r#"<testsuites name="mcpspec" tests="8" skipped="2" failures="1" errors="2" timestamp="2026-01-02T03:04:05.000+00:00" time="0.123">"#),
            "{xml}"
        );
        assert!(xml.contains(r#"<testsuite name="initialize@legacy" tests="1" skipped="0" errors="0" failures="0" timestamp="2026-01-02T03:04:05.678+00:00" time="0.012">"#));
        assert!(xml.contains(
            r#"<testsuite name="tools@modern" tests="6" skipped="2" errors="1" failures="1""#
        ));
        assert!(xml.contains(
            r#"<testsuite name="resources@auto" tests="1" skipped="0" errors="1" failures="0""#
        ));
    }

    #[test]
    fn properties() {
        let xml = xml();
        for prop in [
            r#"<property name="target" value="stdio: ./server --token ***"/>"#,
            r#"<property name="transport" value="stdio"/>"#,
            r#"<property name="era.requested" value="legacy"/>"#,
            r#"<property name="era.negotiated" value="2025-06-18"/>"#,
            r#"<property name="era" value="legacy"/>"#,
            r#"<property name="era.note" value="no answer"/>"#,
            r#"<property name="mcpspec.version" value="0.1.0"/>"#,
            r#"<property name="file" value="scenarios/tools.yaml"/>"#,
        ] {
            assert!(xml.contains(prop), "missing {prop}\n{xml}");
        }
        assert!(!xml.contains(r#"name="pack""#));
    }

    #[test]
    fn test_cases_by_outcome() {
        let xml = xml();
        assert!(xml.contains(r#"<testcase name="tools present" classname="tools@modern" time="0.003" file="scenarios/tools.yaml" line="5"/>"#), "{xml}");
        // Failure: type and message of the first failure, escaped, with a count of the rest.
        assert!(xml.contains(r#"<failure message="expected &lt;3&gt; &amp; got &quot;2&quot; (+1 more)" type="path">"#), "{xml}");
        // The body holds every failure.
        assert!(xml.contains("error: expected &lt;3&gt; &amp; got &quot;2&quot;"));
        assert!(xml.contains("error: token *** leaked"));
        assert!(xml.contains("expected: 3\nactual:   2\n"));
        assert!(xml.contains("expected:\n  [\n    &quot;a&quot;,"));
        // Error.
        assert!(xml.contains(r#"<error message="timed out after 5s" type="error">no response to request id 7</error>"#));
        // Skipped and expected failure.
        assert!(xml.contains(r#"<skipped message="era modern"/>"#));
        assert!(xml.contains(r#"<skipped message="expected failure (baseline entry: tools@modern/known bug): isError was false" type="xfail"/>"#));
        // Warning: passes, with WARNING lines in system-err.
        let warn = xml
            .split(r#"<testcase name="titles are set""#)
            .nth(1)
            .unwrap();
        let warn = &warn[..warn.find("</testcase>").unwrap()];
        assert!(!warn.contains("<failure"));
        assert!(warn.contains("<system-err>WARNING: tool has no title\n"));
        // Setup error without steps.
        assert!(xml.contains(r#"<testcase name="connect" classname="resources@auto" time="0.000" file="scenarios/tools.yaml" line="1">"#));
        assert!(xml.contains(
            r#"<error message="server exited with status 1 before initialize" type="error">"#
        ));
        assert!(xml.contains("<system-err>setup error: server exited with status 1 before initialize\n\nserver stderr (last lines):\npanic: missing API_KEY\nexit\n</system-err>"));
    }

    #[test]
    fn transcript_in_system_out_and_redacted() {
        let xml = xml();
        assert!(xml.contains(r#"<system-out>--&gt; {&quot;jsonrpc&quot;:&quot;2.0&quot;,&quot;id&quot;:1,&quot;method&quot;:&quot;initialize&quot;,&quot;params&quot;:{&quot;token&quot;:&quot;***&quot;}}"#), "{xml}");
        assert!(xml.contains(r#"&lt;-- [HTTP 200] {&quot;jsonrpc&quot;:&quot;2.0&quot;,&quot;id&quot;:1,&quot;result&quot;:{}}"#));
        assert!(xml.contains("# session established\n</system-out>"));
        assert!(xml.contains(r#"&lt;-- [HTTP 200 content-type: application/json] {&quot;result&quot;:{&quot;echo&quot;:&quot;***&quot;}}"#));
        assert!(!xml.contains(testdata::SECRET));
    }

    #[test]
    fn secret_with_xml_and_json_special_characters_is_redacted() {
        let mut report = testdata::report();
        let secret = r#"p<a&s"s"#.to_string();
        report.suites[0].steps[0].transcript.push(TranscriptEntry {
            direction: crate::results::exchange::Direction::Sent,
            at_ms: 4,
            body: serde_json::json!({ "password": secret }).to_string(),
            http: None,
        });
        report.target = format!("http: https://example.test/?k={secret}");
        let xml = to_junit(&report, &[secret], Flavor::Default);
        assert!(!xml.contains("p&lt;a&amp;s"), "{xml}");
        assert!(xml.contains(r#"{&quot;password&quot;:&quot;***&quot;}"#));
        assert!(xml.contains(r#"value="http: https://example.test/?k=***""#));
    }

    #[test]
    fn long_transcript_is_truncated() {
        let mut report = testdata::report();
        let big = format!(r#"{{"data":"{}"}}"#, "x".repeat(1000));
        report.suites[0].steps[0].transcript = (0..200)
            .map(|i| TranscriptEntry {
                direction: crate::results::exchange::Direction::Received,
                at_ms: i,
                body: big.clone(),
                http: None,
            })
            .collect();
        let parsed =
            Report::deserialize_from_str(&to_junit(&report, &[], Flavor::Default)).unwrap();
        let out = parsed.test_suites[0].test_cases[0]
            .system_out
            .as_ref()
            .unwrap()
            .as_str();
        assert!(out.len() <= MAX_OUTPUT_BYTES, "{}", out.len());
        assert!(out.len() > MAX_OUTPUT_BYTES - 1100, "{}", out.len());
        // Whole lines are kept, then the marker.
        assert!(out.trim_end().ends_with("\"}\n… (truncated)"), "{out:?}");
    }

    #[test]
    fn round_trips_through_quick_junit() {
        let report = testdata::report();
        let parsed =
            Report::deserialize_from_str(&to_junit(&report, &testdata::secrets(), Flavor::Default))
                .expect("valid JUnit XML");
        assert_eq!(parsed.name.as_ref().map(|n| n.as_str()), Some("mcpspec"));
        assert_eq!(parsed.tests, 8);
        assert_eq!(parsed.failures, 1);
        assert_eq!(parsed.errors, 2);
        assert_eq!(parsed.skipped, 2);
        assert_eq!(parsed.test_suites.len(), 3);
        // Totals agree with the suites, and each suite's counts with its test cases.
        let mut tests = 0;
        for suite in &parsed.test_suites {
            assert_eq!(suite.tests, suite.test_cases.len());
            let count = |f: fn(&TestCaseStatus) -> bool| {
                suite.test_cases.iter().filter(|c| f(&c.status)).count()
            };
            assert_eq!(
                suite.failures,
                count(|s| matches!(
                    s,
                    TestCaseStatus::NonSuccess {
                        kind: NonSuccessKind::Failure,
                        ..
                    }
                ))
            );
            assert_eq!(
                suite.errors,
                count(|s| matches!(
                    s,
                    TestCaseStatus::NonSuccess {
                        kind: NonSuccessKind::Error,
                        ..
                    }
                ))
            );
            assert_eq!(
                suite.skipped,
                count(|s| matches!(s, TestCaseStatus::Skipped { .. }))
            );
            tests += suite.tests;
        }
        assert_eq!(tests, parsed.tests);
        // Escaped attributes come back intact.
        let failed = &parsed.test_suites[1].test_cases[1];
        match &failed.status {
            TestCaseStatus::NonSuccess { message, ty, .. } => {
                assert_eq!(
                    message.as_ref().unwrap().as_str(),
                    "expected <3> & got \"2\" (+1 more)"
                );
                assert_eq!(ty.as_ref().unwrap().as_str(), "path");
            }
            other => panic!("unexpected status {other:?}"),
        }
        assert_eq!(failed.extra.get("line").map(|l| l.as_str()), Some("10"));
        // The summary the engine computes agrees with the JUnit totals.
        let s = &report.summary;
        assert_eq!(parsed.tests, s.steps);
        assert_eq!(parsed.failures, s.failed);
        assert_eq!(parsed.errors, s.errors);
        assert_eq!(parsed.skipped, s.skipped + s.expected_failures);
    }
}
