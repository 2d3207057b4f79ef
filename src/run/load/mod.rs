//! `mcpspec load`: scenarios as a workload. Iterations of the selected scenarios start on
//! a schedule (a fixed rate) or as virtual clients finish their last one; each runs the
//! scenario's steps through the engine's step runner ([`engine::iterate`]), so every
//! reply is judged as in a run, and is recorded ([`record`]) after the warm-up. Budgets
//! ([`budget`]) judge the numbers.
//!
//! Connections are held like a real client's: one per virtual client (closed loop) or
//! one per iteration in flight (open loop), each opened once (a legacy session is
//! initialized once) and reused; over stdio each is a server process, or all share one
//! (`Profile::shared_process`: their requests multiplexed on it). A connection that
//! broke is replaced; when no new one can be opened the run ends there, with what it
//! measured and why it ended.
//!
//! The generator is one task on one thread: the iterations in flight are polled together,
//! so a slow reply never holds up the schedule.

pub mod budget;
pub mod compare;
pub mod profile;
pub mod record;

use std::collections::BTreeMap;
use std::future::Future;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use crate::language::dsl::{Scenario, Steps};
use crate::protocol::era::Era;
use crate::results::outcome::Outcome;
use crate::results::report::result::StepResult;
use crate::run::client::connection::SharedProcess;
use crate::run::client::{ConnectError, Connection};
use crate::run::engine::{self, RunConfig, pool::Pool};

use crate::language::dsl::workload::Pace;
use profile::{Length, Profile};
use record::errors::{ErrorKind, error_of};
use record::{Iteration, Recorder, StepSample};

/// One scenario of the workload, its steps compiled once for every iteration.
pub struct Work<'a> {
    pub scenario: &'a Scenario,
    pub steps: Steps<'a>,
    /// Its share of the iterations (`load.weight`, default 1).
    pub weight: f64,
    /// Its data rows, one per iteration in turn (`load.each`).
    pub rows: &'a [serde_json::Value],
}

impl<'a> Work<'a> {
    pub fn new(scenario: &'a Scenario, steps: Steps<'a>) -> Work<'a> {
        let (weight, rows) = match &scenario.load {
            Some(l) => (l.weight, l.rows.as_slice()),
            None => (1.0, &[][..]),
        };
        Work {
            scenario,
            steps,
            weight,
            rows,
        }
    }
}

/// How and when the run ended.
#[derive(Debug, Clone)]
pub struct Ended {
    /// Since the run (warm-up included) began.
    pub at: Duration,
    pub why: String,
    /// Before the profile's end: an interrupt, or a server that could not be reached any more.
    pub early: bool,
}

/// What a load run measured.
pub struct Measured {
    pub recorder: Recorder,
    /// The measured part of the run (after the warm-up).
    pub measured: Duration,
    pub ended: Ended,
    /// No connection could be opened at all: the run never reached the server.
    pub unreachable: Option<ConnectError>,
    /// `--sandbox`: the tools whose answers showed a failed connection (they tried to
    /// reach out), each with the first such answer (as `run` reports them).
    pub reached_out: Vec<String>,
    /// Iterations in flight when the run ended, or due (open loop) and not started: a
    /// server that falls behind leaves many.
    pub unfinished: u64,
}

/// What a live view is shown, once a second.
#[derive(Debug, Clone, Copy)]
pub struct Live {
    /// Since the run (warm-up included) began.
    pub elapsed: Duration,
    /// Still in the warm-up (nothing counted yet).
    pub warming: bool,
    pub so_far: record::SoFar,
    pub in_flight: usize,
}

/// How often a live view is shown.
const LIVE_EVERY: Duration = Duration::from_secs(1);

/// The resolution of tokio's timer: an open-loop iteration starts up to this late with
/// no one to blame but the timer wheel. That much lateness is not counted in its latency
/// (it is the generator's, not the server's: on a 2 ms call it was a quarter of the
/// figure); anything beyond it is (a queue behind the in-flight cap, a starved generator:
/// coordinated omission).
const TIMER_TICK: Duration = Duration::from_millis(1);

/// An iteration that finished (or whose connection could not be opened).
struct Done<'a> {
    work: &'a Work<'a>,
    /// The client (closed loop) or connection slot (open loop) that ran it.
    client: usize,
    /// The stage of a stepped load it ran in.
    stage: Option<usize>,
    conn: Result<Connection, ConnectError>,
    results: Vec<StepResult>,
    /// When it was due (open loop) or began (closed loop).
    from: Instant,
    finished: Instant,
    measured: bool,
}

/// Run `work` against `config.target` in `era` per `profile`, until the profile's end or
/// `interrupt` resolves (with the signal's name); the numbers so far to `live` once a
/// second.
pub async fn run(
    work: &[Work<'_>],
    era: &Era,
    config: &RunConfig,
    profile: &Profile,
    interrupt: impl Future<Output = String>,
    mut live: impl FnMut(Live),
) -> Measured {
    let pool = Pool::new(&config.target, true, config.wire_validate);
    let shared = (profile.shared_process && !config.target.is_http())
        .then(|| SharedProcess::new(&config.target, &era.label, &era.request));
    let shared = shared.as_ref();
    let start = Instant::now();
    let measure_from = start + profile.warmup;
    let deadline = match profile.length {
        Length::Duration(d) => Some(measure_from + d),
        Length::Iterations(_) => None,
    };
    let open_loop = matches!(profile.pace, Pace::Rate(_));
    // Into the measured run at `at`; `None` in the warm-up.
    let since = |at: Instant| at.checked_duration_since(measure_from);
    // The gap to the next iteration due at `at` (open loop).
    let period_at = |at: Instant| match profile.pace_at(since(at)) {
        Pace::Rate(r) => Duration::from_secs_f64(1.0 / r),
        Pace::Clients(_) => Duration::ZERO,
    };
    // Free clients (closed loop) or connection slots (open loop), each with its open
    // connection, if any; the lowest number first.
    let slots = if open_loop {
        profile.connections
    } else {
        profile.most_clients().unwrap_or(1).min(profile.connections)
    };
    let mut free: BTreeMap<usize, Option<Connection>> =
        (0..slots.max(1)).map(|i| (i, None)).collect();
    // A closed loop whose clients change (a ramp, steps) looks again this often.
    let retick = (!open_loop && (profile.ramp.is_some() || !profile.stages.is_empty()))
        .then_some(Duration::from_millis(50));
    let mut running = FuturesUnordered::new();
    let mut next_due = start;
    // Measured iterations started.
    let mut claimed = 0u64;
    let mut recorder = Recorder::default();
    let mut reached_out = indexmap::IndexMap::new();
    let mut connected = false;
    let ended: (String, bool);
    let mut unreachable = None;
    let mut interrupt = std::pin::pin!(interrupt);
    let sleep_until = |at: Option<Instant>| async move {
        match at {
            Some(at) => tokio::time::sleep_until(at.into()).await,
            None => std::future::pending().await,
        }
    };
    let may_start = |claimed: u64| match profile.length {
        Length::Iterations(n) => claimed < n,
        Length::Duration(_) => true,
    };
    let mut plan = Plan::new(work, measure_from);
    let mut next_live = start + LIVE_EVERY;
    loop {
        if !open_loop {
            loop {
                let now = Instant::now();
                if !may_start(claimed) || running.len() >= profile.in_flight_at(since(now)) {
                    break;
                }
                let Some((client, conn)) = free.pop_first() else {
                    break;
                };
                let (w, measured, vars) = plan.next(now, &mut claimed, client);
                let stage = profile.stage_at(since(now).unwrap_or_default());
                let at = At {
                    due: now,
                    client,
                    stage,
                    measured,
                };
                running.push(iteration(
                    w,
                    conn,
                    at,
                    false,
                    vars,
                    profile.think,
                    era,
                    config,
                    (&pool, shared),
                ));
            }
        }
        if !may_start(claimed) && running.is_empty() {
            ended = (format!("{claimed} iterations run"), false);
            break;
        }
        let due = (open_loop
            && may_start(claimed)
            && running.len() < profile.in_flight_at(since(next_due)))
        .then_some(next_due);
        let tick = retick.map(|d| Instant::now() + d);
        tokio::select! {
            biased;
            why = &mut interrupt => {
                ended = (format!("interrupted ({why})"), true);
                break;
            }
            () = sleep_until(deadline) => {
                ended = ("the duration ended".into(), false);
                break;
            }
            () = sleep_until(Some(next_live)) => {
                let now = Instant::now();
                let measuring = since(now);
                live(Live {
                    elapsed: now.duration_since(start),
                    warming: measuring.is_none(),
                    so_far: recorder.so_far(measuring.unwrap_or_default()),
                    in_flight: running.len(),
                });
                next_live += LIVE_EVERY;
            }
            Some(done) = running.next(), if !running.is_empty() => {
                let client = done.client;
                if config.target.sandboxed() {
                    engine::security::reached_out(&done.results, &mut reached_out);
                }
                match take(done, &mut recorder, measure_from) {
                    Ok(conn) => {
                        connected = true;
                        free.insert(client, conn);
                    }
                    Err(e) => {
                        let why = if connected {
                            format!("the server could not be reached any more: {}", e.message)
                        } else {
                            format!("no connection to the server: {}", e.message)
                        };
                        if !connected {
                            unreachable = Some(e);
                        }
                        ended = (why, true);
                        break;
                    }
                }
            }
            () = sleep_until(due) => {
                let (client, conn) = free.pop_first().unwrap_or((running.len(), None));
                let (w, measured, vars) = plan.next(next_due, &mut claimed, client);
                let stage = profile.stage_at(since(next_due).unwrap_or_default());
                let at = At { due: next_due, client, stage, measured };
                running.push(iteration(w, conn, at, true, vars, Duration::ZERO, era, config, (&pool, shared)));
                next_due += period_at(next_due);
            }
            () = sleep_until(tick) => {}
        }
    }
    let end = Instant::now();
    // Iterations still under way end with the run, unrecorded (they end past its window),
    // but counted, with those an open loop had due and could not start (all in flight).
    let mut unfinished = running.len() as u64;
    if open_loop && may_start(claimed) && next_due <= end {
        let period = period_at(next_due).as_secs_f64().max(1e-9);
        unfinished += ((end - next_due).as_secs_f64() / period) as u64 + 1;
    }
    drop(running);
    for conn in free.into_values().flatten() {
        conn.close().await;
    }
    if let Some(shared) = shared {
        shared.close().await;
    }
    let (why, early) = ended;
    Measured {
        recorder,
        measured: end.saturating_duration_since(measure_from),
        ended: Ended {
            at: end.duration_since(start),
            why,
            early,
        },
        unreachable,
        reached_out: reached_out
            .into_iter()
            .map(|(tool, said)| format!("`{tool}`: {said}"))
            .collect(),
        unfinished,
    }
}

/// Which scenario each iteration runs (by weight: a smooth weighted round robin, so the
/// shares hold over any stretch of the run), its row, and whether it is measured.
struct Plan<'w, 'a> {
    work: &'w [Work<'a>],
    /// The iterations so far (the next one's `load.iteration`).
    sequence: u64,
    /// Each scenario's credit in the round robin, and its iterations so far (its next row).
    credit: Vec<f64>,
    uses: Vec<u64>,
    measure_from: Instant,
}

impl<'w, 'a> Plan<'w, 'a> {
    fn new(work: &'w [Work<'a>], measure_from: Instant) -> Self {
        Plan {
            work,
            sequence: 0,
            credit: vec![0.0; work.len()],
            uses: vec![0; work.len()],
            measure_from,
        }
    }

    /// The next iteration's work, due at `due` on `client`; `claimed` counts it when it is
    /// measured. Also its `load` template variable.
    fn next(
        &mut self,
        due: Instant,
        claimed: &mut u64,
        client: usize,
    ) -> (&'w Work<'a>, bool, serde_json::Value) {
        let total: f64 = self.work.iter().map(|w| w.weight).sum();
        let mut pick = 0;
        for (i, w) in self.work.iter().enumerate() {
            self.credit[i] += w.weight;
            if self.credit[i] > self.credit[pick] {
                pick = i;
            }
        }
        self.credit[pick] -= total;
        let w = &self.work[pick];
        let row =
            (!w.rows.is_empty()).then(|| &w.rows[(self.uses[pick] % w.rows.len() as u64) as usize]);
        self.uses[pick] += 1;
        let vars = crate::language::dsl::workload::vars(self.sequence, client, row);
        self.sequence += 1;
        let measured = due >= self.measure_from;
        *claimed += u64::from(measured);
        (w, measured, vars)
    }
}

/// Where and when an iteration runs.
struct At {
    /// When it was due (open loop) or began (closed loop).
    due: Instant,
    client: usize,
    stage: Option<usize>,
    measured: bool,
}

/// One iteration: on `conn`, or on a connection opened for it.
#[allow(
    clippy::too_many_arguments,
    reason = "one iteration: what, on what, when, and the run's shared state"
)]
async fn iteration<'a>(
    work: &'a Work<'a>,
    conn: Option<Connection>,
    at: At,
    open_loop: bool,
    vars: serde_json::Value,
    think: Duration,
    era: &'a Era,
    config: &'a RunConfig,
    (pool, shared): (&'a Pool, Option<&'a SharedProcess>),
) -> Done<'a> {
    let polled = Instant::now();
    let conn = match conn {
        Some(conn) => Ok(conn),
        // A connection is the client of the scenario that opened it (its `client:`),
        // for the iterations it runs after.
        None => {
            let answerer = engine::client_answerer(work.scenario, &config.params);
            match shared {
                Some(shared) => shared.connect(answerer).await,
                None => {
                    Connection::open_as(&config.target, &era.label, &era.request, answerer).await
                }
            }
        }
    };
    let began = Instant::now();
    let (conn, results) = match conn {
        Ok(mut conn) => {
            let results =
                engine::iterate(work.scenario, &work.steps, &mut conn, config, pool, vars).await;
            (Ok(conn), results)
        }
        Err(e) => (Err(e), Vec::new()),
    };
    let finished = Instant::now();
    if !think.is_zero() && conn.is_ok() {
        // The client thinks before its next iteration (not part of this one's latency).
        tokio::time::sleep(think).await;
    }
    Done {
        work,
        client: at.client,
        stage: at.stage,
        conn,
        results,
        // Open loop: from when it was due, so a server that falls behind shows its queue
        // (less the timer's own tick).
        from: if open_loop {
            polled.min(at.due + TIMER_TICK)
        } else {
            began
        },
        finished,
        measured: at.measured,
    }
}

/// Record a finished iteration (when it counts); its connection back for the next one, or
/// none when it broke or a step met a transport error: the next iteration opens another,
/// and a server that is gone ends the run there (see [`run`]).
fn take(
    done: Done<'_>,
    recorder: &mut Recorder,
    measure_from: Instant,
) -> Result<Option<Connection>, ConnectError> {
    let conn = done.conn?;
    let steps: Vec<_> = done
        .work
        .steps
        .iter()
        .zip(&done.results)
        .filter(|(_, r)| !matches!(r.outcome, Outcome::Skipped { .. }))
        .map(|(step, r)| {
            let (method, tool) = labels(step);
            StepSample {
                name: step.name.as_str(),
                method,
                tool,
                // The request's own time (its exchanges), not its judging.
                latency: r.exchanged.unwrap_or(r.duration),
                error: error_of(r, step.expects.is_empty()),
            }
        })
        .collect();
    let suspect = steps
        .iter()
        .any(|s| matches!(s.error, Some((ErrorKind::Transport, _))));
    if done.measured && steps.is_empty() {
        // Nothing ran: the scenario does not apply to this connection (its eras, its
        // `requires`), as `run` would report it.
        let why = done.results.iter().find_map(|r| match &r.outcome {
            Outcome::Skipped { reason } => Some(reason.clone()),
            _ => None,
        });
        recorder.skipped(&done.work.scenario.id, why);
    } else if done.measured {
        recorder.record(Iteration {
            stage: done.stage,
            ended_at: done.finished.saturating_duration_since(measure_from),
            latency: done.finished.saturating_duration_since(done.from),
            scenario: &done.work.scenario.id,
            steps,
        });
    }
    if suspect || conn.is_broken() {
        // Dropped: its socket or server process ends with it.
        return Ok(None);
    }
    Ok(Some(conn))
}

/// The method a step sends, and the tool it calls (when written out, not a template).
fn labels(step: &crate::language::dsl::Step) -> (Option<&str>, Option<&str>) {
    match &step.action {
        crate::language::dsl::Action::Request { method, params, .. } => {
            let tool = (method == crate::protocol::methods::TOOLS_CALL)
                .then(|| params.as_ref()?.get("name")?.as_str())
                .flatten()
                .filter(|name| !name.contains("{{"));
            (Some(method.as_str()), tool)
        }
        _ => (None, None),
    }
}
