//! The interpreter: schedules scenario × era items, runs each over its own connection,
//! step by step, and produces the canonical result model.

mod checks;
mod handles;
mod injection;
pub mod security;
mod step;
mod tool_checks;

use std::time::Instant;

use futures::StreamExt;

use crate::client::{ConnectErrorKind, Connection, Target};
use crate::dsl::Scenario;
use crate::era::{Era, EraSelector};
use crate::report::model::{EraInfo, Outcome, RunReport, SuiteResult, Summary};

/// What a run needs besides the scenarios.
pub struct RunConfig {
    pub target: Target,
    /// `--era` values; empty: each scenario's own eras, or `auto`.
    pub eras: Vec<Era>,
    pub jobs: usize,
    /// `--set` parameters: template variables in every scenario (they win over `vars`).
    pub params: serde_json::Map<String, serde_json::Value>,
    /// Keep the transcripts of steps that passed or were skipped once their suite has been
    /// streamed (JUnit and JSON reports show them). Without a report file nothing reads
    /// them afterwards, so dropping them keeps memory flat on large runs.
    pub keep_passing_transcripts: bool,
    /// `--wire-validate`: a wire violation fails the step that received it.
    pub wire_validate: bool,
}

/// One scenario in one era.
pub struct Item<'a> {
    pub scenario: &'a Scenario,
    pub era: Era,
    /// Position in the full selection (before sharding).
    pub ordinal: usize,
}

impl Item<'_> {
    pub fn id(&self) -> String {
        format!("{}@{}", self.scenario.id, self.era.label)
    }
}

/// Expand scenarios into the items of a (matrix) run, in input order.
pub fn plan<'a>(scenarios: &'a [Scenario], eras: &[Era]) -> Vec<Item<'a>> {
    let mut items = Vec::new();
    for scenario in scenarios {
        if eras.is_empty() {
            let own: Vec<Era> = if scenario.eras.is_empty() {
                vec![Era::parse("auto").expect("auto parses")]
            } else {
                scenario
                    .eras
                    .iter()
                    .map(|s| Era::parse(&s.label()).expect("selectors are valid eras"))
                    .collect()
            };
            items.extend(own.into_iter().map(|era| Item {
                scenario,
                era,
                ordinal: 0,
            }));
        } else {
            for era in eras {
                if scenario.eras.is_empty()
                    || scenario
                        .eras
                        .iter()
                        .any(|s| s.matches_request(&era.request))
                {
                    items.push(Item {
                        scenario,
                        era: era.clone(),
                        ordinal: 0,
                    });
                }
            }
        }
    }
    for (i, item) in items.iter_mut().enumerate() {
        item.ordinal = i;
    }
    items
}

/// Run the items with up to `jobs` connections at once. Suites are handed to
/// `on_suite` and stored in input order whatever the concurrency.
pub async fn run(
    items: Vec<Item<'_>>,
    config: &RunConfig,
    mut on_suite: impl FnMut(&SuiteResult),
) -> RunReport {
    let started = Instant::now();
    let started_at = now_rfc3339();
    let jobs = config.jobs.max(1);
    let mut suites = Vec::with_capacity(items.len());
    let mut stream =
        futures::stream::iter(items.into_iter().map(|item| run_item(item, config))).buffered(jobs);
    while let Some(mut suite) = stream.next().await {
        on_suite(&suite);
        if !config.keep_passing_transcripts {
            compact(&mut suite);
        }
        suites.push(suite);
    }
    let summary = Summary::from_suites(&suites);
    RunReport {
        mcpspec_version: env!("CARGO_PKG_VERSION").to_string(),
        target: config.target.describe(),
        transport: config.target.transport_name().to_string(),
        started_at,
        duration: started.elapsed(),
        suites,
        summary,
        stale_entries: Vec::new(),
        shard: None,
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

/// A `wire_valid` check among the steps.
fn has_wire_check(steps: &[crate::dsl::Step]) -> bool {
    steps.iter().any(|s| {
        matches!(
            s.action,
            crate::dsl::scenario::Action::Check {
                kind: crate::dsl::model::CheckKind::WireValid,
                ..
            }
        )
    })
}

async fn run_item(item: Item<'_>, config: &RunConfig) -> SuiteResult {
    let (target, params) = (&config.target, &config.params);
    let started = Instant::now();
    let scenario = item.scenario;
    let mut suite = SuiteResult {
        id: item.id(),
        ordinal: item.ordinal,
        scenario: scenario.id.clone(),
        description: scenario.description.clone(),
        file: scenario.pos.file_name().to_string(),
        line: scenario.pos.line,
        pack: scenario
            .pack
            .as_ref()
            .map(|p| match &scenario.pack_version {
                Some(v) => format!("{p}@{v}"),
                None => p.clone(),
            }),
        era: EraInfo {
            requested: item.era.label.clone(),
            ..EraInfo::default()
        },
        started_at: now_rfc3339(),
        duration: Default::default(),
        setup_error: None,
        setup_error_kind: None,
        steps: Vec::new(),
        stderr_tail: None,
    };
    // Released steps are compiled now and dropped with the scenario's run.
    let steps = match scenario.compiled_steps() {
        Ok(steps) => steps,
        Err(errors) => {
            suite.setup_error = Some(errors.render());
            suite.setup_error_kind = Some("load".to_string());
            suite.duration = started.elapsed();
            return suite;
        }
    };
    // Wire validation costs time on every response: only when something will read it.
    let wire_target;
    let target = if !target.wire_validation && (config.wire_validate || has_wire_check(&steps)) {
        wire_target = Target {
            wire_validation: true,
            ..target.clone()
        };
        &wire_target
    } else {
        target
    };
    // A scenario for another transport, or missing a parameter or a loopback target, is
    // skipped without starting anything.
    if let Some(why) = scenario
        .requires
        .transport_unmet(target.is_http())
        .or_else(|| security::static_unmet(&scenario.requires, target, params))
    {
        suite.steps = steps
            .iter()
            .map(|step| {
                let outcome = crate::report::model::Outcome::Skipped {
                    reason: why.clone(),
                };
                step::step_result(step, outcome, Default::default(), Vec::new())
            })
            .collect();
        suite.duration = started.elapsed();
        return suite;
    }
    match Connection::open(target, &item.era.label, &item.era.request).await {
        Err(e) => {
            suite.setup_error = Some(e.message.clone());
            suite.setup_error_kind = Some(
                match e.kind {
                    ConnectErrorKind::Start => "start",
                    ConnectErrorKind::Unreachable => "unreachable",
                    ConnectErrorKind::Auth => "auth",
                    ConnectErrorKind::Protocol => "protocol",
                }
                .to_string(),
            );
            suite.stderr_tail = e.stderr_tail;
        }
        Ok(mut conn) => {
            let n = &conn.negotiated;
            suite.era.negotiated = Some(n.revision.clone());
            suite.era.era = Some(n.kind.as_str().to_string());
            suite.era.note = n.note.clone();
            conn.take_log();
            let mismatch = match era_mismatch(scenario, &conn) {
                Some(why) => Some(why),
                None => step::probe_unmet(&scenario.requires, &mut conn).await,
            };
            // The pack's parameter values join `--set`'s (they already include its overrides).
            let params = if scenario.params.is_empty() {
                std::borrow::Cow::Borrowed(params)
            } else {
                let mut merged = params.clone();
                merged.extend(scenario.params.clone());
                std::borrow::Cow::Owned(merged)
            };
            suite.steps = step::run_steps(
                scenario,
                &steps,
                &mut conn,
                mismatch,
                &params,
                config.wire_validate,
            )
            .await;
            suite.stderr_tail = conn.stderr_tail();
            conn.close().await;
        }
    }
    suite.duration = started.elapsed();
    suite
}

/// Why the whole scenario does not apply: its `requires` are unmet, or (for `auto` runs)
/// the negotiated era is outside the scenario's `eras`.
fn era_mismatch(scenario: &Scenario, conn: &Connection) -> Option<String> {
    let n = &conn.negotiated;
    if let Some(why) = scenario
        .pack_requires
        .as_ref()
        .and_then(|r| r.unmet(n.kind, &n.revision, &n.capabilities))
    {
        return Some(why);
    }
    if let Some(why) = scenario.requires.unmet(n, conn.is_http()) {
        return Some(why);
    }
    if scenario.eras.is_empty()
        || scenario
            .eras
            .iter()
            .any(|s| s.matches_negotiated(n.kind, &n.revision))
    {
        return None;
    }
    Some(format!(
        "the scenario applies to eras [{}]; the connection negotiated {} ({})",
        scenario
            .eras
            .iter()
            .map(EraSelector::label)
            .collect::<Vec<_>>()
            .join(", "),
        n.kind.as_str(),
        n.revision
    ))
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{Failure, Level, StepResult, TranscriptEntry};

    fn step(outcome: Outcome) -> StepResult {
        StepResult {
            name: outcome.status().into(),
            file: "s.yaml".into(),
            line: 1,
            column: 1,
            level: Level::Must,
            duration: Default::default(),
            outcome,
            transcript: vec![TranscriptEntry {
                direction: crate::report::model::Direction::Sent,
                at_ms: 0,
                body: "{}".into(),
                http: None,
            }],
        }
    }

    #[test]
    fn compact_drops_only_passing_and_skipped_transcripts() {
        let failure = Failure {
            kind: "path".into(),
            message: "m".into(),
            expected: None,
            actual: None,
            snippet: String::new(),
            file: "s.yaml".into(),
            line: 1,
            column: 1,
        };
        let mut suite = SuiteResult {
            id: "s@auto".into(),
            ordinal: 0,
            scenario: "s".into(),
            description: None,
            file: "s.yaml".into(),
            line: 1,
            pack: None,
            era: EraInfo::default(),
            started_at: String::new(),
            duration: Default::default(),
            setup_error: None,
            setup_error_kind: None,
            steps: vec![
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
            stderr_tail: None,
        };
        compact(&mut suite);
        let kept: Vec<usize> = suite.steps.iter().map(|s| s.transcript.len()).collect();
        assert_eq!(kept, [0, 0, 1, 1]);
    }
}
