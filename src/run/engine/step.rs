//! Running the steps of one scenario over one connection: variables, group calls,
//! preconditions, retries and the order of results. [`ScenarioRun`] holds what the steps
//! so far left behind; each step is sent by `send` and judged by `judge`.

pub(super) mod preconditions;
mod variables;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use self::preconditions::probe_unmet;
use self::variables::{BoundCall, LiveRun};
use super::RunConfig;
use super::checks::CheckState;
use super::failure::step_result;
use super::judge::{Deferred, StepRun, with_wire_violations};
use super::send::run_step;
use crate::language::dsl::scenario::Phase;
use crate::language::dsl::{Action, LiveEach, Scenario, Step};
use crate::results::exchange::TranscriptEntry;
use crate::results::outcome::Outcome;
use crate::results::report::events::ItemEvents;
use crate::results::report::result::StepResult;
use crate::run::client::Connection;

/// One scenario's run over one connection: what it runs, its variables, and what the
/// steps so far left behind (their results, the setup's verdict, a breakdown, captures
/// not made). [`ScenarioRun::run`] runs its steps in order.
pub(super) struct ScenarioRun<'s, 'a> {
    scenario: &'s Scenario,
    /// The scenario's steps, compiled (see [`Scenario::compiled_steps`]).
    steps: &'s [Step],
    conn: &'a mut Connection,
    params: &'a Map<String, Value>,
    /// A reason that skips every step (the scenario's eras or `requires` unmet).
    skip_all: Option<String>,
    wire_validate: bool,
    checks: CheckState<'a>,
    results: Deferred<'s>,
    /// `--wire-validate`: violations up to here are reported (by the step that ran next).
    wire_reported: usize,
    /// The variables: built-in, parameters, the scenario's `vars`, captures, bindings.
    ctx: Map<String, Value>,
    /// The variables as one JSON value for templates and predicates, made again only
    /// after something may have changed them (a capture, a check, a group call's bindings).
    vars: Option<Arc<Value>>,
    /// Arguments of the group call being run: bound while its steps run, then unbound.
    call: Option<BoundCall>,
    /// The `each` over a captured list being run, row by row.
    live: Option<LiveRun>,
    setup: Setup,
    breakdown: Option<Breakdown>,
    /// Captures that a failed step never made: (variable, step name).
    uncaptured: Vec<(String, String)>,
    /// The step to run next.
    next: usize,
}

/// The scenario's `setup` steps, as the steps after them see them.
#[derive(Debug, Clone, PartialEq)]
enum Setup {
    /// No step after the setup has begun yet.
    Running,
    /// The setup steps passed, or there were none.
    Passed,
    /// This setup step did not pass: the main steps are skipped (teardown still runs).
    Failed(String),
}

impl Setup {
    /// Decided when the first step after the setup (`phase`) begins: by the name of the
    /// first step so far that did not pass, if any.
    fn settle(&mut self, phase: Phase, first_failure: impl FnOnce() -> Option<String>) {
        if phase != Phase::Setup && *self == Setup::Running {
            *self = match first_failure() {
                Some(failed) => Setup::Failed(failed),
                None => Setup::Passed,
            };
        }
    }

    /// Why a step of `phase` is skipped for the setup, if it is.
    fn skips(&self, phase: Phase) -> Option<String> {
        match self {
            Setup::Failed(failed) if phase == Phase::Main => {
                Some(format!("setup step `{failed}` did not pass"))
            }
            _ => None,
        }
    }
}

/// Why the steps from here on cannot run.
#[derive(Debug)]
enum Breakdown {
    /// A scenario variable could not be made: no step runs.
    Variables(String),
    /// The connection broke: a step with a fresh connection of its own (`raw` with
    /// `fresh: true`) still runs.
    Connection(String),
}

impl Breakdown {
    /// Why `step` cannot run, if it cannot.
    fn stops(&self, step: &Step) -> Option<&str> {
        match self {
            Breakdown::Connection(_) if matches!(step.action, Action::Raw { fresh: true, .. }) => {
                None
            }
            Breakdown::Variables(why) | Breakdown::Connection(why) => Some(why),
        }
    }
}

/// Why a step does not run.
enum NotRun {
    /// A precondition unmet: skipped (what its probes exchanged is its transcript).
    Skipped(String),
    /// A precondition's probe failed (what it exchanged is the step's transcript).
    ProbeFailed(String),
    /// Something it needs is missing (a breakdown, a capture, a group call's argument).
    Blocked(String),
}

/// How a step ended: its outcome, its transcript, and a note for each expectation that
/// held over nothing (see `StepRun::Judged`).
struct Ended {
    outcome: Outcome,
    transcript: Vec<TranscriptEntry>,
    notes: Vec<String>,
}

impl NotRun {
    fn ended(self, conn: &mut Connection) -> Ended {
        let (outcome, transcript) = match self {
            NotRun::Skipped(reason) => (Outcome::Skipped { reason }, conn.take_log()),
            NotRun::ProbeFailed(e) => (
                Outcome::Error {
                    message: format!("the unauthenticated probe failed: {e}"),
                    detail: None,
                },
                conn.take_log(),
            ),
            NotRun::Blocked(why) => (
                Outcome::Error {
                    message: format!("not run: {why}"),
                    detail: None,
                },
                Vec::new(),
            ),
        };
        Ended {
            outcome,
            transcript,
            notes: Vec::new(),
        }
    }
}

impl<'s, 'a> ScenarioRun<'s, 'a> {
    /// A run of `steps` (the scenario's, compiled) over `conn`, with the run's parameters
    /// (`--set`, the pack's), its configuration and its pool of connections.
    pub(super) fn new(
        scenario: &'s Scenario,
        steps: &'s [Step],
        conn: &'a mut Connection,
        params: &'a Map<String, Value>,
        config: &'a RunConfig,
        pool: &'a super::pool::Pool,
    ) -> Self {
        let checks = CheckState {
            auth: super::security::AuthProbe::default(),
            parse_probe: None,
            invalid_probe: None,
            calls: &config.tool_calls,
            pool,
            snapshots: config.snapshots.clone(),
        };
        let (ctx, unmade) = variables::initial(scenario, params, conn);
        ScenarioRun {
            scenario,
            steps,
            conn,
            params,
            skip_all: None,
            wire_validate: config.wire_validate,
            checks,
            // `--wire-validate` reports violations by the step that ran next: judge in order.
            results: Deferred::new(steps.len(), !config.wire_validate),
            wire_reported: 0,
            ctx,
            vars: None,
            call: None,
            live: None,
            setup: Setup::Running,
            breakdown: unmade.map(Breakdown::Variables),
            uncaptured: Vec::new(),
            next: 0,
        }
    }

    /// Every step skipped for `reason`, if there is one.
    pub(super) fn skipping(mut self, reason: Option<String>) -> Self {
        self.skip_all = reason;
        self
    }

    /// Run the steps in order; their results, in step order.
    pub(super) async fn run(mut self, progress: &ItemEvents<'_, '_>) -> Vec<StepResult> {
        while let Some((step, shown)) = self.next_step() {
            let started = Instant::now();
            // What came before (a previous step's late reads, a setup) is not this step's.
            self.conn.take_exchanged();
            progress.step(&shown);
            self.settle_setup(step.phase);
            self.bind_call(step);
            let ended = match self.skip_reason(step).await {
                Some(not_run) => not_run.ended(self.conn),
                None => match self.run_with_retries(step, started).await {
                    Some(ended) => ended,
                    // Judged while the next step's request is in flight (see `Deferred`).
                    None => continue,
                },
            };
            self.record(step, shown, started, ended);
        }
        self.results.finish()
    }

    /// The next step to run and the name it is shown by (a live `each` row's carries the
    /// row): past the end of a row, back to its first step for the next row.
    fn next_step(&mut self) -> Option<(&'s Step, String)> {
        loop {
            if self.end_of_row() {
                continue;
            }
            let step = self.steps.get(self.next)?;
            if self.live.is_none()
                && let Some(each) = &step.each
                && !self.begin_rows(step, each)
            {
                continue;
            }
            self.next += 1;
            let shown = match &self.live {
                Some(run) => run.each.row_name(&step.name, &run.labels[run.row]),
                None => step.name.clone(),
            };
            return Some((step, shown));
        }
    }

    /// At the end of a live `each`'s row: its variables unbound, then the next row bound
    /// (and its first step next), or the `each` over. False anywhere else.
    fn end_of_row(&mut self) -> bool {
        let next = self.next;
        let Some(run) = self.live.as_mut().filter(|run| run.end == next) else {
            return false;
        };
        if let Some(done) = self.call.take() {
            done.unbind(&mut self.ctx);
        }
        run.unbind(&mut self.ctx);
        self.vars = None;
        if run.row + 1 < run.rows.len() {
            run.row += 1;
            run.bind(&mut self.ctx);
            self.next = run.start;
        } else {
            self.live = None;
        }
        true
    }

    /// A live `each` begins at `step`: its rows are the captured list as it is now. False
    /// when there are no rows to run (an empty list, not a list): one result says so and
    /// the run moves past the `each`. Without a value (its step did not run) the steps run
    /// once, and say why they cannot.
    fn begin_rows(&mut self, step: &'s Step, each: &Arc<LiveEach>) -> bool {
        let end = self.next
            + self.steps[self.next..]
                .iter()
                .take_while(|s| s.each.as_ref().is_some_and(|e| Arc::ptr_eq(e, each)))
                .count();
        let outcome = match self.ctx.get(&each.over) {
            None => return true,
            Some(Value::Array(items)) if !items.is_empty() => {
                let items = items.clone();
                if let Some(done) = self.call.take() {
                    done.unbind(&mut self.ctx);
                }
                let mut run = LiveRun::new(each.clone(), self.next, end, items);
                run.bind(&mut self.ctx);
                self.vars = None;
                self.live = Some(run);
                return true;
            }
            Some(Value::Array(_)) => Outcome::Skipped {
                reason: format!("`each`: `{}` is an empty list: no rows", each.over),
            },
            Some(other) => Outcome::Error {
                message: format!(
                    "`each`: `{}` is not a list (it holds {})",
                    each.over,
                    kind_of(other)
                ),
                detail: None,
            },
        };
        let mut result = step_result(step, outcome, Duration::ZERO, Vec::new());
        result.name = each.base.clone();
        self.results.push(result);
        self.next = end;
        false
    }

    /// The setup decided by the first step after it (of `phase`): by the first step so
    /// far that did not pass, when the scenario begins with setup steps.
    fn settle_setup(&mut self, phase: Phase) {
        let (steps, results) = (self.steps, &mut self.results);
        self.setup.settle(phase, || {
            steps
                .first()
                .is_some_and(|s| s.phase == Phase::Setup)
                .then(|| results.first_failure())
                .flatten()
        });
    }

    /// The arguments of `step`'s group call bound (those of the call before unbound).
    fn bind_call(&mut self, step: &Step) {
        let same_call = match (&self.call, &step.call) {
            (None, None) => true,
            (Some(c), Some(s)) => Arc::ptr_eq(&c.call, s),
            _ => false,
        };
        if !same_call {
            if let Some(done) = self.call.take() {
                done.unbind(&mut self.ctx);
            }
            self.call = step
                .call
                .as_ref()
                .map(|c| BoundCall::bind(c, &mut self.ctx));
            self.vars = None;
        }
    }

    /// Why `step` does not run, if it does not; the first reason of: a precondition
    /// unmet, its probe failed, a breakdown, a group call's argument or a capture missing,
    /// an input the server left out.
    async fn skip_reason(&mut self, step: &Step) -> Option<NotRun> {
        let (skip, probe_error) = self.unmet(step).await;
        if let Some(reason) = skip {
            return Some(NotRun::Skipped(reason));
        }
        if let Some(e) = probe_error {
            return Some(NotRun::ProbeFailed(e));
        }
        let call_broken = self.call.as_ref().and_then(|c| c.error.as_deref());
        if let Some(why) = self
            .breakdown
            .as_ref()
            .and_then(|b| b.stops(step))
            .or(call_broken)
        {
            return Some(NotRun::Blocked(why.to_string()));
        }
        if let Some((var, by)) = self.uncaptured.iter().find(|(v, _)| step.uses.contains(v)) {
            return Some(NotRun::Blocked(format!(
                "needs `{var}`, which step `{by}` did not capture"
            )));
        }
        self.no_input(step).map(NotRun::Skipped)
    }

    /// The step's preconditions: why it is skipped, if it is, and the error of the
    /// unauthenticated probe, if one failed.
    async fn unmet(&mut self, step: &Step) -> (Option<String>, Option<String>) {
        // A scenario-level `authRequired` decides before anything step-specific: an
        // unauthenticated endpoint skips every token check for that one reason.
        let mut skip = self
            .setup
            .skips(step.phase)
            .or_else(|| self.skip_all.clone());
        let mut probe_error = None;
        for (needed, step_level) in [
            (self.scenario.requires.auth_required, false),
            (step.requires.auth_required, true),
        ] {
            if step_level && skip.is_none() {
                skip = preconditions::step_era_skip(step, self.conn).or_else(|| {
                    super::security::static_unmet(&step.requires, self.conn.target(), self.params)
                });
            }
            if needed && skip.is_none() && probe_error.is_none() {
                match self.checks.auth.unmet(self.conn).await {
                    Ok(why) => skip = why,
                    Err(e) => probe_error = Some(e),
                }
            }
        }
        if skip.is_none() {
            skip = probe_unmet(&step.requires, self.conn, self.checks.pool).await;
        }
        (skip, probe_error)
    }

    /// `requires: {defined: …}`: an input the server legitimately left out (an empty
    /// list) skips the step with the author's reason.
    fn no_input(&mut self, step: &Step) -> Option<String> {
        let scenario = &self.scenario.requires.defined;
        if scenario.is_empty() && step.requires.defined.is_empty() {
            return None;
        }
        let vars = self.vars();
        scenario
            .iter()
            .chain(&step.requires.defined)
            .find_map(|(expr, reason)| {
                crate::language::dsl::template::no_value(expr, &vars)
                    .map(|why| format!("{reason} (`{expr}` {why})"))
            })
    }

    /// The variables as one JSON value (made again only when they may have changed).
    fn vars(&mut self) -> Arc<Value> {
        self.vars
            .get_or_insert_with(|| Arc::new(Value::Object(self.ctx.clone())))
            .clone()
    }

    /// Run `step`: the first attempt, then `retry` ones while it does not pass (a retried
    /// step is never deferred: see `Deferred::may_defer`). Nothing when its judgement waits.
    async fn run_with_retries(&mut self, step: &'s Step, started: Instant) -> Option<Ended> {
        let step_vars = self.vars();
        if !step.captures.is_empty()
            || matches!(step.action, Action::Check { .. } | Action::Handshake)
        {
            self.vars = None;
        }
        let mut attempt = 1;
        let run = loop {
            let run = run_step(
                step,
                self.conn,
                &step_vars,
                &mut self.ctx,
                self.params,
                &mut self.checks,
                &mut self.results,
            )
            .await;
            let Some((count, interval)) = retry_due(step, &run, attempt, self.conn) else {
                break run;
            };
            attempt += 1;
            tokio::time::sleep(interval).await;
            self.conn.note(format!(
                "retry: attempt {attempt} of {} after {}",
                count + 1,
                humantime::format_duration(interval)
            ));
        };
        self.ran(step, run, started)
    }

    /// What a run of `step` leaves: a breakdown of the connection noted, the captures it
    /// did not make remembered, its outcome (with `--wire-validate`, failed by the
    /// violations since the step before). Nothing when its judgement waits (deferred).
    fn ran(&mut self, step: &'s Step, run: StepRun<'s>, started: Instant) -> Option<Ended> {
        if self.conn.is_broken() && self.breakdown.is_none() {
            self.breakdown = Some(Breakdown::Connection(match self.conn.broken_reason() {
                Some(why) => format!("the connection broke at step `{}`: {why}", step.name),
                None => format!("the connection broke at step `{}`", step.name),
            }));
        }
        let (mut outcome, notes) = match run {
            StepRun::Done(outcome) => (outcome, Vec::new()),
            StepRun::Judged(outcome, notes) => (outcome, notes),
            StepRun::Deferred(judgement) => {
                let exchanged = self.conn.take_exchanged();
                let transcript = self.conn.take_log();
                self.results
                    .defer(*judgement, started, exchanged, transcript);
                return None;
            }
        };
        for c in &step.captures {
            if !self.ctx.contains_key(&c.name) {
                self.uncaptured.push((c.name.clone(), step.name.clone()));
            }
        }
        if self.wire_validate {
            outcome = with_wire_violations(step, outcome, self.conn, &mut self.wire_reported);
        }
        Some(Ended {
            outcome,
            transcript: self.conn.take_log(),
            notes,
        })
    }

    /// The result of `step` (shown by `shown`), after the one before it.
    fn record(&mut self, step: &Step, shown: String, started: Instant, ended: Ended) {
        let mut result = step_result(step, ended.outcome, started.elapsed(), ended.transcript);
        result.exchanged = Some(self.conn.take_exchanged()).filter(|d| !d.is_zero());
        result.name = shown;
        result.notes = ended.notes;
        self.results.push(result);
    }
}

/// The extra attempts and interval of `step`'s `retry` when its `attempt` did not pass
/// and another is due (never over a broken connection).
fn retry_due(
    step: &Step,
    run: &StepRun<'_>,
    attempt: u32,
    conn: &Connection,
) -> Option<(u32, Duration)> {
    let (StepRun::Done(outcome) | StepRun::Judged(outcome, _)) = run else {
        return None;
    };
    let (count, interval) = step.retry?;
    let failed = matches!(
        outcome,
        Outcome::Failed { .. } | Outcome::Error { .. } | Outcome::Warning { .. }
    );
    (attempt <= count && failed && !conn.is_broken()).then_some((count, interval))
}

/// What a JSON value is, in words.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a map",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The setup is decided once, by the first step after it, and skips only main steps.
    #[test]
    fn a_failed_setup_skips_the_main_steps_not_the_teardown() {
        let mut setup = Setup::Running;
        setup.settle(Phase::Setup, || panic!("a setup step decides nothing"));
        assert_eq!(setup, Setup::Running);
        setup.settle(Phase::Main, || Some("login".into()));
        assert_eq!(setup, Setup::Failed("login".into()));
        setup.settle(Phase::Main, || panic!("decided once"));
        assert_eq!(
            setup.skips(Phase::Main).as_deref(),
            Some("setup step `login` did not pass")
        );
        assert_eq!(setup.skips(Phase::Teardown), None);

        let mut setup = Setup::Running;
        setup.settle(Phase::Teardown, || None);
        assert_eq!(setup, Setup::Passed);
        assert_eq!(setup.skips(Phase::Main), None);
    }
}
