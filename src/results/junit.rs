//! The one JUnit writer. Runs, contract diffs and evals build their documents here, so
//! every JUnit file mcpspec writes has the same policy: every text redacted (the known
//! secrets and every secret-shaped value) before anything is cut, control characters shown
//! escaped (`\u{1B}`), element bodies capped at [`MAX_OUTPUT_BYTES`]. The XML itself
//! (escaping, indentation) is quick-junit's.
//!
//! A run's report is written as it goes ([`Spool`]): each suite's XML is appended to a
//! spool file as it finishes, and the document (whose `<testsuites>` line carries the
//! totals) is put together at the end, so memory stays flat however many suites run.
//!
//! Two shapes ([`Flavor`]): the default one, richer (`file` and `line` of each test case,
//! test-case properties, `skipped` and `timestamp` of the whole; validated against
//! `tests/junit/junit.xsd`), and `jenkins`, which the Jenkins xUnit plugin's strict
//! `junit-10.xsd` accepts (`tests/junit/junit-10.xsd`). Every writer builds the default
//! document; [`Flavor::Jenkins`] is applied last, to each suite and to the head.

use std::cell::Cell;
use std::io::{self, Read, Seek, Write};
use std::sync::Arc;
use std::time::Duration;

use quick_junit::Report;
pub use quick_junit::{NonSuccessKind, Property, TestCase, TestCaseStatus, TestSuite};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::ground::redact::{Redactor, count_masks, escape_controls};

/// Largest `<system-out>` / `<system-err>` / failure body written for one test case.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// The shape of a JUnit document (`--junit-flavor`, `junitFlavor:` in mcpspec.yaml).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// Richer, for GitLab and GitHub reporters: `file` and `line` of each test case, run
    /// totals with `skipped` and `timestamp` (validated against mcpspec's junit.xsd).
    #[default]
    Default,
    /// Strict, for the Jenkins xUnit plugin (validated against its junit-10.xsd): no
    /// `file`/`line` on test cases, a test case's properties as lines of its
    /// `<system-out>`, the run's timestamp on each suite, no `skipped` on the totals.
    Jenkins,
}

/// The attributes junit-10.xsd allows on a `<testsuite>` besides the ones quick-junit
/// writes from its fields.
const JENKINS_SUITE_ATTRIBUTES: [&str; 7] =
    ["group", "id", "package", "file", "log", "url", "hostname"];
/// The same for a `<testcase>`.
const JENKINS_CASE_ATTRIBUTES: [&str; 1] = ["group"];

impl Flavor {
    /// `suite` in this flavour; `timestamp` (the document's) is given to a suite without
    /// one in the strict flavour, whose `<testsuites>` cannot carry it.
    fn suite(
        self,
        suite: &mut TestSuite,
        timestamp: Option<chrono::DateTime<chrono::FixedOffset>>,
    ) {
        if self == Flavor::Default {
            return;
        }
        suite.disabled = None;
        suite
            .extra
            .retain(|k, _| JENKINS_SUITE_ATTRIBUTES.contains(&k.as_str()));
        if suite.timestamp.is_none() {
            suite.timestamp = timestamp;
        }
        for case in &mut suite.test_cases {
            case.extra
                .retain(|k, _| JENKINS_CASE_ATTRIBUTES.contains(&k.as_str()));
            case.timestamp = None;
            case.assertions = None;
            if !case.properties.is_empty() {
                let mut out: String = case
                    .properties
                    .drain(..)
                    .map(|p| format!("{}: {}\n", p.name.as_str(), p.value.as_str()))
                    .collect();
                if let Some(was) = case.system_out.take() {
                    out.push_str(was.as_str());
                }
                // The properties' values were redacted when they were made: only the cap.
                case.set_system_out(truncate(&out, MAX_OUTPUT_BYTES));
            }
        }
    }

    /// The `<testsuites …>` start tag in this flavour: the strict one has no `skipped`
    /// (nor `timestamp`, left out of the head it is made from).
    fn head_tag(self, tag: &str, skipped: usize) -> String {
        match self {
            Flavor::Default => tag.to_string(),
            // Attribute values have `"` escaped: this is the `skipped` attribute.
            Flavor::Jenkins => tag.replacen(&format!(" skipped=\"{skipped}\""), "", 1),
        }
    }
}

/// The redaction, escape and size policy, with a count of the masks written since
/// [`Policy::take_masks`] (a run's suites say how many of their texts were masked).
pub struct Policy {
    redactor: Arc<Redactor>,
    masks: Cell<usize>,
}

impl Policy {
    pub fn new(redactor: Arc<Redactor>) -> Policy {
        Policy {
            redactor,
            masks: Cell::new(0),
        }
    }

    /// With the process's known secrets (see [`crate::ground::redact::known`]).
    pub fn known() -> Policy {
        Policy::new(crate::ground::redact::known())
    }

    /// Use `redactor` from now on (a run that learned a secret on the way).
    pub fn set_redactor(&mut self, redactor: Arc<Redactor>) {
        self.redactor = redactor;
    }

    /// An attribute or short text: redacted (before anything is cut), controls escaped.
    pub fn text(&self, text: &str) -> String {
        let text = escape_controls(&self.redactor.redact(text)).into_owned();
        self.masks.set(self.masks.get() + count_masks(&text));
        text
    }

    /// An element body: [`Policy::text`], capped at [`MAX_OUTPUT_BYTES`].
    pub fn body(&self, text: &str) -> String {
        truncate(&self.text(text), MAX_OUTPUT_BYTES)
    }

    /// Masks written since the last call.
    pub fn take_masks(&self) -> usize {
        self.masks.replace(0)
    }

    /// `<failure type message>body</failure>`.
    pub fn failure(&self, ty: &str, message: &str, body: Option<&str>) -> TestCaseStatus {
        self.non_success(NonSuccessKind::Failure, ty, message, body)
    }

    /// `<error type message>body</error>`.
    pub fn error(&self, ty: &str, message: &str, body: Option<&str>) -> TestCaseStatus {
        self.non_success(NonSuccessKind::Error, ty, message, body)
    }

    fn non_success(
        &self,
        kind: NonSuccessKind,
        ty: &str,
        message: &str,
        body: Option<&str>,
    ) -> TestCaseStatus {
        let mut status = TestCaseStatus::non_success(kind);
        status
            .set_type(self.text(ty))
            .set_message(self.text(message));
        if let Some(body) = body {
            status.set_description(self.body(body));
        }
        status
    }

    /// `<skipped type message/>`.
    pub fn skipped(&self, ty: Option<&str>, message: &str) -> TestCaseStatus {
        let mut status = TestCaseStatus::skipped();
        status.set_message(self.text(message));
        if let Some(ty) = ty {
            status.set_type(self.text(ty));
        }
        status
    }

    /// A test case named `name` in `classname`.
    pub fn case(&self, name: &str, classname: &str, status: TestCaseStatus) -> TestCase {
        let mut case = TestCase::new(self.text(name), status);
        case.set_classname(self.text(classname));
        case
    }

    pub fn property(&self, name: &str, value: &str) -> Property {
        Property::new(name, self.text(value))
    }

    /// `<system-out>` of a test case.
    pub fn system_out(&self, case: &mut TestCase, text: &str) {
        case.set_system_out(self.body(text));
    }
}

/// The document of `suites` in `flavor`: `<testsuites name>` with their totals, and the
/// timestamp (RFC 3339) and time of the whole when known.
pub fn document(
    name: &str,
    timestamp: Option<&str>,
    time: Option<Duration>,
    suites: impl IntoIterator<Item = TestSuite>,
    flavor: Flavor,
) -> String {
    let timestamp = parse_timestamp(timestamp);
    let mut report = head(name, timestamp, time, flavor);
    report.add_test_suites(suites.into_iter().map(|mut suite| {
        flavor.suite(&mut suite, timestamp);
        suite
    }));
    let xml = report
        .to_string()
        .expect("serializing a JUnit report to memory cannot fail");
    let (start, inner, end) = split_document(&xml);
    format!("{}{inner}{end}", flavor.head_tag(start, report.skipped))
}

fn parse_timestamp(timestamp: Option<&str>) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    timestamp.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
}

fn head(
    name: &str,
    timestamp: Option<chrono::DateTime<chrono::FixedOffset>>,
    time: Option<Duration>,
    flavor: Flavor,
) -> Report {
    let mut report = Report::new(name);
    if let Some(ts) = timestamp
        && flavor == Flavor::Default
    {
        report.set_timestamp(ts);
    }
    if let Some(time) = time {
        report.set_time(time);
    }
    report
}

/// A document written suite by suite: the suites go to a spool file as they come, the
/// document is put together by [`Spool::finish`] (its first line holds the totals).
pub struct Spool {
    flavor: Flavor,
    /// The document's timestamp, for the suites without one (the strict flavour).
    timestamp: Option<chrono::DateTime<chrono::FixedOffset>>,
    /// An anonymous temporary file (`tempfile::tempfile`: created with a name no one can
    /// guess or plant a symlink at, and unlinked at once, so it goes when it is closed,
    /// however the process ends).
    spool: io::BufWriter<std::fs::File>,
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
}

impl Spool {
    /// A spool in the temporary directory, for a document in `flavor`.
    pub fn new(flavor: Flavor) -> io::Result<Spool> {
        Ok(Spool {
            flavor,
            timestamp: None,
            spool: io::BufWriter::new(tempfile::tempfile()?),
            tests: 0,
            failures: 0,
            errors: 0,
            skipped: 0,
        })
    }

    /// The document's timestamp (RFC 3339): the strict flavour gives it to the suites
    /// added from now on that have none.
    pub fn set_timestamp(&mut self, timestamp: Option<&str>) {
        self.timestamp = parse_timestamp(timestamp);
    }

    /// Append one suite (then dropped: nothing of it stays in memory).
    pub fn add(&mut self, mut suite: TestSuite) -> io::Result<()> {
        self.flavor.suite(&mut suite, self.timestamp);
        self.tests += suite.tests;
        self.failures += suite.failures;
        self.errors += suite.errors;
        self.skipped += suite.skipped;
        let mut one = Report::new("");
        one.add_test_suite(suite);
        let xml = one
            .to_string()
            .expect("serializing a JUnit report to memory cannot fail");
        // quick-junit indents a suite the same whatever its siblings: what stands between
        // the `<testsuites …>` start tag and its end tag is this suite as it appears in
        // any document.
        let (_, inner, _) = split_document(&xml);
        self.spool.write_all(inner.as_bytes())
    }

    /// The document: `<testsuites name>` with the totals of every suite added, then the
    /// suites, written to `out`.
    pub fn finish(
        self,
        name: &str,
        timestamp: Option<&str>,
        time: Option<Duration>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let mut spooled = self
            .spool
            .into_inner()
            .map_err(io::IntoInnerError::into_error)?;
        spooled.seek(io::SeekFrom::Start(0))?;
        let mut report = head(name, parse_timestamp(timestamp), time, self.flavor);
        report.tests = self.tests;
        report.failures = self.failures;
        report.errors = self.errors;
        report.skipped = self.skipped;
        let xml = report
            .to_string()
            .expect("serializing a JUnit report to memory cannot fail");
        let (start, _, end) = split_document(&xml);
        out.write_all(self.flavor.head_tag(start, self.skipped).as_bytes())?;
        let mut buf = vec![0; 64 * 1024];
        loop {
            let n = spooled.read(&mut buf)?;
            if n == 0 {
                break;
            }
            out.write_all(&buf[..n])?;
        }
        out.write_all(end.as_bytes())?;
        out.flush()
    }
}

/// A serialized document in three: through the `<testsuites …>` start tag, the suites, and
/// the end tag (from its line break).
fn split_document(xml: &str) -> (&str, &str, &str) {
    let open = xml.find("<testsuites").expect("a JUnit document");
    // Attribute values have `>` escaped: the first one closes the start tag.
    let start_end = open + xml[open..].find('>').expect("a start tag") + 1;
    let close = xml.rfind("\n</testsuites>").expect("an end tag");
    (&xml[..start_end], &xml[start_end..close], &xml[close..])
}

/// Cut `text` to at most `max` bytes (on a character boundary), ending it with a
/// `… (truncated)` marker when anything was cut.
pub fn truncate(text: &str, max: usize) -> String {
    const MARKER: &str = "\n… (truncated)\n";
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = crate::ground::redact::char_floor(text, max.saturating_sub(MARKER.len()));
    // Prefer to cut after a whole line.
    if let Some(nl) = text[..end].rfind('\n')
        && nl > end / 2
    {
        end = nl;
    }
    format!("{}{MARKER}", &text[..end])
}

#[cfg(test)]
mod tests {
    use crate::results::junit::truncate;

    #[test]
    fn truncate_marks_cut_text() {
        assert_eq!(truncate("short", 100), "short");
        let long = "é".repeat(100);
        let cut = truncate(&long, 50);
        assert!(cut.len() <= 50, "{}", cut.len());
        assert!(cut.ends_with("… (truncated)\n"));
    }
}
