//! Running the steps of one scenario over one connection.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indexmap::IndexMap;
use serde_json::{Map, Value, json};

use super::checks::CheckState;
use super::failure::{outcome_for, severity_of, step_failure, step_result};
use crate::assert::{self, Observed, Verdict};
use crate::client::connection::raw_outgoing;
use crate::client::{Connection, Exchange, Outgoing, TransportError};
use crate::dsl::template::render_value;
use crate::dsl::value::TValue;
use crate::dsl::{Action, ExpectKind, GroupCall, Scenario, Step};
use crate::era::EraSelector;
use crate::protocol::{ListKind, methods};
use crate::report::model::{Failure, Level, Outcome, StepResult, TranscriptEntry};
use crate::source::Severity;

/// stdio: how long a step checking `noResponse` watches for an unwanted reply to a
/// message that expects none (a notification).
const NO_RESPONSE_WINDOW: Duration = Duration::from_millis(100);

/// `within`: how long one listen lasts before the pending expectations are judged again.
const LISTEN_SLICE: Duration = Duration::from_millis(25);

/// Run `steps` (the scenario's, compiled: see [`Scenario::compiled_steps`]) in order.
pub async fn run_steps(
    scenario: &Scenario,
    steps: &[Step],
    conn: &mut Connection,
    skip_all: Option<String>,
    params: &Map<String, Value>,
    wire_validate: bool,
    calls: &super::checks::ToolCalls,
) -> Vec<StepResult> {
    // `--wire-validate` reports violations by the step that ran next: judge in order.
    let mut results = Deferred::new(steps.len(), !wire_validate);
    // `--wire-validate`: violations up to here are reported (by the step that ran next).
    let mut wire_reported = 0;
    let mut checks = CheckState {
        auth: super::security::AuthProbe::default(),
        calls,
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
    for (name, value) in scenario
        .vars
        .iter()
        .filter(|(n, _)| !params.contains_key(n))
    {
        match render_value(value, &Value::Object(ctx.clone())) {
            Ok(v) => {
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
    for step in steps {
        let started = Instant::now();
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
            skip = probe_unmet(&step.requires, conn).await;
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
                    crate::dsl::template::no_value(expr, &v)
                        .map(|why| format!("{reason} (`{expr}` {why})"))
                })
        } else {
            None
        };
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
                    (StepRun::Done(outcome), Some((count, interval)))
                        if attempt <= count
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
                StepRun::Deferred(judgement) => {
                    results.defer(*judgement, started, conn.take_log());
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
        results.push(step_result(step, outcome, started.elapsed(), transcript));
    }
    results.finish()
}

/// What running a step gave: its outcome, or its exchange to judge later.
enum StepRun<'s> {
    Done(Outcome),
    Deferred(Box<Judgement<'s>>),
}

/// A step's exchange, kept to be judged while the next request is in flight: judging
/// only reads the exchange, so doing it then takes it off the request-to-request path.
struct Judgement<'s> {
    step: &'s Step,
    exchange: Exchange,
    is_http: bool,
    ctx_value: Arc<Value>,
}

impl Judgement<'_> {
    fn judge(mut self) -> Outcome {
        self.exchange.settle();
        // A deferred step captures nothing, so the variables are not written.
        let mut no_captures = Map::new();
        judge_observed(
            self.step,
            &self.exchange,
            self.is_http,
            None,
            &mut no_captures,
            &self.ctx_value,
        )
    }
}

/// The step results of a scenario, in step order, with at most one judgement pending.
struct Deferred<'s> {
    /// Whether judgements may wait at all.
    allowed: bool,
    results: Vec<StepResult>,
    pending: Option<(Judgement<'s>, Instant, Duration, Vec<TranscriptEntry>)>,
}

impl<'s> Deferred<'s> {
    fn new(steps: usize, allowed: bool) -> Self {
        Deferred {
            allowed,
            results: Vec::with_capacity(steps),
            pending: None,
        }
    }

    /// Whether `step`'s judgement may wait: it changes no variable, is not retried and
    /// needs nothing more from the server.
    fn may_defer(&self, step: &Step) -> bool {
        self.allowed
            && step.captures.is_empty()
            && step.retry.is_none()
            && matches!(
                step.action,
                Action::Request {
                    paginate: false,
                    ..
                } | Action::Notification { .. }
            )
            && !step
                .expects
                .iter()
                .any(|e| matches!(e.kind, ExpectKind::OutputSchema))
    }

    fn defer(
        &mut self,
        judgement: Judgement<'s>,
        started: Instant,
        transcript: Vec<TranscriptEntry>,
    ) {
        self.flush();
        let elapsed = started.elapsed();
        self.pending = Some((judgement, Instant::now(), elapsed, transcript));
    }

    /// Judge the pending step now (its duration counts the judging, not the wait).
    fn flush(&mut self) {
        if let Some((judgement, judged_from, elapsed, transcript)) = self.pending.take() {
            let step = judgement.step;
            let outcome = judgement.judge();
            let duration = elapsed + judged_from.elapsed();
            self.results
                .push(step_result(step, outcome, duration, transcript));
        }
    }

    fn push(&mut self, result: StepResult) {
        self.flush();
        self.results.push(result);
    }

    fn finish(mut self) -> Vec<StepResult> {
        self.flush();
        self.results
    }
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
        for (name, value) in &call.args {
            match render_value(value, &vars) {
                Ok(v) => bound
                    .shadowed
                    .push((name.clone(), ctx.insert(name.clone(), v))),
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
/// the others hold, on a fresh legacy connection to the same target (noted in the
/// transcript).
pub(super) async fn probe_unmet(
    requires: &crate::dsl::Requires,
    conn: &mut Connection,
) -> Option<String> {
    let wanted = requires.legacy_handshake?;
    let target = conn.target().clone();
    let completed = match Connection::open(&target, "legacy", &crate::era::EraRequest::Legacy).await
    {
        Ok(probe) => {
            let revision = probe.negotiated.revision.clone();
            probe.close().await;
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
    use crate::dsl::model::TransportKind;
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

/// Run one step: render, send, judge, capture.
async fn run_step<'s>(
    step: &'s Step,
    conn: &mut Connection,
    ctx_value: &Arc<Value>,
    ctx: &mut Map<String, Value>,
    params: &Map<String, Value>,
    checks: &mut CheckState<'_>,
    earlier: &mut Deferred<'_>,
) -> StepRun<'s> {
    use StepRun::Done;
    // Only a plain send overlaps the judging of the step before; anything else judges it first.
    let plain_send = matches!(
        step.action,
        Action::Request {
            paginate: false,
            ..
        } | Action::Notification { .. }
            | Action::Raw { fresh: false, .. }
    );
    if !plain_send {
        earlier.flush();
    }
    if matches!(step.action, Action::Handshake) {
        let Some(result) = conn.negotiated.handshake.clone() else {
            return Done(Outcome::Error {
                message: "the connection has no handshake result".into(),
                detail: None,
            });
        };
        let exchange = Exchange {
            response: Some(json!({"jsonrpc": "2.0", "id": 0, "result": result})),
            ..Exchange::default()
        };
        return Done(judge(step, conn, &exchange, ctx, ctx_value, None).await);
    }
    if let Action::Check {
        kind,
        method,
        options,
    } = &step.action
    {
        let input = super::checks::CheckInput {
            method,
            options,
            vars: ctx,
            params,
        };
        return Done(super::checks::run(step, conn, *kind, &input, checks).await);
    }
    if let Action::Contract { baseline, rules } = &step.action {
        return Done(contract_check(step, conn, baseline, rules).await);
    }
    let timeout = step.timeout.unwrap_or(conn.target().timeout);
    // Modern HTTP: `Mcp-Param-*` headers need the tool's inputSchema; fetch the list once.
    if conn.is_http()
        && conn.negotiated.kind == crate::era::EraKind::Modern
        && matches!(&step.action, Action::Request { method, .. } if method == methods::TOOLS_CALL)
        && !conn.knows_tools()
    {
        let _ = conn.tools().await;
    }
    let mut built = match build(step, conn, ctx_value, timeout) {
        Ok(x) => x,
        Err(e) => {
            return Done(Outcome::Error {
                message: e,
                detail: None,
            });
        }
    };
    if step
        .expects
        .iter()
        .any(|e| matches!(e.kind, ExpectKind::NoResponse(_)))
    {
        built.out.quiet_period = NO_RESPONSE_WINDOW;
    }
    let paginate = matches!(step.action, Action::Request { paginate: true, .. });
    // Judged later (with the response parsed then), or now.
    let defer = earlier.may_defer(step);
    let fresh = matches!(step.action, Action::Raw { fresh: true, .. });
    // `Err(Ok(_))`: a transport error; `Err(Err(_))`: pagination broke.
    let exchange = if fresh {
        conn.send_fresh(&built.out).await.map_err(Ok)
    } else if paginate {
        paginate_all(conn, &built, timeout).await.map_err(Err)
    } else {
        conn.send_overlapped(&built.out, defer, || earlier.flush())
            .await
            .map_err(Ok)
    };
    earlier.flush();
    let exchange = match exchange {
        Ok(ex) => ex,
        Err(Ok(TransportError::WrongId {
            expected,
            got,
            error: Some(error),
        })) => return Done(wrong_error_id(step, &expected, &got, &error)),
        Err(e) => {
            // What the server wrote instead of a reply, then its stderr tail.
            let detail: Vec<String> = conn
                .take_unanswered()
                .into_iter()
                .chain(
                    conn.stderr_tail()
                        .map(|t| format!("server stderr (last lines):\n{t}")),
                )
                .collect();
            return Done(Outcome::Error {
                message: e.map_or_else(|s| s, |t| t.to_string()),
                detail: (!detail.is_empty()).then(|| detail.join("\n")),
            });
        }
    };
    let mut exchange = exchange;
    // A fresh connection is gone: nothing more arrives on it.
    if !fresh {
        collect_late_notifications(step, conn, &mut exchange, ctx_value).await;
    }
    if let Some(outcome) = null_error_id(step, &built.out, &exchange) {
        return Done(outcome);
    }
    if let Some(noise) = exchange.stdout_noise.first() {
        let mut lines: Vec<&str> = exchange.stdout_noise.iter().map(String::as_str).collect();
        let more = format!("… ({} more not kept)", exchange.stdout_noise.dropped());
        if exchange.stdout_noise.dropped() > 0 {
            lines.insert(crate::client::KEPT_EACH_END, &more);
        }
        return Done(Outcome::Error {
            message: format!("the server wrote non-JSON to stdout: `{noise}`"),
            detail: Some(format!(
                "stdout must carry only JSON-RPC messages; {} non-JSON line(s) seen:\n{}",
                exchange.stdout_noise.len(),
                lines.join("\n")
            )),
        });
    }
    if defer {
        return StepRun::Deferred(Box::new(Judgement {
            step,
            exchange,
            is_http: conn.is_http(),
            ctx_value: ctx_value.clone(),
        }));
    }
    Done(
        judge(
            step,
            conn,
            &exchange,
            ctx,
            ctx_value,
            Some((&built.method, built.params.as_deref())),
        )
        .await,
    )
}

/// `within`: while a `notifications` expectation that has one does not hold yet, listen
/// for what the server sends after its reply (stdio), each up to its own `within`.
async fn collect_late_notifications(
    step: &Step,
    conn: &mut Connection,
    exchange: &mut Exchange,
    ctx: &Value,
) {
    let waiting: Vec<(&crate::dsl::Expect, Duration)> = step
        .expects
        .iter()
        .filter_map(|e| match &e.kind {
            ExpectKind::Notifications {
                within: Some(w), ..
            } => Some((e, *w)),
            _ => None,
        })
        .collect();
    if waiting.is_empty() || conn.is_http() {
        return;
    }
    let started = Instant::now();
    loop {
        let elapsed = started.elapsed();
        let pending = waiting.iter().filter(|(e, w)| {
            elapsed < *w
                && !matches!(
                    assert::check(e, &Observed::new(exchange, false), ctx),
                    Verdict::Pass
                )
        });
        let Some(left) = pending.map(|(_, w)| *w - elapsed).max() else {
            return;
        };
        match conn.listen(left.min(LISTEN_SLICE)).await {
            Ok(messages) => exchange.other_messages.extend(messages),
            Err(e) => {
                conn.note(format!("listening for notifications after the reply: {e}"));
                return;
            }
        }
    }
}

/// `--wire-validate`: the violations received since the last report fail this step
/// (a `wire_valid` check reports them itself). Errors keep their own reason.
fn with_wire_violations(
    step: &Step,
    outcome: Outcome,
    conn: &Connection,
    reported: &mut usize,
) -> Outcome {
    let violations = &conn.wire_log().violations;
    let new = &violations[(*reported).min(violations.len())..];
    *reported = violations.len();
    let is_wire_check = matches!(
        step.action,
        Action::Check {
            kind: crate::dsl::model::CheckKind::WireValid,
            ..
        }
    );
    if new.is_empty() || is_wire_check || matches!(outcome, Outcome::Error { .. }) {
        return outcome;
    }
    let mut failures = match outcome {
        Outcome::Failed { failures } | Outcome::Warning { failures } => failures,
        _ => Vec::new(),
    };
    failures.extend(new.iter().map(|v| {
        let mut f = step_failure(step, "wire", v.to_string(), None, None);
        f.expected = Some(format!("a valid {}", v.schema_type));
        f.actual = Some(format!("at {}: {}", v.pointer, v.wanted));
        f
    }));
    // A wire violation is a MUST whatever the step's level.
    Outcome::Failed { failures }
}

/// An error response whose id is not the request's: the request was the only one in
/// flight, so the reply answers it, and the JSON-RPC rule that an error response echoes
/// the request's id is broken — a failure of the step (at its level), not a transport
/// error. (A *result* with a wrong id stays a transport error: nothing can be judged.)
fn wrong_error_id(step: &Step, expected: &Value, got: &Value, error: &Value) -> Outcome {
    let mut message = format!(
        "the error response carries id {got}, but the request it answers (the only one in flight) has id {expected}"
    );
    if got.is_null() {
        message.push_str(" (null is only for a request whose id could not be read)");
    }
    let failure = step_failure(
        step,
        "response",
        message,
        Some(format!("an error response with id {expected}")),
        Some(format!("id {got}, error {}", assert::compact(error, 300))),
    );
    outcome_for(step, vec![failure])
}

/// An error response with `id: null` to a request whose id was readable breaks JSON-RPC
/// (null is for an id that could not be read). stdio's transport already refuses it; over
/// HTTP it is taken (a refusal before the body was read, such as a rejected `Origin` or
/// session, carries null), so it is judged here: in a 2xx response, or when the step
/// expects a JSON-RPC error (the server read the message), it fails the step.
fn null_error_id(step: &Step, out: &crate::client::Outgoing, ex: &Exchange) -> Option<Outcome> {
    let expected = out.id.as_ref().filter(|id| !id.is_null())?;
    let response = ex.response.as_ref()?;
    if !response.get("id").is_some_and(Value::is_null) {
        return None;
    }
    let error = response.get("error")?;
    let status = ex.http.as_ref().map_or(200, |h| h.status);
    let expects_error = step
        .expects
        .iter()
        .any(|e| matches!(e.kind, ExpectKind::Error { .. }));
    if !(200..300).contains(&status) && !expects_error {
        return None;
    }
    Some(wrong_error_id(step, expected, &Value::Null, error))
}

/// Without expectations, a request must get a successful response.
fn default_expectation(step: &Step, ex: &Exchange) -> Option<Failure> {
    if !matches!(step.action, Action::Request { .. }) {
        return None;
    }
    let resp = ex.response.as_ref();
    if resp.and_then(|r| r.get("result")).is_some() {
        return None;
    }
    let actual = match resp.and_then(|r| r.get("error")) {
        Some(e) => format!("JSON-RPC error {}", assert::compact(e, 300)),
        None => assert::describe_no_response(ex),
    };
    let message = format!("expected a successful response, got {actual}");
    Some(step_failure(
        step,
        "response",
        message,
        Some("a result (the step has no `expect`, so success is expected)".into()),
        Some(actual),
    ))
}

fn capture(step: &Step, seen: &Observed, ctx: &mut Map<String, Value>) -> Result<(), Box<Failure>> {
    for c in &step.captures {
        let value = seen
            .document
            .as_ref()
            .and_then(|d| c.path.query(d).first().cloned());
        match value {
            Some(v) => {
                ctx.insert(c.name.clone(), v);
            }
            None => {
                let message = format!("capture `{}`: `{}` matched nothing", c.name, c.source);
                return Err(Box::new(Failure {
                    kind: "capture".into(),
                    message: message.clone(),
                    expected: Some(format!("a value at `{}`", c.source)),
                    actual: seen.document.as_ref().map(|d| assert::compact(d, 500)),
                    snippet: c
                        .pos
                        .snippet(severity_of(step), &message, "nothing to capture here"),
                    file: c.pos.file_name().to_string(),
                    line: c.pos.line,
                    column: c.pos.col,
                }));
            }
        }
    }
    Ok(())
}

/// A step rendered against the variables: the message, and what pagination reuses.
struct Built<'s> {
    out: Outgoing,
    method: Cow<'s, str>,
    params: Option<Cow<'s, Value>>,
    meta: IndexMap<String, Value>,
    headers: IndexMap<String, Option<String>>,
}

fn build<'s>(
    step: &'s Step,
    conn: &mut Connection,
    ctx: &Value,
    timeout: Duration,
) -> Result<Built<'s>, String> {
    let render = |v: &TValue| {
        render_value(v, ctx).map_err(|(line, col, e)| template_error(step, line, col, &e))
    };
    // Params without templates are borrowed as compiled, not rebuilt per send.
    let render_params = |params: &'s Option<TValue>, fixed: &'s Option<Value>| {
        Ok::<_, String>(match (params, fixed) {
            (_, Some(fixed)) => Some(Cow::Borrowed(fixed)),
            (Some(p), None) => Some(Cow::Owned(render(p)?)),
            (None, None) => None,
        })
    };
    let render_map = |m: &IndexMap<String, TValue>| -> Result<IndexMap<String, Value>, String> {
        m.iter().map(|(k, v)| Ok((k.clone(), render(v)?))).collect()
    };
    let headers =
        |m: &IndexMap<String, TValue>| -> Result<IndexMap<String, Option<String>>, String> {
            m.iter()
                .map(|(k, v)| {
                    let value = match render(v)? {
                        Value::Null => None,
                        Value::String(s) => Some(s),
                        other => Some(other.to_string()),
                    };
                    Ok((k.clone(), value))
                })
                .collect()
        };
    match &step.action {
        Action::Contract { .. } | Action::Check { .. } | Action::Handshake => {
            unreachable!("contract, check and handshake steps do not send one message")
        }
        Action::Request {
            method,
            params,
            fixed_params,
            id,
            meta,
            headers: h,
            ..
        } => {
            let params = render_params(params, fixed_params)?;
            let id = match id {
                Some(v) => render(v)?,
                None => conn.next_id(),
            };
            let (meta, headers) = (render_map(meta)?, headers(h)?);
            let out = conn.build_ref(
                method,
                params.as_deref(),
                Some(id),
                &meta,
                &headers,
                timeout,
            );
            Ok(Built {
                out,
                method: Cow::Borrowed(method),
                params,
                meta,
                headers,
            })
        }
        Action::Notification {
            method,
            params,
            fixed_params,
            meta,
            headers: h,
        } => {
            let params = render_params(params, fixed_params)?;
            let (meta, headers) = (render_map(meta)?, headers(h)?);
            let out = conn.build_ref(method, params.as_deref(), None, &meta, &headers, timeout);
            Ok(Built {
                out,
                method: Cow::Borrowed(method),
                params,
                meta,
                headers,
            })
        }
        Action::Raw {
            body,
            headers: h,
            http_method,
            ..
        } => {
            let body = render(body)?;
            let headers = headers(h)?;
            let out = raw_outgoing(&body, &headers, http_method.clone(), timeout);
            let method = body
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let params = body.get("params").cloned().map(Cow::Owned);
            Ok(Built {
                out,
                method: Cow::Owned(method),
                params,
                meta: IndexMap::new(),
                headers,
            })
        }
    }
}

fn template_error(step: &Step, line: u32, col: u32, message: &str) -> String {
    let pos = crate::source::Pos::new(&step.pos.file, line, col);
    format!("template error at {pos}: {message}")
}

/// Follow `nextCursor` to the end; the step's document is the merged list.
async fn paginate_all(
    conn: &mut Connection,
    built: &Built<'_>,
    timeout: Duration,
) -> Result<Exchange, String> {
    let (method, params) = (built.method.as_ref(), built.params.as_deref());
    let Some(key) = ListKind::from_method(method).map(ListKind::result_key) else {
        return Err(format!(
            "`paginate` applies to list methods, not `{method}`"
        ));
    };
    let mut ex = conn.send(&built.out).await.map_err(|e| e.to_string())?;
    let mut merged: Vec<Value> = Vec::new();
    let mut pages = 0;
    // The merged exchange takes as long as all its pages (a `duration` expectation).
    let mut earlier_pages = std::time::Duration::ZERO;
    loop {
        pages += 1;
        ex.elapsed += earlier_pages;
        let Some(result) = ex.response.as_ref().and_then(|r| r.get("result")).cloned() else {
            return Ok(ex);
        };
        if let Some(items) = result.get(key).and_then(Value::as_array) {
            merged.extend(items.iter().cloned());
        }
        let cursor = result.get("nextCursor").filter(|c| !c.is_null()).cloned();
        let Some(cursor) = cursor else {
            let mut result = result;
            if let Some(obj) = result.as_object_mut() {
                obj.insert(key.into(), Value::Array(std::mem::take(&mut merged)));
            }
            let id = ex
                .response
                .as_ref()
                .and_then(|r| r.get("id"))
                .cloned()
                .unwrap_or(Value::Null);
            ex.response = Some(json!({"jsonrpc": "2.0", "id": id, "result": result}));
            return Ok(ex);
        };
        if pages >= 10_000 {
            return Err(format!("{method}: still paginating after {pages} pages"));
        }
        let mut p = match params {
            Some(Value::Object(m)) => m.clone(),
            _ => Map::new(),
        };
        p.insert("cursor".into(), cursor);
        earlier_pages = ex.elapsed;
        let id = conn.next_id();
        let out = conn.build(
            method,
            Some(Value::Object(p)),
            Some(id),
            &built.meta,
            &built.headers,
            timeout,
        );
        ex = conn.send(&out).await.map_err(|e| e.to_string())?;
    }
}

/// The declared `outputSchema` of the tool a `tools/call` step calls.
async fn output_schema_for(
    conn: &mut Connection,
    method: &str,
    params: Option<&Value>,
) -> Result<Option<Value>, String> {
    if method != methods::TOOLS_CALL {
        return Err(format!(
            "`outputSchema` applies to tools/call, not `{method}`"
        ));
    }
    let name = params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .ok_or("the tools/call has no tool name")?
        .to_string();
    let tools = conn
        .tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    let tool = tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name.as_str()))
        .ok_or_else(|| format!("tool `{name}` is not in tools/list"))?;
    Ok(tool.get("outputSchema").cloned())
}

/// A `contract` step: snapshot the live server over this connection, diff it with the
/// baseline, and fail on what the rules make failing (plus stale acceptances).
async fn contract_check(
    step: &Step,
    conn: &mut Connection,
    baseline_dir: &std::path::Path,
    rules: &crate::contract::rules::Rules,
) -> Outcome {
    use crate::contract::{self, Snapshot, rules::Verdict};
    let baseline = match Snapshot::read(baseline_dir) {
        Ok(s) => s,
        Err(e) => {
            return Outcome::Error {
                message: e,
                detail: None,
            };
        }
    };
    let live = match contract::take_snapshot(conn, None).await {
        Ok(s) => s,
        Err(e) => {
            return Outcome::Error {
                message: format!("cannot take the snapshot: {e}"),
                detail: None,
            };
        }
    };
    let labels = (
        baseline.label(&baseline_dir.display().to_string()),
        live.label("live server"),
    );
    let report = contract::diff_snapshots(&baseline, &live, labels);
    let judgement = contract::rules::judge(rules, &report, chrono::Utc::now().date_naive());
    let failure = |message: String, expected: Option<String>, actual: Option<String>| {
        step_failure(step, "contract", message, expected, actual)
    };
    let mut failures: Vec<Failure> = judgement
        .changes
        .iter()
        .filter(|j| j.verdict == Verdict::Fail)
        .map(|j| {
            let c = &j.change;
            let at = c
                .path
                .as_ref()
                .map(|p| format!(" at {p}"))
                .unwrap_or_default();
            failure(
                format!("{}/{}: {}{at}", c.list, c.name, c.kind),
                c.before.as_ref().map(|v| v.to_string()),
                c.after.as_ref().map(|v| v.to_string()),
            )
        })
        .collect();
    failures.extend(
        judgement
            .stale
            .iter()
            .map(|s| failure(format!("stale acceptance: {s}"), None, None)),
    );
    outcome_for(step, failures)
}

/// Judge a step's expectations on what came back, then capture into `ctx`
/// (`ctx_value` is `ctx` as the step saw it, already rendered once by the caller).
async fn judge(
    step: &Step,
    conn: &mut Connection,
    exchange: &Exchange,
    ctx: &mut Map<String, Value>,
    ctx_value: &Value,
    call: Option<(&str, Option<&Value>)>,
) -> Outcome {
    let output_schema = if step
        .expects
        .iter()
        .any(|e| matches!(e.kind, ExpectKind::OutputSchema))
    {
        Some(match call {
            Some((method, params)) => output_schema_for(conn, method, params).await,
            None => Err("`outputSchema` applies to tools/call steps".into()),
        })
    } else {
        None
    };
    judge_observed(
        step,
        exchange,
        conn.is_http(),
        output_schema,
        ctx,
        ctx_value,
    )
}

/// Judge a step's expectations against its exchange (no server traffic), then capture.
fn judge_observed(
    step: &Step,
    exchange: &Exchange,
    is_http: bool,
    output_schema: Option<Result<Option<Value>, String>>,
    ctx: &mut Map<String, Value>,
    ctx_value: &Value,
) -> Outcome {
    let mut seen = Observed::new(exchange, is_http);
    if step.level == Level::Should {
        seen.severity = Severity::Warning;
    }
    seen.output_schema = output_schema;
    let mut failures: Vec<Failure> = Vec::new();
    let mut applicable = 0;
    let mut not_applicable = Vec::new();
    for expect in &step.expects {
        match assert::check(expect, &seen, ctx_value) {
            Verdict::Pass => applicable += 1,
            Verdict::Fail(f) => {
                applicable += 1;
                failures.push(f);
            }
            Verdict::NotApplicable(why) => not_applicable.push(why),
        }
    }
    if step.expects.is_empty()
        && let Some(f) = default_expectation(step, exchange)
    {
        failures.push(f);
    }
    if failures.is_empty() {
        if applicable == 0 && !not_applicable.is_empty() {
            return Outcome::Skipped {
                reason: not_applicable.join("; "),
            };
        }
        if let Err(f) = capture(step, &seen, ctx) {
            failures.push(*f);
        }
    }
    outcome_for(step, failures)
}
