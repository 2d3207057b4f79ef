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
//!   messages, which go to a process of their own anyway), or whose author says
//!   `fresh: false` (the scenario's key, else its pack's).
//! - **Who gets a process of its own** (started for it, stopped after it): `fresh: true`,
//!   `exclusive: true`, a scenario that calls `list_change_tool` (when set), one that tests
//!   the connection's life (sends `initialize`, ends its session), any other scenario that
//!   may change state (a `tools/call`, `logging/setLevel`, a raw message…) unless it says
//!   `fresh: false`, and every scenario under `--fresh`.
//! - **When a shared process goes wrong**: a process that died, stopped answering, had a
//!   request time out or holds a request open is not handed on: it is stopped, the next
//!   scenario of its era starts a new one, and the report says so (the run's `servers`,
//!   and a note in that scenario's transcript).
//!
//! Connections a check opens besides its own (a second connection, the other era, the
//! `legacyHandshake` probe) come from the pool too ([`Pool::borrow`]): they only read, so
//! they go back warm.
//!
//! HTTP targets are not pooled: each scenario opens its own connection (a legacy session
//! of its own) as before; there is no process to start.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::client::{ConnectError, Connection, Target};
use crate::dsl::Scenario;
use crate::dsl::model::LIST_CHANGE_TOOL;
use crate::era::EraRequest;

/// Which process an item runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// A warm process of its era, shared one scenario at a time.
    Shared,
    /// One of its own (the reason).
    Own(String),
}

/// Where `scenario` runs: see the module's isolation model. `param_set` says whether a
/// run parameter has a value.
pub fn need(scenario: &Scenario, param_set: impl Fn(&str) -> bool, all_fresh: bool) -> Need {
    if all_fresh {
        return Need::Own("--fresh".into());
    }
    if scenario.fresh == Some(true) {
        return Need::Own("fresh: true".into());
    }
    if scenario.exclusive {
        return Need::Own("exclusive: true".into());
    }
    if scenario.changes_target && param_set(LIST_CHANGE_TOOL) {
        return Need::Own(format!("it calls `{LIST_CHANGE_TOOL}`"));
    }
    if let Some(why) = &scenario.connection_life {
        return Need::Own(why.clone());
    }
    match (&scenario.writes, scenario.fresh) {
        (Some(why), None) => Need::Own(why.clone()),
        _ => Need::Shared,
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

/// An item's claim on its era's shared process, taken when the item is scheduled.
pub enum Lease {
    /// A warm process, idle until now.
    Warm(Box<Connection>),
    /// None was idle: the item starts one (counted as live already).
    Start,
}

#[derive(Default)]
struct Lane {
    idle: Vec<Connection>,
    /// Processes of this era alive: idle, leased or being started.
    live: usize,
    /// Why the last shared process of this era was replaced (told to the next scenario).
    replaced: Option<String>,
}

pub struct Pool {
    /// Stdio and not `--fresh`: otherwise nothing is kept and every open is new.
    enabled: bool,
    /// The target every pooled process is opened with: the run's, validating the wire
    /// when any sharing scenario reads it (a process serves them all).
    pub target: Target,
    lanes: Mutex<HashMap<String, Lane>>,
    stats: Mutex<Stats>,
}

impl Pool {
    pub fn new(target: &Target, all_fresh: bool, wire_validation: bool) -> Pool {
        Pool {
            enabled: !target.is_http() && !all_fresh,
            target: Target {
                wire_validation: target.wire_validation || wire_validation,
                ..target.clone()
            },
            lanes: Mutex::default(),
            stats: Mutex::default(),
        }
    }

    /// Whether processes are shared at all (stdio, no `--fresh`).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn lanes(&self) -> std::sync::MutexGuard<'_, HashMap<String, Lane>> {
        self.lanes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A shared item of `era` can begin now without starting a second process while the
    /// first is busy: one is idle, or none is alive.
    pub fn ready(&self, era: &str) -> bool {
        if !self.enabled {
            return true;
        }
        let lanes = self.lanes();
        lanes
            .get(era)
            .is_none_or(|l| !l.idle.is_empty() || l.live == 0)
    }

    /// Claim `era`'s idle process, or the right to start one.
    pub fn lease(&self, era: &str) -> Lease {
        let mut lanes = self.lanes();
        let lane = lanes.entry(era.to_string()).or_default();
        match lane.idle.pop() {
            Some(conn) => Lease::Warm(Box::new(conn)),
            None => {
                lane.live += 1;
                Lease::Start
            }
        }
    }

    /// A lease the item did not use (it was skipped before connecting).
    pub fn unlease(&self, era: &str, lease: Lease) {
        let mut lanes = self.lanes();
        let lane = lanes.entry(era.to_string()).or_default();
        match lease {
            Lease::Warm(conn) => lane.idle.push(*conn),
            Lease::Start => lane.live = lane.live.saturating_sub(1),
        }
    }

    /// The note for a scenario that starts a process because the last shared one of its
    /// era went wrong (taken once).
    pub fn take_replaced_note(&self, era: &str) -> Option<String> {
        self.lanes().get_mut(era).and_then(|l| l.replaced.take())
    }

    /// A scenario ran on a warm process.
    pub fn count_warm(&self) {
        self.stats.lock().unwrap_or_else(|e| e.into_inner()).warm += 1;
    }

    /// A connection leased or borrowed from `era`'s lane is done: kept warm when it can be
    /// handed on, else stopped (and reported, with what it was doing: `during`).
    pub async fn give_back(&self, mut conn: Connection, during: &str) {
        let era = conn.negotiated.requested.clone();
        if !self.enabled {
            conn.close().await;
            return;
        }
        match conn.reusable() {
            Ok(()) => {
                conn.begin_reuse();
                self.lanes().entry(era).or_default().idle.push(conn);
            }
            Err(why) => {
                let what = format!(
                    "the shared server process ({era}) was stopped after {during}: {why}; the next scenario started a new one"
                );
                {
                    let mut lanes = self.lanes();
                    let lane = lanes.entry(era).or_default();
                    lane.live = lane.live.saturating_sub(1);
                    lane.replaced = Some(what.clone());
                }
                self.stats
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .replaced
                    .push(what);
                conn.close().await;
            }
        }
    }

    /// A leased start failed: the slot is free again.
    pub fn start_failed(&self, era: &str) {
        self.unlease(era, Lease::Start);
    }

    /// A connection a check needs besides its own (same target, `era`): a warm idle one,
    /// else a new one. Give it back with [`Pool::give_back`].
    pub async fn borrow(
        &self,
        target: &Target,
        label: &str,
        era: &EraRequest,
    ) -> Result<Connection, ConnectError> {
        let target = if self.enabled { &self.target } else { target };
        if self.enabled {
            match self.lease(label) {
                Lease::Warm(conn) => {
                    self.count_warm();
                    return Ok(*conn);
                }
                Lease::Start => {}
            }
        }
        let opened = Connection::open(target, label, era).await;
        if opened.is_err() && self.enabled {
            self.start_failed(label);
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

/// How long the run's server starts took, from the process-wide counters before and after.
pub fn starts_since(before: (u64, Duration)) -> (u64, Duration) {
    let now = crate::client::connection::starts();
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
        crate::dsl::load::parse_scenario(crate::source::SourceFile::new("s.yaml", text))
            .expect("the scenario loads")
    }

    fn need_of(extra: &str, steps: &str) -> Need {
        need(&scenario(extra, steps), |_| false, false)
    }

    const LIST: &str = "  - name: list\n    request: { method: tools/list }\n";
    const CALL: &str =
        "  - name: call\n    request: { method: tools/call, params: { name: echo } }\n";

    #[test]
    fn readers_share_and_writers_get_their_own_unless_they_opt_in() {
        assert_eq!(need_of("", LIST), Need::Shared);
        assert_eq!(
            need_of("", CALL),
            Need::Own("step `call` sends `tools/call`".into())
        );
        assert_eq!(need_of("fresh: false\n", CALL), Need::Shared);
        assert_eq!(
            need_of("fresh: true\n", LIST),
            Need::Own("fresh: true".into())
        );
        assert_eq!(
            need_of("exclusive: true\nfresh: false\n", LIST),
            Need::Own("exclusive: true".into())
        );
        assert_eq!(
            need(&scenario("", LIST), |_| false, true),
            Need::Own("--fresh".into())
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
        assert_eq!(need(&s, |_| false, false), Need::Shared);
        assert_eq!(
            need(&s, |p| p == LIST_CHANGE_TOOL, false),
            Need::Own("it calls `list_change_tool`".into())
        );
        // A raw message over a fresh connection of its own leaves the shared one alone.
        let fresh_raw = "  - name: raw\n    raw: { fresh: true, body: { jsonrpc: \"2.0\", id: 1, method: initialize } }\n";
        assert_eq!(need_of("", fresh_raw), Need::Shared);
    }
}
