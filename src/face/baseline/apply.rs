//! Applying a baseline to a finished run: listed failures become expected, entries whose
//! failure is gone become stale.

use super::{Baseline, Entry};
use crate::ground::source::{Pos, Severity};
use crate::results::outcome::{Failure, Finding, Outcome};
use crate::results::report::events::{Event, Moment, Subscriber};
use crate::results::report::result::{RunReport, StepResult, Summary};

/// The result of applying a baseline to a run.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    /// Entries whose failure is gone, in file order. Each one fails the run.
    pub stale: Vec<Stale>,
    /// Failures left that fail the run: steps still failed or errored (and warnings when
    /// strict), plus suites whose setup error no whole-scenario entry covers.
    pub unexpected: usize,
}

impl Applied {
    /// True when the baseline leaves nothing failing and no entry is stale.
    pub fn is_ok(&self) -> bool {
        self.unexpected == 0 && self.stale.is_empty()
    }
}

/// A baseline entry that no longer fails.
#[derive(Debug, Clone)]
pub struct Stale {
    /// The entry as written.
    pub entry: String,
    pub pos: Pos,
    /// "`ENTRY` passes now: remove line N of FILE".
    pub message: String,
}

impl Stale {
    /// rustc-style snippet pointing at the entry in the baseline file.
    pub fn render(&self) -> String {
        self.pos.snippet_with_help(
            Severity::Error,
            &self.message,
            "stale entry",
            "a stale entry fails the run so that a fixed failure cannot come back unnoticed",
        )
    }
}

/// A step outcome that a baseline entry can match: failed, errored, warning (a listed
/// warning is matched even without strict), or already expected.
pub(super) fn is_failing(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Failed { .. }
            | Outcome::Error { .. }
            | Outcome::Warning { .. }
            | Outcome::ExpectedFailure { .. }
    )
}

/// A step outcome that fails the run.
pub(crate) fn fails_run(outcome: &Outcome, strict: bool) -> bool {
    match outcome {
        Outcome::Failed { .. } | Outcome::Error { .. } => true,
        Outcome::Warning { .. } => strict,
        _ => false,
    }
}

pub(super) fn has_setup_error_only(suite: &crate::results::report::result::SuiteResult) -> bool {
    suite.setup_error.is_some() && suite.steps.is_empty()
}

/// Apply a baseline to a finished run: every failed, errored or warning step matched by an
/// entry becomes [`Outcome::ExpectedFailure`] (labelled with its most specific entry), stale
/// entries are returned, and `report.summary` is recomputed.
///
/// A suite with a setup error (and so no steps) is covered by a whole-scenario entry and is
/// then not counted in `unexpected`; it keeps its `setup_error` and still counts as an error
/// in the summary (as in the JUnit report).
pub fn apply(baseline: &Baseline, report: &mut RunReport, strict: bool) -> Applied {
    let mut applied = Applied {
        // Staleness is judged on the outcomes before relabelling.
        stale: stale(baseline, report),
        unexpected: 0,
    };

    let mut by_rank: Vec<&Entry> = baseline.entries.iter().collect();
    by_rank.sort_by_key(|e| e.rank());
    for suite in &mut report.suites {
        let matching: Vec<&Entry> = by_rank
            .iter()
            .copied()
            .filter(|e| e.matches_suite(&suite.scenario, &suite.era.requested))
            .collect();
        if has_setup_error_only(suite) && !matching.iter().any(|e| e.check.is_none()) {
            applied.unexpected += 1;
        }
        for step in &mut suite.steps {
            if matches!(step.outcome, Outcome::ExpectedFailure { .. }) || !is_failing(&step.outcome)
            {
                continue;
            }
            let entry = matching
                .iter()
                .find(|e| e.check.as_ref().is_none_or(|c| *c == step.name));
            if let Some(entry) = entry {
                step.outcome = expected(step, &entry.text);
            } else if fails_run(&step.outcome, strict) {
                applied.unexpected += 1;
            }
        }
    }
    report.summary = Summary::from_suites(&report.suites);
    applied
}

/// The baseline's entries that no longer fail in `report` (relabelled or not: an
/// expected failure still fails).
pub fn stale(baseline: &Baseline, report: &RunReport) -> Vec<Stale> {
    let mut out = Vec::new();
    for entry in &baseline.entries {
        let mut ran = false;
        let mut failed = false;
        let suites = report
            .suites
            .iter()
            .filter(|s| entry.matches_suite(&s.scenario, &s.era.requested));
        for suite in suites {
            match &entry.check {
                None => {
                    if has_setup_error_only(suite) {
                        ran = true;
                        failed = true;
                    }
                    for step in &suite.steps {
                        ran |= !matches!(step.outcome, Outcome::Skipped { .. });
                        failed |= is_failing(&step.outcome);
                    }
                }
                Some(check) => {
                    for step in suite.steps.iter().filter(|s| s.name == *check) {
                        ran |= matches!(step.outcome, Outcome::Passed);
                        failed |= is_failing(&step.outcome);
                    }
                }
            }
        }
        if ran && !failed {
            out.push(Stale {
                entry: entry.text.clone(),
                pos: entry.pos.clone(),
                message: format!(
                    "`{}` passes now: remove line {} of {}",
                    entry.text, entry.pos.line, baseline.file
                ),
            });
        }
    }
    out
}

/// The expected-failure outcome of a failed, warning or errored step.
pub(super) fn expected(step: &StepResult, entry: &str) -> Outcome {
    let failures = match &step.outcome {
        Outcome::Failed { failures } | Outcome::Warning { failures } => failures.clone(),
        Outcome::Error { message, detail } => vec![Failure::unpointed(
            "error",
            Finding {
                message: message.clone(),
                expected: None,
                actual: detail.clone(),
            },
            step.file.clone(),
            step.line,
            step.column,
        )],
        _ => Vec::new(),
    };
    Outcome::ExpectedFailure {
        failures,
        entry: entry.to_string(),
    }
}

/// One suite with the baseline's expected failures relabelled (for streaming output;
/// staleness needs the whole run and is judged by [`apply`]).
pub fn relabel_suite(
    baseline: &Baseline,
    suite: &crate::results::report::result::SuiteResult,
    strict: bool,
) -> crate::results::report::result::SuiteResult {
    let mut one = RunReport {
        mcpspec_version: String::new(),
        target: String::new(),
        transport: String::new(),
        started_at: String::new(),
        duration: Default::default(),
        suites: vec![suite.clone()],
        summary: Default::default(),
        stale_entries: Vec::new(),
        servers: None,
        models: Vec::new(),
        interrupted: None,
        shard: None,
    };
    apply(baseline, &mut one, strict);
    one.suites.pop().expect("one suite in, one out")
}

/// The baseline as a stage of a run's events: the suites reach the subscribers behind it
/// (the console, JUnit) with its expected failures relabelled; after the finished run
/// reaches them, its stale entries are shown (on stderr, each with its place in the file).
pub struct Relabel<'a, 's> {
    baseline: Option<&'a Baseline>,
    strict: bool,
    next: Vec<&'s mut (dyn Subscriber + Send)>,
}

impl<'a, 's> Relabel<'a, 's> {
    /// `baseline` none: the events go through as they are.
    pub fn new(
        baseline: Option<&'a Baseline>,
        strict: bool,
        next: Vec<&'s mut (dyn Subscriber + Send)>,
    ) -> Self {
        Relabel {
            baseline,
            strict,
            next,
        }
    }

    fn forward(&mut self, event: &Event<'_>, moment: &Moment) {
        for next in self.next.iter_mut() {
            next.on(event, moment);
        }
    }
}

impl Subscriber for Relabel<'_, '_> {
    fn on(&mut self, event: &Event<'_>, moment: &Moment) {
        let Some(baseline) = self.baseline else {
            return self.forward(event, moment);
        };
        match *event {
            Event::SuiteFinished(suite) => {
                // Staleness needs the whole run: judged when it is finished.
                let shown = relabel_suite(baseline, suite, self.strict);
                self.forward(&Event::SuiteFinished(&shown), moment);
            }
            Event::RunFinished(report) => {
                self.forward(event, moment);
                for stale in stale(baseline, report) {
                    errln!("{}", stale.render());
                }
            }
            _ => self.forward(event, moment),
        }
    }
}
