//! The warm-server pool: over stdio, scenarios that can share a server process run one
//! after another on the same warm process instead of each starting its own (a real
//! server takes 0.2–2 s to start; most probes take milliseconds).
//!
//! The isolation model, as test runners do it (nextest isolates processes; Playwright
//! shares the browser and isolates the context):
//!
//! - **What is shared**: one server process per era label (`legacy`, `2026-07-28`, …),
//!   handed from one scenario to the next, never to two at once. In the legacy era the
//!   process is the session, so a shared process is a shared session. Each scenario gets
//!   the connection as the opening left it ([`Connection::begin_reuse`]): the handshake
//!   and its wire verdicts, no transcript, tool list or server requests of the scenario
//!   before.
//! - **Who shares**: a scenario whose steps only read (requests in
//!   [`crate::protocol::methods::READ_ONLY`], read-only built-in checks, `fresh` raw
//!   messages, which go to a process of their own anyway, `tools/call` of named tools
//!   that declare `readOnlyHint: true` and not `openWorldHint: true`: see
//!   [`share_read_only_calls`]), or whose author says `fresh: false` (the scenario's key,
//!   else its pack's).
//! - **Who is a warm process's last user** ([`Need::Last`]): a scenario that may change
//!   state — `fresh: true`, `exclusive: true`, any step that may write (a `tools/call` of a
//!   tool not declared read-only, `logging/setLevel`, a raw message…) without
//!   `fresh: false`. It shares with nobody,
//!   but it need not start a process either: it waits until no sharing scenario of its
//!   era still needs the era's warm process, takes it, and the process is stopped after
//!   it. It finds the process as the sharing scenarios left it — by their steps or their
//!   author's word (`fresh: false`), unchanged — and nobody sees what it changed. When no
//!   warm process of its era is idle then (or there never was one), it starts its own.
//! - **Who gets a process started for it**: a scenario that calls `list_change_tool`
//!   (when set), one that tests the connection's life (sends `initialize`, ends its
//!   session), one that declares a `client:` outside the modern era (its capabilities are
//!   the session's), and every scenario under `--fresh`. A modern `client:` travels with
//!   each request: that scenario shares, and the process answers as its client while it
//!   holds it.
//! - **Probes that disturb a process** (the parse-error checks' cut-short request): the
//!   scenario shares, after its era's other sharing scenarios ([`Need::SharedLate`]), and
//!   the probe takes a warm idle process that no sharing scenario needs any more
//!   ([`Pool::take_spare`]), else starts one; either way it is stopped after the probe.
//! - **What a scenario leaves in the pipe stays its own**: before a process is handed on
//!   ([`Pool::give_back`]), what the server wrote after the scenario's last reply — a
//!   non-JSON line, a stale duplicate reply, a late notification, its exit — is read
//!   ([`Connection::settle_for_handover`]): one harmless request (`ping`, modern
//!   `server/discover`), whose answer comes after everything written before it (stdio is
//!   ordered), so a clean server costs one round trip and no fixed wait. What was read goes
//!   to the transcript of that scenario's last step, unjudged: on a process of its own
//!   (`--fresh`) nothing would have read it, and verdicts are the same either way. What a
//!   server sends later, on its own time, cannot be told from the next scenario's.
//! - **When a shared process goes wrong**: a process that died (also: just after its last
//!   reply), stopped answering, had a request time out or holds a request open is not
//!   handed on: it is stopped, the next scenario of its era starts a new one, and the
//!   report says so (the run's `servers`, and a note in that scenario's transcript). A
//!   process that does not answer the barrier is stopped too, and from then on its era's
//!   scenarios run on processes of their own (one wait, not one per scenario).
//!
//! Connections a check opens besides its own (a second connection, the other era, the
//! `legacyHandshake` probe) come from the pool too ([`Pool::borrow`]): they only read, so
//! they go back warm. A handshake the target refused in an era (the [`Gate`]) is not
//! tried again, by a scenario or a check.
//!
//! HTTP targets are not pooled: each scenario opens its own connection (a legacy session
//! of its own) as before; there is no process to start.

mod lanes;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::language::dsl::Scenario;
use crate::language::dsl::document::check::LIST_CHANGE_TOOL;
use crate::protocol::era::EraRequest;
use crate::results::exchange::TranscriptEntry;
use crate::run::client::connection::Handover;
use crate::run::client::{ConnectError, ConnectErrorKind, Connection, Target};

use lanes::Lane;

/// Which process an item runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// A warm process of its era, shared one scenario at a time.
    Shared,
    /// Shared too, but after its era's other sharing scenarios: a step's probe disturbs a
    /// process of its own, which can then be a warm one nobody needs any more.
    SharedLate,
    /// A process nobody uses after it (it may change state; the reason): its era's warm
    /// process once no sharing scenario of the era still needs it, else one of its own.
    Last(String),
    /// One of its own, started for it (the reason).
    Own(String),
}

impl Need {
    /// Whether the item may run on a process of the pool.
    pub fn pooled(&self) -> bool {
        !matches!(self, Need::Own(_))
    }
}

/// Where `scenario` runs in `era`: see the module's isolation model. `param_set` says
/// whether a run parameter has a value.
pub fn need(
    scenario: &Scenario,
    era: &EraRequest,
    param_set: impl Fn(&str) -> bool,
    all_fresh: bool,
) -> Need {
    if all_fresh {
        return Need::Own("--fresh".into());
    }
    if scenario.changes_target && param_set(LIST_CHANGE_TOOL) {
        return Need::Own(format!("it calls `{LIST_CHANGE_TOOL}`"));
    }
    if let Some(why) = &scenario.connection_life {
        return Need::Own(why.clone());
    }
    // A legacy client's capabilities are the session's, declared in its `initialize`; a
    // modern one sends them with every request, so its scenario shares like any other and
    // answers as its own client while it holds the process.
    if scenario.client.is_some() && !matches!(era, EraRequest::Modern(_)) {
        return Need::Own("it declares a client of its own (`client:`)".into());
    }
    if scenario.fresh == Some(true) {
        return Need::Last("fresh: true".into());
    }
    if scenario.exclusive {
        return Need::Last("exclusive: true".into());
    }
    match (&scenario.writes, scenario.fresh) {
        (Some(why), None) => Need::Last(why.clone()),
        _ if scenario.own_probe => Need::SharedLate,
        _ => Need::Shared,
    }
}

/// Scenarios that may write only by calling tools ([`Scenario::read_calls`]): over
/// stdio, each of the era's tools that declares `readOnlyHint: true` and not
/// `openWorldHint: true` is a read, so a scenario that calls only such tools shares the
/// era's warm process ([`Need::Shared`]) instead of being its last user. The tools are
/// listed once per era, on the process the pool keeps warm for the era's scenarios.
/// Nothing changes when the era cannot be opened or listed, or the scenario says `fresh`
/// or `exclusive`.
pub async fn share_read_only_calls(
    pool: &Pool,
    items: &[super::Item<'_>],
    needs: &mut [Option<Need>],
) {
    if !pool.enabled {
        return;
    }
    let candidate = |item: &super::Item<'_>, need: &Option<Need>| {
        let scenario = item.scenario;
        matches!(
            (
                need,
                &scenario.read_calls,
                scenario.fresh,
                scenario.exclusive
            ),
            (Some(Need::Last(_)), Some(_), None, false)
        )
    };
    // The listing costs a round trip (a whole timeout on a server that hangs): it is made
    // only where it can save a start, for an era with two such scenarios or more (a lone
    // one is the warm process's last user anyway).
    let mut candidates: HashMap<&str, usize> = HashMap::new();
    for (item, need) in items.iter().zip(needs.iter()) {
        if candidate(item, need) {
            *candidates.entry(item.era.label.as_str()).or_default() += 1;
        }
    }
    let mut read_only: HashMap<String, Option<std::collections::HashSet<String>>> = HashMap::new();
    for (item, need) in items.iter().zip(needs.iter_mut()) {
        let scenario = item.scenario;
        let label = &item.era.label;
        if !candidate(item, need) || candidates.get(label.as_str()).is_none_or(|n| *n < 2) {
            continue;
        }
        let Some(calls) = &scenario.read_calls else {
            continue;
        };
        if !read_only.contains_key(label) {
            let tools = match pool.borrow(&pool.target, label, &item.era.request).await {
                Ok(mut conn) => {
                    let tools = conn.tools().await.ok();
                    pool.give_back(conn, "listing the tools' annotations").await;
                    tools.map(|tools| {
                        tools
                            .iter()
                            .filter(|t| crate::protocol::fields::tool_reads_only(t))
                            .filter_map(|t| t.get("name").and_then(|n| n.as_str()))
                            .map(str::to_string)
                            .collect()
                    })
                }
                Err(_) => None,
            };
            read_only.insert(label.clone(), tools);
        }
        if let Some(Some(tools)) = read_only.get(label)
            && calls.iter().all(|c| tools.contains(&**c))
        {
            *need = Some(if scenario.own_probe {
                Need::SharedLate
            } else {
                Need::Shared
            });
        }
    }
}

/// Processes started and reused in a run, for the report.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Scenarios that ran on a process another scenario had used.
    pub warm: usize,
    /// Shared processes stopped because they went wrong (what happened).
    pub replaced: Vec<String>,
}

/// An item's claim on a process of its era's pool, taken when the item is scheduled.
pub enum Lease {
    /// A warm process, idle until now, handed back after the item.
    Warm(Box<Connection>),
    /// None was idle: the item starts one (counted as live already).
    Start,
    /// A warm process nobody needs any more ([`Need::Last`]): it leaves the pool, and
    /// is stopped after the item.
    Last(Box<Connection>),
}

pub struct Pool {
    /// Connection failures that are the target's (see [`Gate`]).
    pub gate: Gate,
    /// Stdio and not `--fresh`: otherwise nothing is kept and every open is new.
    enabled: bool,
    /// The target every pooled process is opened with: the run's, validating the wire
    /// when any sharing scenario reads it (a process serves them all).
    pub target: Target,
    lanes: Mutex<HashMap<String, Lane>>,
    stats: Mutex<Stats>,
    /// What each scenario's connection received of the notifications bound to a capability
    /// its server did not declare ([`Pool::record_seen`]), for the run's
    /// undeclared-capability judgements.
    seen: Mutex<Vec<SeenOn>>,
}

/// The notifications bound to a capability that a scenario's connection received while
/// its server had not declared that capability.
#[derive(Clone, Debug)]
pub struct SeenOn {
    /// Whose connection received them (``scenario `id@era` ``).
    pub item: String,
    /// The era the connection negotiated (each era's judgement reads its own).
    pub kind: crate::protocol::era::EraKind,
    /// By method, with the capability it needed (only those not declared).
    pub undeclared: Vec<(&'static str, &'static str, crate::run::client::LogsSeen)>,
}

impl Pool {
    pub fn new(target: &Target, all_fresh: bool, wire_validation: bool) -> Pool {
        Pool {
            gate: Gate::default(),
            enabled: !target.is_http() && !all_fresh,
            target: Target {
                wire_validation: target.wire_validation || wire_validation,
                ..target.clone()
            },
            lanes: Mutex::default(),
            stats: Mutex::default(),
            seen: Mutex::default(),
        }
    }

    /// A scenario (`item`) is done with `conn`: what it received of the notifications
    /// bound to a capability the connection's server did not declare is kept for the
    /// run's undeclared-capability judgements, and the connection starts from nothing for
    /// the next scenario on its process.
    pub fn record_seen(&self, item: &str, conn: &mut Connection) {
        let seen = conn.take_seen();
        let capabilities = &conn.negotiated.capabilities;
        let undeclared: Vec<_> = seen
            .by_method
            .into_iter()
            .filter_map(|(method, seen)| {
                let (_, capability) = crate::protocol::methods::CAPABILITY_BOUND
                    .iter()
                    .find(|(m, _)| *m == method)?;
                (!crate::language::dsl::scenario::capability_declared(capabilities, capability))
                    .then_some((method, *capability, seen))
            })
            .collect();
        if undeclared.is_empty() {
            return;
        }
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(SeenOn {
                item: format!("scenario `{item}`"),
                kind: conn.negotiated.kind,
                undeclared,
            });
    }

    /// What the run's other scenarios' connections of era `kind` received without the
    /// capability declared, so far (a judging scenario runs after all the others).
    pub fn seen_in(&self, kind: crate::protocol::era::EraKind) -> Vec<SeenOn> {
        self.seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|s| s.kind == kind)
            .cloned()
            .collect()
    }

    /// Whether processes are shared at all (stdio, no `--fresh`).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn lanes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Lane>> {
        self.lanes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A connection leased or borrowed from `era`'s lane is done: kept warm when it can be
    /// handed on, else stopped (and reported, with what it was doing: `during`). First,
    /// what the server wrote after the last reply is read
    /// ([`Connection::settle_for_handover`]): returned, for the transcript of the scenario
    /// whose requests caused it (empty when there was nothing).
    pub async fn give_back(&self, mut conn: Connection, during: &str) -> Vec<TranscriptEntry> {
        let era = conn.negotiated.requested.clone();
        if !self.enabled || self.unshared(&era) {
            if self.enabled {
                self.forget_live(&era);
            }
            conn.close().await;
            return Vec::new();
        }
        let (why, unanswered, transcript) = match conn.settle_for_handover().await {
            Handover::Clean => (None, false, Vec::new()),
            Handover::Drained(transcript) => (None, false, transcript),
            Handover::Spent {
                why,
                unanswered,
                transcript,
            } => (Some(why), unanswered, transcript),
        };
        let Some(why) = why else {
            conn.begin_reuse();
            self.lanes().entry(era).or_default().idle.push(conn);
            return transcript;
        };
        let next = if unanswered {
            "its scenarios run on processes of their own from now on"
        } else {
            "the next scenario started a new one"
        };
        let what =
            format!("the shared server process ({era}) was stopped after {during}: {why}; {next}");
        {
            let mut lanes = self.lanes();
            let lane = lanes.entry(era).or_default();
            lane.live = lane.live.saturating_sub(1);
            lane.replaced = Some(what.clone());
            if unanswered {
                lane.unshared = true;
            }
        }
        self.stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replaced
            .push(what);
        conn.close().await;
        transcript
    }

    /// A connection a check needs besides its own (same target, `era`): a warm idle one,
    /// else a new one. Give it back with [`Pool::give_back`].
    pub async fn borrow(
        &self,
        target: &Target,
        label: &str,
        era: &EraRequest,
    ) -> Result<Connection, ConnectError> {
        // A handshake the target refused in this era is not tried again.
        if let Some((kind, message)) = self.gate.known(label) {
            return Err(ConnectError {
                kind,
                message,
                stderr_tail: None,
                transcript: Vec::new(),
                // Only a refusal is remembered for its era alone.
                refused: kind == ConnectErrorKind::Protocol,
            });
        }
        let target = if self.enabled { &self.target } else { target };
        // Counted as live when it is started for the lane (given back, it is settled then).
        let pooled = self.enabled && !self.unshared(label);
        if pooled {
            let claim = self.lanes().entry(label.to_string()).or_default().claim();
            if let Lease::Warm(conn) = claim {
                self.count_warm();
                return Ok(*conn);
            }
        }
        let opened = Connection::open(target, label, era).await;
        if let Err(e) = &opened {
            self.gate.remember(label, e);
            if pooled {
                self.start_failed(label);
            }
        }
        opened
    }

    /// Stop every idle process (the end of the run), all at once.
    pub async fn drain(&self) {
        let idle: Vec<Connection> = self
            .lanes()
            .values_mut()
            .flat_map(|l| {
                l.live = l.live.saturating_sub(l.idle.len());
                std::mem::take(&mut l.idle)
            })
            .collect();
        futures::future::join_all(idle.into_iter().map(Connection::close)).await;
    }

    pub fn stats(&self) -> Stats {
        self.stats.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Connection failures that are the target's, not a scenario's: once one is known, later
/// items do not try again (an unreachable target is reported once, not waited for per
/// scenario). Unreachable and authentication failures hold for every era; a refused
/// handshake for its era only.
#[derive(Default)]
pub struct Gate {
    failed: std::sync::Mutex<Vec<(Option<String>, ConnectErrorKind, String)>>,
}

impl Gate {
    /// The failure already known for connections in this era.
    pub fn known(&self, era: &str) -> Option<(ConnectErrorKind, String)> {
        let failed = self.failed.lock().ok()?;
        failed
            .iter()
            .find(|(e, _, _)| e.as_deref().is_none_or(|e| e == era))
            .map(|(_, kind, message)| (*kind, message.clone()))
    }

    pub fn remember(&self, era: &str, e: &ConnectError) {
        let (kind, message) = (e.kind, &e.message);
        let refused = e.refused();
        let scope = match kind {
            ConnectErrorKind::Unreachable | ConnectErrorKind::Auth => None,
            ConnectErrorKind::Protocol if refused => Some(era.to_string()),
            // A server process that did not start may start next time (stdio).
            ConnectErrorKind::Protocol | ConnectErrorKind::Start => return,
        };
        if let Ok(mut failed) = self.failed.lock()
            && !failed.iter().any(|(e, k, _)| *e == scope && *k == kind)
        {
            failed.push((scope, kind, message.to_string()));
        }
    }
}

/// How long the run's server starts took, from the process-wide counters before and after.
pub fn starts_since(before: (u64, Duration)) -> (u64, Duration) {
    let now = crate::run::client::connection::starts();
    (
        now.0.saturating_sub(before.0),
        now.1.saturating_sub(before.1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str, steps: &str) -> Scenario {
        let text = format!("scenario: s\neras: [2026-07-28]\n{extra}steps:\n{steps}");
        crate::language::dsl::parse_scenario(crate::ground::source::SourceFile::new("s.yaml", text))
            .expect("the scenario loads")
    }

    fn need_of(extra: &str, steps: &str) -> Need {
        need(
            &scenario(extra, steps),
            &EraRequest::Legacy,
            |_| false,
            false,
        )
    }

    const LIST: &str = "  - name: list\n    request: { method: tools/list }\n";
    const CALL: &str =
        "  - name: call\n    request: { method: tools/call, params: { name: echo } }\n";

    #[test]
    fn readers_share_and_writers_are_last_users_unless_they_opt_in() {
        assert_eq!(need_of("", LIST), Need::Shared);
        assert_eq!(
            need_of("", CALL),
            Need::Last("step `call` sends `tools/call`".into())
        );
        assert_eq!(need_of("fresh: false\n", CALL), Need::Shared);
        assert_eq!(
            need_of("fresh: true\n", LIST),
            Need::Last("fresh: true".into())
        );
        assert_eq!(
            need_of("exclusive: true\nfresh: false\n", LIST),
            Need::Last("exclusive: true".into())
        );
        let parse = "  - name: parse\n    check: { kind: parse_error_answered }\n";
        assert_eq!(need_of("", parse), Need::SharedLate);
        assert_eq!(
            need_of("fresh: true\n", parse),
            Need::Last("fresh: true".into())
        );
        assert_eq!(
            need(&scenario("", LIST), &EraRequest::Legacy, |_| false, true),
            Need::Own("--fresh".into())
        );
    }

    #[test]
    fn a_scenario_that_declares_a_client_gets_its_own() {
        let client = "fresh: false\nclient:\n  capabilities: {roots: {}}\n  roots: [{uri: \"file:///tmp\"}]\n";
        assert_eq!(
            need_of(client, LIST),
            Need::Own("it declares a client of its own (`client:`)".into())
        );
        let modern = EraRequest::Modern("2026-07-28".into());
        assert_eq!(
            need(&scenario(client, LIST), &modern, |_| false, false),
            Need::Shared,
            "a modern client's capabilities travel with each request"
        );
    }

    #[test]
    fn connection_life_and_the_change_tool_always_get_their_own() {
        let init = "  - name: again\n    request: { method: initialize }\n";
        assert_eq!(
            need_of("fresh: false\n", init),
            Need::Own("step `again` sends `initialize`".into())
        );
        let change = "  - name: change\n    requires: { parameters: [list_change_tool] }\n    request: { method: tools/call, params: { name: \"{{ list_change_tool }}\" } }\n";
        let s = scenario("fresh: false\n", change);
        assert_eq!(
            need(&s, &EraRequest::Legacy, |_| false, false),
            Need::Shared
        );
        assert_eq!(
            need(&s, &EraRequest::Legacy, |p| p == LIST_CHANGE_TOOL, false),
            Need::Own("it calls `list_change_tool`".into())
        );
        // A raw message over a fresh connection of its own leaves the shared one alone.
        let fresh_raw = "  - name: raw\n    raw: { fresh: true, body: { jsonrpc: \"2.0\", id: 1, method: initialize } }\n";
        assert_eq!(need_of("", fresh_raw), Need::Shared);
    }
}
