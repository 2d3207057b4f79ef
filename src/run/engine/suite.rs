//! An item's suite result apart from running it: its skeleton, its steps skipped, and what
//! is kept of it once reported.

use super::{RunConfig, failure, now_rfc3339, security};
use crate::language::dsl::Scenario;
use crate::protocol::era::Era;
use crate::results::outcome::Outcome;
use crate::results::report::events::{Event, Events};
use crate::results::report::result::{EraInfo, SuiteResult};
use crate::run::client::ConnectErrorKind;

/// A suite's turn has come: emitted, then kept (without what only a report file reads).
///
/// Under `--sandbox`, the tools whose answers in it show a failed connection join
/// `reached_out` first (read before the transcripts are dropped).
pub(super) fn finished(
    mut suite: SuiteResult,
    config: &RunConfig,
    events: &Events<'_>,
    reached_out: &mut indexmap::IndexMap<String, String>,
) -> SuiteResult {
    if config.target.sandboxed() {
        security::reached_out(&suite.steps, reached_out);
    }
    events.emit(&Event::SuiteFinished(&suite));
    if !config.keep_passing_transcripts {
        compact(&mut suite);
    }
    suite
}

pub(super) fn kind_name(kind: ConnectErrorKind) -> &'static str {
    match kind {
        ConnectErrorKind::Start => "start",
        ConnectErrorKind::Unreachable => "unreachable",
        ConnectErrorKind::Auth => "auth",
        ConnectErrorKind::Protocol => "protocol",
    }
}

/// Drop what only the reports would read: the transcripts of passed and skipped steps
/// (failures, warnings and errors keep theirs).
fn compact(suite: &mut SuiteResult) {
    for step in &mut suite.steps {
        if matches!(step.outcome, Outcome::Passed | Outcome::Skipped { .. }) {
            step.transcript = Vec::new();
        }
    }
}

/// The suite of an item before it runs: what it is, no results yet.
pub(super) fn skeleton(scenario: &Scenario, era: &Era, ordinal: usize) -> SuiteResult {
    SuiteResult {
        id: format!("{}@{}", scenario.id, era.label),
        ordinal,
        scenario: scenario.id.clone(),
        description: scenario.description.clone(),
        file: scenario.pos.shown_file().to_string(),
        line: scenario.pos.line,
        pack: scenario
            .pack
            .as_ref()
            .map(|p| match &scenario.pack_version {
                Some(v) => format!("{p}@{v}"),
                None => p.clone(),
            }),
        tags: scenario.tags.clone(),
        era: EraInfo {
            requested: era.label.clone(),
            ..EraInfo::default()
        },
        started_at: now_rfc3339(),
        duration: Default::default(),
        setup_error: None,
        setup_error_kind: None,
        steps: Vec::new(),
        stderr_tail: None,
        target: None,
    }
}

/// Every step of a scenario skipped with `why`, without connecting.
pub(super) fn skipped(
    steps: &[crate::language::dsl::Step],
    why: &str,
) -> Vec<crate::results::report::result::StepResult> {
    steps
        .iter()
        .map(|step| {
            let outcome = Outcome::Skipped {
                reason: why.to_string(),
            };
            failure::step_result(step, outcome, Default::default(), Vec::new())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::compact;
    use crate::results::exchange::TranscriptEntry;
    use crate::results::outcome::{Failure, Finding, Outcome};
    use crate::results::report::result::StepResult;
    use crate::results::report::testdata::{bare_step, bare_suite};

    fn step(outcome: Outcome) -> StepResult {
        StepResult {
            transcript: vec![TranscriptEntry {
                direction: crate::results::exchange::Direction::Sent,
                at_ms: 0,
                body: "{}".into(),
                http: None,
            }],
            ..bare_step(outcome.status(), outcome)
        }
    }

    #[test]
    fn compact_drops_only_passing_and_skipped_transcripts() {
        let failure = Failure {
            kind: "path".into(),
            finding: Finding::message("m"),
            snippet: String::new(),
            file: "s.yaml".into(),
            line: 1,
            column: 1,
        };
        let mut suite = bare_suite(
            "s@auto",
            vec![
                step(Outcome::Passed),
                step(Outcome::Skipped { reason: "r".into() }),
                step(Outcome::Failed {
                    failures: vec![failure],
                }),
                step(Outcome::Error {
                    message: "e".into(),
                    detail: None,
                }),
            ],
        );
        compact(&mut suite);
        let kept: Vec<usize> = suite.steps.iter().map(|s| s.transcript.len()).collect();
        assert_eq!(kept, [0, 0, 1, 1]);
    }
}
