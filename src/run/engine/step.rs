//! Running the steps of one scenario over one connection: variables, group calls,
//! preconditions, retries and the order of results. Each step is sent by `send` and
//! judged by `judge`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use super::checks::CheckState;
use super::failure::step_result;
use super::judge::{Deferred, StepRun, with_wire_violations};
use super::send::run_step;
use crate::language::dsl::scenario::Phase;
use crate::language::dsl::template::render_value;
use crate::language::dsl::{Action, GroupCall, LiveEach, Scenario, Step};
use crate::protocol::era::EraSelector;
use crate::results::report::result::{Outcome, StepResult};
use crate::run::client::Connection;

/// Run `steps` (the scenario's, compiled: see [`Scenario::compiled_steps`]) in order.
#[allow(
    clippy::too_many_arguments,
    reason = "one scenario's run: what it runs, over what, with which inputs and shared state"
)]
pub async fn run_steps(
    scenario: &Scenario,
    steps: &[Step],
    conn: &mut Connection,
    skip_all: Option<String>,
    params: &Map<String, Value>,
    wire_validate: bool,
    calls: &super::checks::ToolCalls,
    pool: &super::pool::Pool,
    snapshots: &std::sync::Arc<crate::language::assert::golden::Snapshots>,
    progress: &crate::results::report::events::ItemEvents<'_, '_>,
) -> Vec<StepResult> {
    // `--wire-validate` reports violations by the step that ran next: judge in order.
    let mut results = Deferred::new(steps.len(), !wire_validate);
    // `--wire-validate`: violations up to here are reported (by the step that ran next).
    let mut wire_reported = 0;
    let mut checks = CheckState {
        auth: super::security::AuthProbe::default(),
        parse_probe: None,
        invalid_probe: None,
        calls,
        pool,
        snapshots: snapshots.clone(),
    };
    let mut ctx = Map::new();
    ctx.insert("era".into(), json!(conn.negotiated.kind.as_str()));
    ctx.insert("revision".into(), json!(conn.negotiated.revision));
    let mut broken: Option<String> = None;
    // `broken` is the connection's breakdown: a step with a fresh connection of its own
    // (`raw` with `fresh: true`) still runs.
    let mut conn_broken = false;
    // Captures that a failed step never made: (variable, step name).
    let mut uncaptured: Vec<(String, String)> = Vec::new();
    // Command-line parameters: usable in `vars`, and they win over a var of the same name.
    ctx.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
    // Outside `mcpspec load` (which sets it per iteration), the first iteration's values.
    if !ctx.contains_key(crate::language::dsl::workload::VAR) {
        let row = scenario.load.as_ref().and_then(|l| l.rows.first());
        ctx.insert(
            crate::language::dsl::workload::VAR.into(),
            crate::language::dsl::workload::vars(0, 0, row),
        );
    }
    for (name, value) in scenario
        .vars
        .iter()
        .filter(|(n, _)| !params.contains_key(n))
    {
        match render_value(value, &Value::Object(ctx.clone())) {
            Ok(v) => {
                // A secret-named var made by a template: known to every output from now on.
                if crate::ground::redact::is_secret_param(name)
                    && let Some(text) = crate::ground::redact::secret_text(&v)
                {
                    crate::ground::redact::remember(&[text]);
                }
                ctx.insert(name.clone(), v);
            }
            Err((_, _, e)) => {
                broken = Some(format!("variable `{name}`: {e}"));
                break;
            }
        }
    }
    // Arguments of the group call being run: bound while its steps run, then unbound.
    let mut call: Option<BoundCall> = None;
    // The variables as one JSON value for templates and predicates, made again only
    // after something may have changed them (a capture, a check, a group call's bindings).
    let mut vars: Option<Arc<Value>> = None;
    // `setup` steps that did not pass skip the main steps (teardown still runs).
    let mut setup_failed: Option<Option<String>> = None;
    // The `each` over a captured list being run, row by row.
    let mut live: Option<LiveRun> = None;
    let mut next = 0;
    loop {
        // The end of a live `each`'s row: the next row, or the step after it.
        if let Some(run) = live.as_mut()
            && next == run.end
        {
            if let Some(done) = call.take() {
                done.unbind(&mut ctx);
            }
            run.unbind(&mut ctx);
            vars = None;
            if run.row + 1 < run.rows.len() {
                run.row += 1;
                run.bind(&mut ctx);
                next = run.start;
            } else {
                live = None;
            }
            continue;
        }
        let Some(step) = steps.get(next) else {
            break;
        };
        // A live `each` begins: its rows are the captured list as it is now. Without a
        // value (its step did not run) the steps run once, and say why they cannot.
        if live.is_none()
            && let Some(each) = &step.each
            && let Some(list) = ctx.get(&each.over)
        {
            let end = next
                + steps[next..]
                    .iter()
                    .take_while(|s| s.each.as_ref().is_some_and(|e| Arc::ptr_eq(e, each)))
                    .count();
            let outcome = match list {
                Value::Array(items) if !items.is_empty() => None,
                Value::Array(_) => Some(Outcome::Skipped {
                    reason: format!("`each`: `{}` is an empty list: no rows", each.over),
                }),
                other => Some(Outcome::Error {
                    message: format!(
                        "`each`: `{}` is not a list (it holds {})",
                        each.over,
                        kind_of(other)
                    ),
                    detail: None,
                }),
            };
            if let Some(outcome) = outcome {
                let mut result = step_result(step, outcome, Duration::ZERO, Vec::new());
                result.name = each.base.clone();
                results.push(result);
                next = end;
                continue;
            }
            let Some(Value::Array(items)) = ctx.get(&each.over).cloned() else {
                unreachable!("a list, checked above")
            };
            if let Some(done) = call.take() {
                done.unbind(&mut ctx);
            }
            let mut run = LiveRun::new(each.clone(), next, end, items);
            run.bind(&mut ctx);
            vars = None;
            live = Some(run);
        }
        next += 1;
        let shown = match &live {
            Some(run) => run.each.row_name(&step.name, &run.labels[run.row]),
            None => step.name.clone(),
        };
        let started = Instant::now();
        // What came before (a previous step's late reads, a setup) is not this step's.
        conn.take_exchanged();
        progress.step(&shown);
        if step.phase != Phase::Setup && setup_failed.is_none() {
            setup_failed = Some(if steps.first().is_some_and(|s| s.phase == Phase::Setup) {
                results.first_failure()
            } else {
                None
            });
        }
        let same_call = match (&call, &step.call) {
            (None, None) => true,
            (Some(c), Some(s)) => Arc::ptr_eq(&c.call, s),
            _ => false,
        };
        if !same_call {
            if let Some(done) = call.take() {
                done.unbind(&mut ctx);
            }
            call = step.call.as_ref().map(|c| BoundCall::bind(c, &mut ctx));
            vars = None;
        }
        // A scenario-level `authRequired` decides before anything step-specific: an
        // unauthenticated endpoint skips every token check for that one reason.
        let mut skip = skip_all.clone();
        if step.phase == Phase::Main
            && let Some(Some(failed)) = &setup_failed
        {
            skip = Some(format!("setup step `{failed}` did not pass"));
        }
        let mut probe_error = None;
        for (needed, step_level) in [
            (scenario.requires.auth_required, false),
            (step.requires.auth_required, true),
        ] {
            if step_level && skip.is_none() {
                skip = step_era_skip(step, conn).or_else(|| {
                    super::security::static_unmet(&step.requires, conn.target(), params)
                });
            }
            if needed && skip.is_none() && probe_error.is_none() {
                match checks.auth.unmet(conn).await {
                    Ok(why) => skip = why,
                    Err(e) => probe_error = Some(e),
                }
            }
        }
        if skip.is_none() {
            skip = probe_unmet(&step.requires, conn, pool).await;
        }
        let call_broken = call.as_ref().and_then(|c| c.error.clone());
        // `requires: {defined: …}`: an input the server legitimately left out (an empty
        // list) skips the step with the author's reason.
        let no_input = if skip.is_none()
            && !(scenario.requires.defined.is_empty() && step.requires.defined.is_empty())
        {
            let v = vars
                .get_or_insert_with(|| Arc::new(Value::Object(ctx.clone())))
                .clone();
            scenario
                .requires
                .defined
                .iter()
                .chain(&step.requires.defined)
                .find_map(|(expr, reason)| {
                    crate::language::dsl::template::no_value(expr, &v)
                        .map(|why| format!("{reason} (`{expr}` {why})"))
                })
        } else {
            None
        };
        // Expectations that held over nothing (see `StepRun::Judged`).
        let mut notes = Vec::new();
        let outcome_and_log = if let Some(reason) = skip {
            (Outcome::Skipped { reason }, conn.take_log())
        } else if let Some(e) = probe_error {
            (
                Outcome::Error {
                    message: format!("the unauthenticated probe failed: {e}"),
                    detail: None,
                },
                conn.take_log(),
            )
        } else if let Some(why) = broken
            .as_ref()
            .filter(|_| !(conn_broken && matches!(step.action, Action::Raw { fresh: true, .. })))
            .or(call_broken.as_ref())
        {
            (
                Outcome::Error {
                    message: format!("not run: {why}"),
                    detail: None,
                },
                Vec::new(),
            )
        } else if let Some((var, by)) = uncaptured.iter().find(|(v, _)| step.uses.contains(v)) {
            (
                Outcome::Error {
                    message: format!("not run: needs `{var}`, which step `{by}` did not capture"),
                    detail: None,
                },
                Vec::new(),
            )
        } else if let Some(reason) = no_input {
            (Outcome::Skipped { reason }, conn.take_log())
        } else {
            let step_vars = vars
                .get_or_insert_with(|| Arc::new(Value::Object(ctx.clone())))
                .clone();
            if !step.captures.is_empty()
                || matches!(step.action, Action::Check { .. } | Action::Handshake)
            {
                vars = None;
            }
            // The first attempt, then `retry` ones while it does not pass (a retried step
            // is never deferred: see `Deferred::may_defer`).
            let mut attempt = 1;
            let run = loop {
                let run = run_step(
                    step,
                    conn,
                    &step_vars,
                    &mut ctx,
                    params,
                    &mut checks,
                    &mut results,
                )
                .await;
                let (count, interval) = match (&run, step.retry) {
                    (
                        StepRun::Done(outcome) | StepRun::Judged(outcome, _),
                        Some((count, interval)),
                    ) if attempt <= count
                        && matches!(
                            outcome,
                            Outcome::Failed { .. }
                                | Outcome::Error { .. }
                                | Outcome::Warning { .. }
                        )
                        && !conn.is_broken() =>
                    {
                        (count, interval)
                    }
                    _ => break run,
                };
                attempt += 1;
                tokio::time::sleep(interval).await;
                conn.note(format!(
                    "retry: attempt {attempt} of {} after {}",
                    count + 1,
                    humantime::format_duration(interval)
                ));
            };
            if conn.is_broken() && broken.is_none() {
                conn_broken = true;
                broken = Some(match conn.broken_reason() {
                    Some(why) => format!("the connection broke at step `{}`: {why}", step.name),
                    None => format!("the connection broke at step `{}`", step.name),
                });
            }
            let mut outcome = match run {
                StepRun::Done(outcome) => outcome,
                StepRun::Judged(outcome, judged) => {
                    notes = judged;
                    outcome
                }
                StepRun::Deferred(judgement) => {
                    let exchanged = conn.take_exchanged();
                    results.defer(*judgement, started, exchanged, conn.take_log());
                    continue;
                }
            };
            for c in &step.captures {
                if !ctx.contains_key(&c.name) {
                    uncaptured.push((c.name.clone(), step.name.clone()));
                }
            }
            if wire_validate {
                outcome = with_wire_violations(step, outcome, conn, &mut wire_reported);
            }
            (outcome, conn.take_log())
        };
        let (outcome, transcript) = outcome_and_log;
        let mut result = step_result(step, outcome, started.elapsed(), transcript);
        result.exchanged = Some(conn.take_exchanged()).filter(|d| !d.is_zero());
        result.name = shown;
        result.notes = notes;
        results.push(result);
    }
    results.finish()
}

/// The rows of an `each` over a captured list, run over the steps `start..end`.
struct LiveRun {
    each: Arc<LiveEach>,
    start: usize,
    end: usize,
    rows: Vec<Value>,
    /// Each row's label in the check id (see [`live_labels`]).
    labels: Vec<String>,
    row: usize,
    /// The values the row's variables shadowed.
    shadowed: Vec<(String, Option<Value>)>,
}

impl LiveRun {
    fn new(each: Arc<LiveEach>, start: usize, end: usize, rows: Vec<Value>) -> Self {
        LiveRun {
            labels: live_labels(&rows),
            each,
            start,
            end,
            rows,
            row: 0,
            shadowed: Vec::new(),
        }
    }

    fn bind(&mut self, ctx: &mut Map<String, Value>) {
        let row = self.rows[self.row].clone();
        self.shadowed = vec![
            (
                self.each.var.clone(),
                ctx.insert(self.each.var.clone(), row),
            ),
            (
                ROW_INDEX.to_string(),
                ctx.insert(ROW_INDEX.to_string(), json!(self.row)),
            ),
        ];
    }

    fn unbind(&mut self, ctx: &mut Map<String, Value>) {
        for (name, old) in self.shadowed.drain(..).rev() {
            match old {
                Some(v) => ctx.insert(name, v),
                None => ctx.remove(&name),
            };
        }
    }
}

/// The variable holding an `each` row's position.
const ROW_INDEX: &str = "row_index";

/// The labels of a captured list's rows, as a written list's: a scalar row itself, a map's
/// `id` or `name`, else the position; a label two rows share carries the position too.
fn live_labels(rows: &[Value]) -> Vec<String> {
    let scalar = |v: &Value| match v {
        Value::String(s) if s.chars().count() <= 40 && !s.contains(['[', ']']) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    };
    let labels: Vec<String> = rows
        .iter()
        .enumerate()
        .map(|(index, row)| {
            scalar(row)
                .or_else(|| row.get("id").and_then(scalar))
                .or_else(|| row.get("name").and_then(scalar))
                .unwrap_or_else(|| index.to_string())
        })
        .collect();
    labels
        .iter()
        .enumerate()
        .map(|(index, label)| {
            if labels.iter().filter(|l| *l == label).count() > 1 {
                format!("{label}#{index}")
            } else {
                label.clone()
            }
        })
        .collect()
}

/// A group call's arguments, rendered against the caller's variables when the call's
/// first step runs, and the values they shadowed.
struct BoundCall {
    call: Arc<GroupCall>,
    shadowed: Vec<(String, Option<Value>)>,
    error: Option<String>,
}

impl BoundCall {
    fn bind(call: &Arc<GroupCall>, ctx: &mut Map<String, Value>) -> Self {
        let vars = Value::Object(ctx.clone());
        let mut bound = BoundCall {
            call: call.clone(),
            shadowed: Vec::new(),
            error: None,
        };
        // In order, each against the variables bound before it: an `each` row comes first,
        // so a group call's arguments can use it.
        let mut vars = vars;
        for (name, value) in &call.args {
            match render_value(value, &vars) {
                Ok(v) => {
                    bound
                        .shadowed
                        .push((name.clone(), ctx.insert(name.clone(), v)));
                    if call.args.len() > 1 {
                        vars = Value::Object(ctx.clone());
                    }
                }
                Err((_, _, e)) => {
                    bound.error = Some(format!("argument `{name}` of group `{}`: {e}", call.group));
                    break;
                }
            }
        }
        bound
    }

    fn unbind(self, ctx: &mut Map<String, Value>) {
        for (name, old) in self.shadowed.into_iter().rev() {
            match old {
                Some(v) => ctx.insert(name, v),
                None => ctx.remove(&name),
            };
        }
    }
}

/// The preconditions that need a probe of their own (`legacyHandshake`): checked after
/// the others hold, on another legacy connection to the same target (noted in the
/// transcript; a warm one from the pool when there is one: its handshake completed).
pub(super) async fn probe_unmet(
    requires: &crate::language::dsl::Requires,
    conn: &mut Connection,
    pool: &super::pool::Pool,
) -> Option<String> {
    for method in &requires.served {
        match conn.serves(method).await {
            Ok(true) => {}
            Ok(false) => {
                return Some(format!(
                    "the server does not serve {method} (-32601 method not found): no rule obliges it to"
                ));
            }
            // A transport failure is for the steps themselves to report.
            Err(_) => {}
        }
    }
    let wanted = requires.legacy_handshake?;
    let target = conn.target().clone();
    let completed = match pool
        .borrow(&target, "legacy", &crate::protocol::era::EraRequest::Legacy)
        .await
    {
        Ok(probe) => {
            let revision = probe.negotiated.revision.clone();
            conn.adopt(pool.give_back(probe, "the `legacyHandshake` probe").await);
            Ok(revision)
        }
        Err(e) => Err(e.message),
    };
    conn.note(match &completed {
        Ok(revision) => format!("probe: a legacy initialize handshake completed ({revision})"),
        Err(why) => format!("probe: no legacy initialize handshake: {why}"),
    });
    match (wanted, completed) {
        (true, Err(why)) => Some(format!(
            "the server completes no legacy initialize handshake ({why})"
        )),
        (false, Ok(revision)) => Some(format!(
            "the server completes a legacy initialize handshake ({revision}): it serves legacy clients, whatever server/discover lists"
        )),
        _ => None,
    }
}

fn step_era_skip(step: &Step, conn: &Connection) -> Option<String> {
    use crate::language::dsl::document::TransportKind;
    match (step.transport, conn.is_http()) {
        (Some(TransportKind::Http), false) => {
            return Some("step applies to the HTTP transport".into());
        }
        (Some(TransportKind::Stdio), true) => {
            return Some("step applies to the stdio transport".into());
        }
        _ => {}
    }
    if let Some(why) = step.requires.unmet(&conn.negotiated, conn.is_http()) {
        return Some(why);
    }
    // The rule table: where the negotiated revision has no such rule, no check.
    if let Some(why) = step
        .rule
        .and_then(|r| r.not_a_rule_at(&conn.negotiated.revision))
    {
        return Some(why);
    }
    let eras = step.eras.as_ref()?;
    let n = &conn.negotiated;
    if eras
        .iter()
        .any(|s| s.matches_negotiated(n.kind, &n.revision))
    {
        return None;
    }
    Some(format!(
        "step applies to eras [{}]; the connection speaks {} ({})",
        eras.iter()
            .map(EraSelector::label)
            .collect::<Vec<_>>()
            .join(", "),
        n.kind.as_str(),
        n.revision
    ))
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
