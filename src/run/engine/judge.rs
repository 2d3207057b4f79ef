//! Judging a step: its expectations against what came back, the captures, and the
//! judgement that waits while the next request is in flight. Sends nothing but the
//! `tools/list` an `outputSchema` expectation needs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::failure::{outcome_for, severity_of, step_failure, step_result};
use crate::ground::source::Severity;
use crate::language::assert::golden::Snapshots;
use crate::language::assert::{self, ExpectOutcome, Observed, Reply};
use crate::language::dsl::scenario::Capture;
use crate::language::dsl::scenario::expect::ExpectKind;
use crate::language::dsl::{Action, PathExpr, Step};
use crate::protocol::methods;
use crate::results::exchange::Exchange;
use crate::results::exchange::TranscriptEntry;
use crate::results::outcome::Finding;
use crate::results::outcome::{Failure, Level, Outcome};
use crate::results::report::result::StepResult;
use crate::run::client::Connection;

/// What running a step gave: its outcome, or its exchange to judge later.
pub(super) enum StepRun<'s> {
    Done(Outcome),
    /// Judged expectations: the outcome, and a note for each that held over nothing.
    Judged(Outcome, Vec<String>),
    Deferred(Box<Judgement<'s>>),
}

/// A step's exchange, kept to be judged while the next request is in flight: judging
/// only reads the exchange, so doing it then takes it off the request-to-request path.
pub(super) struct Judgement<'s> {
    pub(super) step: &'s Step,
    pub(super) exchange: Exchange,
    pub(super) is_http: bool,
    pub(super) ctx_value: Arc<Value>,
    pub(super) snapshots: Arc<Snapshots>,
}

impl Judgement<'_> {
    fn judge(mut self) -> (Outcome, Vec<String>) {
        self.exchange.settle();
        // A deferred step captures nothing, so the variables are not written.
        let mut no_captures = Map::new();
        let observation = Observation {
            exchange: &self.exchange,
            assembled: None,
            is_http: self.is_http,
            snapshots: &self.snapshots,
            output_schema: None,
        };
        judge_observed(self.step, observation, &mut no_captures, &self.ctx_value)
    }
}

/// The step results of a scenario, in step order, with at most one judgement pending.
pub(super) struct Deferred<'s> {
    /// Whether judgements may wait at all.
    allowed: bool,
    results: Vec<StepResult>,
    /// The step waiting to be judged: when it began, the time until then, its exchanges' time.
    pending: Option<(
        Judgement<'s>,
        Instant,
        Duration,
        Duration,
        Vec<TranscriptEntry>,
    )>,
}

impl<'s> Deferred<'s> {
    pub(super) fn new(steps: usize, allowed: bool) -> Self {
        Deferred {
            allowed,
            results: Vec::with_capacity(steps),
            pending: None,
        }
    }

    /// Whether `step`'s judgement may wait: it changes no variable, is not retried and
    /// needs nothing more from the server.
    pub(super) fn may_defer(&self, step: &Step) -> bool {
        self.allowed
            && step.captures.is_empty()
            // A row of a live `each` is named by its row, which the judgement does not know.
            && step.each.is_none()
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

    pub(super) fn defer(
        &mut self,
        judgement: Judgement<'s>,
        started: Instant,
        exchanged: Duration,
        transcript: Vec<TranscriptEntry>,
    ) {
        self.flush();
        let elapsed = started.elapsed();
        self.pending = Some((judgement, Instant::now(), elapsed, exchanged, transcript));
    }

    /// Judge the pending step now (its duration counts the judging, not the wait).
    pub(super) fn flush(&mut self) {
        if let Some((judgement, judged_from, elapsed, exchanged, transcript)) = self.pending.take()
        {
            let step = judgement.step;
            let (outcome, notes) = judgement.judge();
            let duration = elapsed + judged_from.elapsed();
            let mut result = step_result(step, outcome, duration, transcript);
            result.exchanged = Some(exchanged).filter(|d| !d.is_zero());
            result.notes = notes;
            self.results.push(result);
        }
    }

    pub(super) fn push(&mut self, result: StepResult) {
        self.flush();
        self.results.push(result);
    }

    /// The name of the first step so far that failed or errored (judging the pending one).
    pub(super) fn first_failure(&mut self) -> Option<String> {
        self.flush();
        self.results
            .iter()
            .find(|r| matches!(r.outcome, Outcome::Failed { .. } | Outcome::Error { .. }))
            .map(|r| r.name.clone())
    }

    pub(super) fn finish(mut self) -> Vec<StepResult> {
        self.flush();
        self.results
    }
}

/// `--wire-validate`: the violations received since the last report fail this step
/// (a `wire_valid` check reports them itself). Errors keep their own reason.
pub(super) fn with_wire_violations(
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
            kind: crate::language::dsl::document::check::CheckKind::WireValid,
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
        let finding = Finding {
            message: v.to_string(),
            expected: Some(format!("a valid {}", v.schema_type)),
            actual: Some(format!("at {}: {}", v.pointer, v.wanted)),
        };
        step_failure(step, "wire", finding)
    }));
    // A wire violation is a MUST whatever the step's level.
    Outcome::Failed { failures }
}

/// An error response whose id is not the request's: the request was the only one in
/// flight, so the reply answers it, and the JSON-RPC rule that an error response echoes
/// the request's id is broken — a failure of the step (at its level), not a transport
/// error. (A *result* with a wrong id stays a transport error: nothing can be judged.)
pub(super) fn wrong_error_id(step: &Step, expected: &Value, got: &Value, error: &Value) -> Outcome {
    let mut message = format!(
        "the error response carries id {got}, but the request it answers (the only one in flight) has id {expected}"
    );
    if got.is_null() {
        message.push_str(" (null is only for a request whose id could not be read)");
    }
    let failure = step_failure(
        step,
        "response",
        Finding {
            message,
            expected: Some(format!("an error response with id {expected}")),
            actual: Some(format!("id {got}, error {}", assert::compact(error, 300))),
        },
    );
    outcome_for(step, vec![failure])
}

/// An error response with `id: null` to a request whose id was readable breaks JSON-RPC
/// (null is for an id that could not be read). stdio's transport already refuses it; over
/// HTTP it is taken (a refusal before the body was read, such as a rejected `Origin` or
/// session, carries null), so it is judged here: in a 2xx response, or when the step
/// expects a JSON-RPC error (the server read the message), it fails the step.
pub(super) fn null_error_id(
    step: &Step,
    out: &crate::run::client::Outgoing,
    ex: &Exchange,
) -> Option<Outcome> {
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
fn default_expectation(step: &Step, ex: &Exchange, reply: &Reply) -> Option<Failure> {
    if !matches!(step.action, Action::Request { .. }) {
        return None;
    }
    if reply.result.is_some() {
        return None;
    }
    let actual = match reply.error {
        Some(e) => assert::describe_error_response(ex, e),
        None => assert::describe_no_response(ex),
    };
    let message = format!("expected a successful response, got {actual}");
    Some(step_failure(
        step,
        "response",
        Finding {
            message,
            expected: Some("a result (the step has no `expect`, so success is expected)".into()),
            actual: Some(actual),
        },
    ))
}

fn capture(step: &Step, seen: &Observed, ctx: &mut Map<String, Value>) -> Result<(), Box<Failure>> {
    for c in &step.captures {
        let path = match &c.path {
            PathExpr::Fixed(p) => std::borrow::Cow::Borrowed(p),
            template => match template.resolve(&Value::Object(ctx.clone())) {
                Ok(p) => std::borrow::Cow::Owned(p.into_owned()),
                Err(why) => {
                    let finding = Finding::message(format!("capture `{}`: {why}", c.name));
                    return Err(capture_failure(step, c, finding, "this path"));
                }
            },
        };
        let value = match &c.asked {
            None => seen
                .document
                .as_ref()
                .and_then(|d| path.query(d).first().cloned()),
            Some(method) => assert::asked_requests(seen.exchange, method.as_deref())
                .1
                .into_iter()
                .find_map(|r| path.query(r).first().cloned()),
        };
        match value {
            Some(v) => {
                ctx.insert(c.name.clone(), v);
            }
            None => {
                let finding = matched_nothing(c, seen);
                return Err(capture_failure(step, c, finding, "nothing to capture here"));
            }
        }
    }
    Ok(())
}

/// What a capture that matched nothing looked for, and what there was to look in.
fn matched_nothing(c: &Capture, seen: &Observed) -> Finding {
    Finding {
        message: format!("capture `{}`: `{}` matched nothing", c.name, c.source),
        expected: Some(match &c.asked {
            None => format!("a value at `{}`", c.source),
            Some(method) => format!(
                "a value at `{}` in the `{}` requests the server asked",
                c.source,
                method.as_deref().unwrap_or("*")
            ),
        }),
        actual: match &c.asked {
            None => seen.document.as_ref().map(|d| assert::compact(d, 500)),
            Some(method) => Some(assert::compact(
                &Value::Array(
                    assert::asked_requests(seen.exchange, method.as_deref())
                        .1
                        .into_iter()
                        .cloned()
                        .collect(),
                ),
                500,
            )),
        },
    }
}

/// A capture that could not be made, told at the capture (kind `capture`).
fn capture_failure(step: &Step, c: &Capture, finding: Finding, label: &str) -> Box<Failure> {
    Box::new(Failure::at(
        "capture",
        finding,
        &c.pos,
        severity_of(step),
        label,
    ))
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
    Ok(crate::protocol::fields::output_schema(tool).cloned())
}

/// Judge a step's expectations on what came back, then capture into `ctx`
/// (`ctx_value` is `ctx` as the step saw it, already rendered once by the caller).
/// `assembled`: a result the engine built (the handshake's, merged pages), judged instead
/// of the exchange's response.
#[allow(clippy::too_many_arguments)]
pub(super) async fn judge(
    step: &Step,
    conn: &mut Connection,
    exchange: &Exchange,
    assembled: Option<&Value>,
    snapshots: &Snapshots,
    ctx: &mut Map<String, Value>,
    ctx_value: &Value,
    call: Option<(&str, Option<&Value>)>,
) -> (Outcome, Vec<String>) {
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
    let observation = Observation {
        exchange,
        assembled,
        is_http: conn.is_http(),
        snapshots,
        output_schema,
    };
    judge_observed(step, observation, ctx, ctx_value)
}

/// What a step's expectations are judged against.
struct Observation<'a> {
    exchange: &'a Exchange,
    /// The result assembled from a stream of partial results, when there was one.
    assembled: Option<&'a Value>,
    is_http: bool,
    snapshots: &'a Snapshots,
    /// The tool's `outputSchema`, when an expectation asks for it (fetched beforehand).
    output_schema: Option<Result<Option<Value>, String>>,
}

/// Judge a step's expectations against its exchange (no server traffic), then capture.
fn judge_observed(
    step: &Step,
    observed: Observation<'_>,
    ctx: &mut Map<String, Value>,
    ctx_value: &Value,
) -> (Outcome, Vec<String>) {
    let exchange = observed.exchange;
    let reply = observed
        .assembled
        .map_or_else(|| Reply::of(exchange), Reply::result);
    let mut seen = Observed::with_reply(exchange, reply, observed.is_http);
    if super::failure::level_of(step) == Level::Should {
        seen.severity = Severity::Warning;
    }
    seen.output_schema = observed.output_schema;
    seen.snapshots = Some(observed.snapshots);
    let mut failures: Vec<Failure> = Vec::new();
    let mut applicable = 0;
    let mut not_applicable = Vec::new();
    let mut notes = Vec::new();
    for expect in &step.expects {
        match assert::check(expect, &seen, ctx_value) {
            ExpectOutcome::Pass => applicable += 1,
            ExpectOutcome::Vacuous(note) => {
                applicable += 1;
                notes.push(format!("line {}: {note}", expect.pos.line));
            }
            ExpectOutcome::Fail(f) => {
                applicable += 1;
                failures.push(f);
            }
            ExpectOutcome::NotApplicable(why) => not_applicable.push(why),
        }
    }
    // A step whose expectations failed on an HTTP 401/403 says so first: "matched
    // nothing" alone hides that the server withdrew the session's authorization.
    let refused = matches!(exchange.http.as_ref().map(|h| h.status), Some(401 | 403));
    if (step.expects.is_empty() || (refused && !failures.is_empty()))
        && let Some(f) = default_expectation(step, exchange, &reply)
    {
        failures.insert(0, f);
    }
    if failures.is_empty() {
        if applicable == 0 && !not_applicable.is_empty() {
            let reason = not_applicable.join("; ");
            return (Outcome::Skipped { reason }, notes);
        }
        if let Err(f) = capture(step, &seen, ctx) {
            failures.push(*f);
        }
    }
    (outcome_for(step, failures), notes)
}
