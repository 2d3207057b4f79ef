//! The canonical result of a run. Console, JUnit and JSON reports are all derived from
//! this one model (nothing reads engine internals), and `--json` writes it as is.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::results::exchange::TranscriptEntry;
use crate::results::outcome::{Level, Outcome};

/// Everything a run produced, in input order.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub mcpspec_version: String,
    /// Redacted, human-readable description of the target (`stdio: cmd args` / `http: URL`).
    pub target: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// RFC 3339 start time.
    pub started_at: String,
    #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
    pub duration: Duration,
    pub suites: Vec<SuiteResult>,
    pub summary: Summary,
    /// Expected-failures entries that no longer fail (each fails the run until removed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_entries: Vec<StaleEntry>,
    /// The signal that stopped the run (`SIGINT`, `SIGTERM`); its unfinished suites have
    /// the setup error kind `interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupted: Option<String>,
    /// Set on a `--shard K/N` run: which part of which run this report is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Stdio: the server processes the run started and how long starting them took (where
    /// the time of a stdio run usually goes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<ServerStats>,
    /// Sampling answered by model profiles (`run --models`): per profile, its requests,
    /// tokens and estimated cost (replayed answers count the recorded tokens).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<ModelUsage>,
}

/// One model profile's share of a run's sampling answers.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ModelUsage {
    pub profile: String,
    /// Model answers given (asked, or replayed from `--replay-models`).
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Estimated from the profile's `price`; absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// Server processes of a stdio run (see `engine::pool`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ServerStats {
    /// Processes started (every one: shared, per scenario, second connections, `fresh`
    /// raw messages, the `auto` probe's fallback).
    pub started: usize,
    /// Time from each spawn to the end of its opening exchange, summed.
    #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
    pub starting: Duration,
    /// Scenarios (second connections, a probe's own connection) that ran on a warm
    /// process another had used, a scenario that was its last user included.
    pub warm: usize,
    /// Shared processes stopped because they went wrong (what happened); the next
    /// scenario of the era started a new one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaced: Vec<String>,
    /// `--sandbox`: every server ran with no route out of the machine and a private HOME.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sandboxed: bool,
    /// `--sandbox`: the tools whose answers showed a failed connection (they tried to
    /// reach beyond the machine), each as "`name`: what it answered" (cut).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reached_out: Vec<String>,
}

/// Which part of a sharded run a report is, so that `report merge` can refuse a shard
/// given twice and notice a missing one.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ShardInfo {
    /// K, from 1.
    pub index: usize,
    /// N.
    pub count: usize,
    /// Identifies the full run: a digest of N and the unsharded selection (every
    /// `scenario@era` in order), the same on every shard of one command line.
    pub run_id: String,
    /// Suites in the full run (all shards together).
    pub total: usize,
}

impl ShardInfo {
    pub fn new(index: usize, count: usize, full_run: &[&str]) -> ShardInfo {
        // Stable across builds and platforms (the shards run on different machines).
        let count_text = count.to_string();
        let bytes = std::iter::once(count_text.as_str())
            .chain(full_run.iter().copied())
            .flat_map(|part| part.bytes().chain([0]));
        ShardInfo {
            index,
            count,
            run_id: stable_hash(bytes),
            total: full_run.len(),
        }
    }

    pub fn label(&self) -> String {
        format!("{}/{}", self.index, self.count)
    }
}

/// FNV-1a of `bytes`, as 16 hex digits: the same on every build and platform (shard run ids,
/// SARIF fingerprints).
pub fn stable_hash(bytes: impl IntoIterator<Item = u8>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in bytes {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// A stale expected-failures entry.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StaleEntry {
    pub entry: String,
    pub file: String,
    pub line: u32,
    pub message: String,
}

/// One scenario run in one era: `scenario@era`.
/// `setup_error_kind` of a suite a signal stopped before it finished.
pub const INTERRUPTED: &str = "interrupted";

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SuiteResult {
    /// `scenario@era`.
    pub id: String,
    /// Position of this item in the full (unsharded) run, for merging shard reports.
    #[serde(default)]
    pub ordinal: usize,
    pub scenario: String,
    pub description: Option<String>,
    /// Source file of the scenario, as the user named it.
    pub file: String,
    pub line: u32,
    /// Pack name (and version) the scenario came from, when it came from a pack.
    pub pack: Option<String>,
    /// The scenario's tags (`security` suites feed the SARIF report).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    pub era: EraInfo,
    pub started_at: String,
    #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
    pub duration: Duration,
    /// Set when the connection could not be established; then every step is an error.
    pub setup_error: Option<String>,
    /// `start`, `unreachable`, `auth` or `protocol` when `setup_error` is set (`load` when
    /// the scenario could not be compiled again at run time: see `Scenario::compiled_steps`;
    /// `interrupted` when a signal stopped the run before the suite finished).
    pub setup_error_kind: Option<String>,
    pub steps: Vec<StepResult>,
    /// Last lines the server wrote on stderr (stdio), for diagnosing crashes.
    pub stderr_tail: Option<String>,
    /// The suite's own target and transport when it differs from the report's: set by
    /// `report merge` of runs against different servers (each suite keeps its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<SuiteTarget>,
}

/// Where a suite ran, when a merged report holds several targets.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct SuiteTarget {
    pub target: String,
    pub transport: String,
}

impl SuiteResult {
    /// The target this suite ran against: its own (a merged report) or the report's.
    pub fn target_of<'a>(&'a self, report: &'a RunReport) -> (&'a str, &'a str) {
        match &self.target {
            Some(t) => (&t.target, &t.transport),
            None => (&report.target, &report.transport),
        }
    }

    /// Overall status of the suite, for one-line display. Precedence: a setup error, then
    /// any failed step, any errored step, any warning; a suite whose steps were all skipped
    /// is skipped; anything else (passes, expected failures, no steps) passes.
    pub fn status(&self) -> SuiteStatus {
        let any = |f: fn(&Outcome) -> bool| self.steps.iter().any(|s| f(&s.outcome));
        if self.setup_error.is_some() {
            SuiteStatus::Error
        } else if any(|o| matches!(o, Outcome::Failed { .. })) {
            SuiteStatus::Fail
        } else if any(|o| matches!(o, Outcome::Error { .. })) {
            SuiteStatus::Error
        } else if any(|o| matches!(o, Outcome::Warning { .. })) {
            SuiteStatus::Warn
        } else if any(|o| matches!(o, Outcome::ExpectedFailure { .. })) {
            // Green for the exit code, but not a pass: the known failures are still there.
            SuiteStatus::Xfail
        } else if !self.steps.is_empty()
            && self
                .steps
                .iter()
                .all(|s| matches!(s.outcome, Outcome::Skipped { .. }))
        {
            SuiteStatus::Skip
        } else {
            SuiteStatus::Pass
        }
    }
}

/// Overall status of a suite (see [`SuiteResult::status`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteStatus {
    Pass,
    Fail,
    Error,
    Warn,
    Skip,
    /// No failure left but expected ones (baseline entries).
    Xfail,
}

impl SuiteStatus {
    /// The status word printed by the console reporter.
    pub fn label(self) -> &'static str {
        match self {
            SuiteStatus::Pass => "PASS",
            SuiteStatus::Fail => "FAIL",
            SuiteStatus::Error => "ERROR",
            SuiteStatus::Warn => "WARN",
            SuiteStatus::Skip => "SKIP",
            SuiteStatus::Xfail => "XFAIL",
        }
    }
}

/// What was asked for and what the connection ended up speaking.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct EraInfo {
    /// The era label as requested: `legacy`, `modern`, `auto`, `2025-06-18`, …
    pub requested: String,
    /// Protocol revision the connection negotiated, when it got that far.
    pub negotiated: Option<String>,
    /// `legacy` or `modern`, when known.
    pub era: Option<String>,
    /// How `auto` decided (e.g. "server/discover answered -32601: fell back to legacy").
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StepResult {
    /// The step's name, which is also its check id.
    pub name: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// `must` (a failure fails the run) or `should` (a failure is a warning).
    pub level: Level,
    #[serde(serialize_with = "secs", deserialize_with = "from_secs")]
    pub duration: Duration,
    pub outcome: Outcome,
    /// JSON-RPC exchange of this step (requests, responses, HTTP status), secrets redacted.
    pub transcript: Vec<TranscriptEntry>,
    /// Notes on how it was judged: an expectation that held over a list that matched
    /// nothing ("matched nothing"), so a pass that checked nothing is not silent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The time its exchanges with the server took (request sent to reply read), without
    /// the judging `duration` holds: `load`'s step latency. Not in reports.
    #[serde(skip)]
    pub exchanged: Option<Duration>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub suites: usize,
    pub steps: usize,
    pub passed: usize,
    pub failed: usize,
    pub warnings: usize,
    pub errors: usize,
    pub skipped: usize,
    pub expected_failures: usize,
    /// Suites a signal stopped before they finished (each also counts as one error).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub interrupted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    /// Counts steps by outcome. A suite with a setup error and no steps counts as one
    /// errored step (the JUnit report shows it as a `connect` test case), so a run whose
    /// connection failed is never green.
    pub fn from_suites(suites: &[SuiteResult]) -> Summary {
        let mut s = Summary {
            suites: suites.len(),
            ..Summary::default()
        };
        for suite in suites {
            if suite.setup_error.is_some() && suite.steps.is_empty() {
                s.steps += 1;
                s.errors += 1;
            }
            if suite.setup_error_kind.as_deref() == Some(INTERRUPTED) {
                s.interrupted += 1;
            }
        }
        for step in suites.iter().flat_map(|suite| &suite.steps) {
            s.steps += 1;
            match step.outcome {
                Outcome::Passed => s.passed += 1,
                Outcome::Failed { .. } => s.failed += 1,
                Outcome::Warning { .. } => s.warnings += 1,
                Outcome::Error { .. } => s.errors += 1,
                Outcome::Skipped { .. } => s.skipped += 1,
                Outcome::ExpectedFailure { .. } => s.expected_failures += 1,
            }
        }
        s
    }

    /// True when nothing failed or errored (warnings, skips and expected failures allowed).
    pub fn is_green(&self) -> bool {
        self.failed == 0 && self.errors == 0
    }
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64((d.as_secs_f64() * 1000.0).round() / 1000.0)
}

fn from_secs<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = f64::deserialize(d)?;
    Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
}
