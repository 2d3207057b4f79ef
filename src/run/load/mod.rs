//! `mcpspec load`: scenarios as a workload. Iterations of the selected scenarios start on
//! a schedule (a fixed rate) or as virtual clients finish their last one; each runs the
//! scenario's steps through the engine's step runner ([`engine::iterate`]), so every
//! reply is judged as in a run, and is recorded ([`record`]) after the warm-up. Budgets
//! ([`budget`]) judge the numbers.
//!
//! Connections are held like a real client's: one per virtual client (closed loop) or
//! one per iteration in flight (open loop), each opened once (a legacy session is
//! initialized once) and reused; over stdio each is a server process. A connection that
//! broke is replaced; when no new one can be opened the run ends there, with what it
//! measured and why it ended.
//!
//! The generator is one task on one thread: the iterations in flight are polled together,
//! so a slow reply never holds up the schedule.

pub mod budget;
pub mod profile;
pub mod record;

use std::future::Future;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use crate::language::dsl::{Scenario, Steps};
use crate::protocol::era::Era;
use crate::results::report::result::{Outcome, StepResult};
use crate::run::client::{ConnectError, Connection};
use crate::run::engine::{self, RunConfig, pool::Pool};

use profile::{Length, Pace, Profile};
use record::{ErrorKind, Iteration, Recorder, error_of};

/// One scenario of the workload, its steps compiled once for every iteration.
pub struct Work<'a> {
    pub scenario: &'a Scenario,
    pub steps: Steps<'a>,
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
    /// Iterations in flight when the run ended, or due (open loop) and not started: a
    /// server that falls behind leaves many.
    pub unfinished: u64,
}

/// An iteration that finished (or whose connection could not be opened).
struct Done<'a> {
    work: &'a Work<'a>,
    conn: Result<Connection, ConnectError>,
    results: Vec<StepResult>,
    /// When it was due (open loop) or began (closed loop).
    from: Instant,
    finished: Instant,
    measured: bool,
}

/// Run `work` against `config.target` in `era` per `profile`, until the profile's end or
/// `interrupt` resolves (with the signal's name).
pub async fn run(
    work: &[Work<'_>],
    era: &Era,
    config: &RunConfig,
    profile: &Profile,
    interrupt: impl Future<Output = String>,
) -> Measured {
    let pool = Pool::new(&config.target, true, config.wire_validate);
    let start = Instant::now();
    let measure_from = start + profile.warmup;
    let deadline = match profile.length {
        Length::Duration(d) => Some(measure_from + d),
        Length::Iterations(_) => None,
    };
    let period = match profile.pace {
        Pace::Rate(r) => Some(Duration::from_secs_f64(1.0 / r)),
        Pace::Clients(_) => None,
    };
    let in_flight = profile.in_flight();
    let mut idle: Vec<Connection> = Vec::new();
    let mut running = FuturesUnordered::new();
    let mut next_due = start;
    // Measured iterations started.
    let mut claimed = 0u64;
    let mut recorder = Recorder::default();
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
    let mut plan = Plan {
        work,
        sequence: 0,
        measure_from,
    };
    loop {
        if period.is_none() {
            while may_start(claimed) && running.len() < in_flight {
                let now = Instant::now();
                let (w, measured) = plan.next(now, &mut claimed);
                running.push(iteration(
                    w,
                    idle.pop(),
                    now,
                    false,
                    measured,
                    era,
                    config,
                    &pool,
                ));
            }
        }
        if !may_start(claimed) && running.is_empty() {
            ended = (format!("{claimed} iterations run"), false);
            break;
        }
        let due = (period.is_some() && may_start(claimed) && running.len() < in_flight)
            .then_some(next_due);
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
            Some(done) = running.next(), if !running.is_empty() => {
                match take(done, &mut recorder, measure_from) {
                    Ok(Some(conn)) => {
                        connected = true;
                        idle.push(conn);
                    }
                    Ok(None) => connected = true,
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
                let (w, measured) = plan.next(next_due, &mut claimed);
                let conn = idle.pop();
                running.push(iteration(w, conn, next_due, true, measured, era, config, &pool));
                next_due += period.unwrap_or_default();
            }
        }
    }
    let end = Instant::now();
    // Iterations still under way end with the run, unrecorded (they end past its window),
    // but counted, with those an open loop had due and could not start (all in flight).
    let mut unfinished = running.len() as u64;
    if let Some(period) = period.filter(|_| may_start(claimed))
        && next_due <= end
    {
        unfinished += ((end - next_due).as_secs_f64() / period.as_secs_f64()) as u64 + 1;
    }
    drop(running);
    for conn in idle {
        conn.close().await;
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
        unfinished,
    }
}

/// Which scenario each iteration runs (in turn), and whether it is measured.
struct Plan<'w, 'a> {
    work: &'w [Work<'a>],
    sequence: usize,
    measure_from: Instant,
}

impl<'w, 'a> Plan<'w, 'a> {
    /// The next iteration's work, due at `due`; `claimed` counts it when it is measured.
    fn next(&mut self, due: Instant, claimed: &mut u64) -> (&'w Work<'a>, bool) {
        let w = &self.work[self.sequence % self.work.len()];
        self.sequence += 1;
        let measured = due >= self.measure_from;
        *claimed += u64::from(measured);
        (w, measured)
    }
}

/// One iteration: on `conn`, or on a connection opened for it.
#[allow(
    clippy::too_many_arguments,
    reason = "one iteration: what, on what, when, and the run's shared state"
)]
async fn iteration<'a>(
    work: &'a Work<'a>,
    conn: Option<Connection>,
    due: Instant,
    open_loop: bool,
    measured: bool,
    era: &'a Era,
    config: &'a RunConfig,
    pool: &'a Pool,
) -> Done<'a> {
    let conn = match conn {
        Some(conn) => Ok(conn),
        // A connection is the client of the scenario that opened it (its `client:`),
        // for the iterations it runs after.
        None => {
            let answerer = engine::client_answerer(work.scenario, &config.params);
            Connection::open_as(&config.target, &era.label, &era.request, answerer).await
        }
    };
    let began = Instant::now();
    let (conn, results) = match conn {
        Ok(mut conn) => {
            let results =
                engine::iterate(work.scenario, &work.steps, &mut conn, config, pool).await;
            (Ok(conn), results)
        }
        Err(e) => (Err(e), Vec::new()),
    };
    Done {
        work,
        conn,
        results,
        // Open loop: from when it was due, so a server that falls behind shows its queue.
        from: if open_loop { due } else { began },
        finished: Instant::now(),
        measured,
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
            (
                step.name.as_str(),
                r.duration,
                error_of(r, step.expects.is_empty()),
            )
        })
        .collect();
    let suspect = steps
        .iter()
        .any(|(_, _, e)| matches!(e, Some((ErrorKind::Transport, _))));
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
