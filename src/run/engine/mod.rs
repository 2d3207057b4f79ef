//! The interpreter: schedules scenario × era items, runs each over its own connection,
//! step by step, and produces the canonical result model.
//!
//! Its modules in layers, bottom up (a module imports only from its own layer or a lower one; `tests/layers.rs`):
//!
//! 0. `applies`, `failure`, `mrtr`, `pool`, `running`, `security`, `suite`, `tasks`
//! 1. `checks`, `judge`
//! 2. `send`
//! 3. `step`

mod applies;
mod checks;
mod failure;
mod judge;
mod mrtr;
pub mod pool;
mod running;
pub mod security;
mod send;
mod step;
mod suite;
mod tasks;

pub use checks::ToolCalls;

use applies::{era_mismatch, era_refused_unmet};
use std::time::Instant;
use suite::{finished, kind_name, skeleton, skipped};

use crate::language::dsl::Scenario;
use crate::protocol::era::Era;
use crate::results::report::events::{Event, Events, ItemEvents, RunInfo};
use crate::results::report::result::{INTERRUPTED, RunReport, ServerStats, SuiteResult, Summary};
use crate::run::client::{ConnectErrorKind, Connection, Target};

/// What a run needs besides the scenarios.
pub struct RunConfig {
    pub target: Target,
    /// `--era` values; empty: each scenario's own eras, or `auto`.
    pub eras: Vec<Era>,
    pub jobs: usize,
    /// `--set` parameters: template variables in every scenario (they win over `vars`).
    pub params: serde_json::Map<String, serde_json::Value>,
    /// Keep the transcripts of steps that passed or were skipped in the returned report
    /// once their suite has been emitted (the JSON report shows them). Without it nothing
    /// reads them afterwards (JUnit is written as the suites come), so dropping them keeps
    /// memory flat on large runs.
    pub keep_passing_transcripts: bool,
    /// `--wire-validate`: a wire violation fails the step that received it.
    pub wire_validate: bool,
    /// Tool calls of the run's tool checks, each sent once and its answer shared.
    pub tool_calls: ToolCalls,
    /// `--fresh`: every scenario on a server process of its own (see [`pool`]).
    pub fresh: bool,
    /// Where `snapshot` expectations compare, or write under `--update-snapshots`.
    pub snapshots: std::sync::Arc<crate::language::assert::golden::Snapshots>,
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

/// Run the items with up to `jobs` connections at once, telling `events` as it goes
/// (see [`Event`]); suites are emitted and stored in input order whatever the concurrency.
/// The last event, [`Event::RunFinished`], is the caller's: it has the report to finish.
///
/// When `interrupt` resolves (a signal, with its name), the run stops at once: the suites
/// that finished are kept, every other item becomes an `interrupted` suite, and the report
/// says by what.
pub async fn run(
    items: Vec<Item<'_>>,
    config: &RunConfig,
    interrupt: impl std::future::Future<Output = String>,
    events: &Events<'_>,
) -> RunReport {
    let started = Instant::now();
    let info = RunInfo {
        mcpspec_version: env!("CARGO_PKG_VERSION").to_string(),
        target: config.target.describe(),
        transport: config.target.transport_name().to_string(),
        started_at: now_rfc3339(),
        items: items.len(),
    };
    events.emit(&Event::RunStarted(&info));
    let jobs = config.jobs.max(1);
    // What an interrupted item's suite needs (cheap: the scenario is borrowed).
    let planned: Vec<(&Scenario, Era, usize)> = items
        .iter()
        .map(|i| (i.scenario, i.era.clone(), i.ordinal))
        .collect();
    let mut suites = Vec::with_capacity(items.len());
    // Suites that finished ahead of an earlier one, by index, until their turn (items may
    // start out of order: see below); at hand when a signal stops the run.
    let mut ahead = std::collections::BTreeMap::new();
    // See `run_held`.
    let target_hold = tokio::sync::RwLock::new(());
    let mut needs: Vec<Option<pool::Need>> = items
        .iter()
        .map(|item| {
            let s = item.scenario;
            // Skipped without connecting: no process at all.
            let skipped = s
                .requires
                .transport_unmet(config.target.is_http())
                .is_some()
                || security::static_unmet(&s.requires, &config.target, &config.params).is_some();
            let param_set =
                |name: &str| config.params.contains_key(name) || s.params.contains_key(name);
            (!skipped).then(|| pool::need(s, &item.era.request, param_set, config.fresh))
        })
        .collect();
    let wire = config.wire_validate
        || items
            .iter()
            .zip(&needs)
            .any(|(i, n)| i.scenario.wire_check && n.as_ref().is_some_and(pool::Need::pooled));
    let pool = pool::Pool::new(&config.target, config.fresh, wire);
    let starts_before = crate::run::client::connection::starts();
    pool::share_read_only_calls(&pool, &items, &mut needs).await;
    // Items that judge what the others' connections received (the undeclared-capability
    // checks) start once every other item has finished; the era's other items do not wait
    // for them (they are not expected on its warm process).
    let judging: Vec<bool> = items.iter().map(|i| i.scenario.judges_run).collect();
    let mut others_left = judging.iter().filter(|j| !**j).count();
    for ((item, need), judges) in items.iter().zip(&needs).zip(&judging) {
        if !judges {
            pool.expect(&item.era.label, need.as_ref());
        }
    }
    // Items waiting to start, in input order. A shared item starts when its era's warm
    // process is idle (or none is alive yet): it does not start a second process while
    // the first is busy with another scenario; meanwhile later items start, so the eras
    // (and the items with a process of their own) run side by side. An item that may
    // change state waits until no sharing item of its era needs the warm process, and
    // takes it (see `pool::Pool::ready`).
    let mut waiting: std::collections::VecDeque<(usize, Item<'_>)> =
        items.into_iter().enumerate().collect();
    let mut running = running::Running::new();
    let mut interrupt = std::pin::pin!(interrupt);
    let mut interrupted = None;
    // `--sandbox`: the tools whose answers show a failed connection (see `finished`).
    let mut reached_out = indexmap::IndexMap::new();
    loop {
        while running.len() < jobs {
            let may_start = |i: usize| !judging[i] || others_left == 0;
            let next = waiting
                .iter()
                .position(|(i, item)| {
                    may_start(*i) && pool.ready(&item.era.label, needs[*i].as_ref())
                })
                // Nothing else runs, so nothing will be handed back: take the first.
                .or_else(|| {
                    running
                        .is_empty()
                        .then(|| waiting.iter().position(|(i, _)| may_start(*i)))
                        .flatten()
                });
            let Some((i, item)) = next.and_then(|n| waiting.remove(n)) else {
                break;
            };
            let lease = pool.lease(&item.era.label, needs[i].as_ref());
            running.push(run_held(
                i,
                item,
                config,
                &target_hold,
                &pool,
                lease,
                events,
            ));
        }
        let next = tokio::select! {
            biased;
            why = &mut interrupt => {
                interrupted = Some(why);
                break;
            }
            next = running.next() => next,
        };
        let Some((i, suite)) = next else { break };
        if !judging[i] {
            others_left -= 1;
        }
        ahead.insert(i, suite);
        while let Some(suite) = ahead.remove(&suites.len()) {
            suites.push(finished(suite, config, events, &mut reached_out));
        }
    }
    drop(running);
    pool.drain().await;
    if let Some(why) = &interrupted {
        for (i, (scenario, era, ordinal)) in planned.iter().enumerate().skip(suites.len()) {
            // Finished ahead of an unfinished one: still a result, shown as such.
            if let Some(suite) = ahead.remove(&i) {
                suites.push(finished(suite, config, events, &mut reached_out));
                continue;
            }
            let mut suite = skeleton(scenario, era, *ordinal);
            suite.setup_error = Some(format!("interrupted ({why}) before this scenario finished"));
            suite.setup_error_kind = Some(INTERRUPTED.to_string());
            events.emit(&Event::SuiteInterrupted(&suite));
            suites.push(suite);
        }
    }
    let summary = Summary::from_suites(&suites);
    let (processes, starting) = pool::starts_since(starts_before);
    let stats = pool.stats();
    let servers = (!config.target.is_http()).then_some(ServerStats {
        started: processes as usize,
        starting,
        warm: stats.warm,
        replaced: stats.replaced,
        sandboxed: config.target.sandboxed(),
        reached_out: reached_out
            .into_iter()
            .map(|(tool, said)| format!("`{tool}`: {said}"))
            .collect(),
    });
    RunReport {
        mcpspec_version: info.mcpspec_version,
        target: info.target,
        transport: info.transport,
        started_at: info.started_at,
        duration: started.elapsed(),
        suites,
        summary,
        stale_entries: Vec::new(),
        interrupted,
        shard: None,
        servers,
        models: Vec::new(),
    }
}

/// [`run_item`] under its hold of the target: every item runs under a shared hold; one
/// that changes what all clients of a shared (HTTP) server see, or that its author marked
/// `exclusive`, under a sole hold: alone, so another scenario does not see its change
/// halfway (a false alarm of the run's own making).
#[allow(
    clippy::too_many_arguments,
    reason = "one item's run: what, how, the run's shared state and where it reports"
)]
async fn run_held<'a>(
    i: usize,
    item: Item<'a>,
    config: &'a RunConfig,
    target_hold: &'a tokio::sync::RwLock<()>,
    pool: &'a pool::Pool,
    lease: Option<pool::Lease>,
    events: &'a Events<'_>,
) -> (usize, SuiteResult) {
    let scenario = item.scenario;
    let alone = scenario.exclusive || (scenario.changes_target && config.target.is_http());
    let (_sole, _shared);
    if alone {
        _sole = target_hold.write().await;
    } else {
        _shared = target_hold.read().await;
    }
    (i, run_item(item, config, pool, lease, events).await)
}

async fn run_item(
    item: Item<'_>,
    config: &RunConfig,
    pool: &pool::Pool,
    mut lease: Option<pool::Lease>,
    events: &Events<'_>,
) -> SuiteResult {
    let era = item.era.label.clone();
    let progress = ItemEvents::start(events, item.id());
    let suite = run_leased(item, config, pool, &mut lease, &progress).await;
    for step in &suite.steps {
        progress.step_finished(step);
    }
    // Skipped before connecting: the claim goes back unused.
    if let Some(lease) = lease {
        pool.unlease(&era, lease);
    }
    suite
}

/// [`run_item`], which takes the `lease` on its era's shared process (if it has one)
/// when it connects.
async fn run_leased(
    item: Item<'_>,
    config: &RunConfig,
    pool: &pool::Pool,
    lease: &mut Option<pool::Lease>,
    progress: &ItemEvents<'_, '_>,
) -> SuiteResult {
    let params = &config.params;
    // A shared process serves every sharing scenario: it is opened the pool's way.
    let target = if lease.is_some() {
        &pool.target
    } else {
        &config.target
    };
    let started = Instant::now();
    let scenario = item.scenario;
    let mut suite = skeleton(scenario, &item.era, item.ordinal);
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
    let target = if !target.wire_validation && (config.wire_validate || scenario.wire_check) {
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
        suite.steps = skipped(&steps, &why);
        suite.duration = started.elapsed();
        return suite;
    }
    if let Some((kind, message)) = pool.gate.known(&item.era.label) {
        // (Known for this era alone only when refused: see `pool::Gate`.)
        if kind == ConnectErrorKind::Protocol
            && let Some(why) = era_refused_unmet(scenario, &item.era, &message)
        {
            suite.steps = skipped(&steps, &why);
            suite.duration = started.elapsed();
            return suite;
        }
        suite.setup_error = Some(message);
        suite.setup_error_kind = Some(kind_name(kind).to_string());
        suite.duration = started.elapsed();
        return suite;
    }
    let opened = match lease.take() {
        // A warm process answers as this scenario's client (modern: see `pool::need`).
        Some(pool::Lease::Warm(mut conn)) => {
            pool.count_warm();
            conn.answer_as(client_answerer(scenario, params));
            Ok((*conn, true))
        }
        // Nobody needs it after this item: it is stopped, not handed back.
        Some(pool::Lease::Last(mut conn)) => {
            pool.count_warm();
            conn.answer_as(client_answerer(scenario, params));
            Ok((*conn, false))
        }
        leased => {
            let answerer = client_answerer(scenario, params);
            let opened =
                Connection::open_as(target, &item.era.label, &item.era.request, answerer).await;
            if opened.is_err() && matches!(leased, Some(pool::Lease::Start)) {
                pool.start_failed(&item.era.label);
            }
            opened.map(|conn| (conn, matches!(leased, Some(pool::Lease::Start))))
        }
    };
    match opened {
        Err(e) => {
            pool.gate.remember(&item.era.label, &e);
            match era_refused_unmet(scenario, &item.era, &e.message).filter(|_| e.refused()) {
                Some(why) => suite.steps = skipped(&steps, &why),
                None => {
                    suite.setup_error = Some(e.message.clone());
                    suite.setup_error_kind = Some(kind_name(e.kind).to_string());
                    suite.stderr_tail = e.stderr_tail;
                }
            }
        }
        Ok((mut conn, shared)) => {
            let n = &conn.negotiated;
            suite.era.negotiated = Some(n.revision.clone());
            suite.era.era = Some(n.kind.as_str().to_string());
            suite.era.note = n.note.clone();
            conn.take_log();
            conn.mark_started().await;
            if let Some(note) = shared
                .then(|| pool.take_replaced_note(&item.era.label))
                .flatten()
            {
                conn.note(note);
            }
            let mismatch = match era_mismatch(scenario, &conn) {
                Some(why) => Some(why),
                None => step::preconditions::probe_unmet(&scenario.requires, &mut conn, pool).await,
            };
            // The pack's parameter values join `--set`'s (they already include its overrides).
            let params = if scenario.params.is_empty() {
                std::borrow::Cow::Borrowed(params)
            } else {
                let mut merged = params.clone();
                merged.extend(scenario.params.clone());
                std::borrow::Cow::Owned(merged)
            };
            let revision = conn.negotiated.revision.clone();
            let run = step::ScenarioRun::new(scenario, &steps, &mut conn, &params, config, pool)
                .skipping(mismatch)
                .run(progress);
            suite.steps = failure::at_revision(&revision, run).await;
            suite.stderr_tail = conn.stderr_tail().await;
            // For the run's undeclared-capability judgements (they run after this).
            pool.record_seen(&item.id(), &mut conn);
            if shared {
                // What the server wrote after the last reply is this scenario's.
                let leftovers = pool.give_back(conn, &format!("`{}`", item.id())).await;
                if let Some(last) = suite.steps.last_mut() {
                    last.transcript.extend(leftovers);
                }
            } else {
                conn.close().await;
            }
        }
    }
    suite.duration = started.elapsed();
    suite
}

/// The scenario's `client:` with its template context (the run's and the pack's
/// parameters, the scenario's `vars` as far as they render now), if it declares one.
pub(crate) fn client_answerer(
    scenario: &Scenario,
    params: &serde_json::Map<String, serde_json::Value>,
) -> Option<std::sync::Arc<crate::run::client::answers::Answerer>> {
    let script = scenario.client.clone()?;
    let mut ctx = params.clone();
    ctx.extend(scenario.params.clone());
    for (name, value) in &scenario.vars {
        let ctx_value = serde_json::Value::Object(ctx.clone());
        if let Ok(v) = crate::language::dsl::template::render_value(value, &ctx_value) {
            ctx.entry(name.clone()).or_insert(v);
        }
    }
    let answerer = crate::run::client::answers::Answerer::new(script, ctx.into());
    Some(std::sync::Arc::new(answerer))
}

/// One iteration of `scenario` (its compiled `steps`) on an open connection, for
/// `mcpspec load`: the run's own step runner and judges, so every reply under load is
/// judged as in a run; the step results only (no suite, no events). A scenario whose
/// eras or `requires` the connection does not meet has its steps skipped, as in a run.
/// `load_vars` is the template variable `load` of the iteration.
pub async fn iterate(
    scenario: &Scenario,
    steps: &[crate::language::dsl::Step],
    conn: &mut Connection,
    config: &RunConfig,
    pool: &pool::Pool,
    load_vars: serde_json::Value,
) -> Vec<crate::results::report::result::StepResult> {
    let mut params = config.params.clone();
    params.extend(scenario.params.clone());
    // The iteration's own values (`load.iteration`, `load.client`, `load.row`).
    params.insert(crate::language::dsl::workload::VAR.into(), load_vars);
    let events = Events::none();
    let progress = ItemEvents::start(&events, scenario.id.clone());
    let revision = conn.negotiated.revision.clone();
    let unmet = era_mismatch(scenario, conn);
    let run = step::ScenarioRun::new(scenario, steps, conn, &params, config, pool)
        .skipping(unmet)
        .run(&progress);
    failure::at_revision(&revision, run).await
}

pub fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
