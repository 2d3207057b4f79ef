//! Each era's lane of warm processes: when an item may take one, which it takes, and what
//! it gives back unused.

use super::{Lease, Need, Pool};
use crate::run::client::Connection;

#[derive(Default)]
pub(super) struct Lane {
    pub(super) idle: Vec<Connection>,
    /// Processes of this era alive: idle, leased or being started.
    pub(super) live: usize,
    /// Sharing items of this era not scheduled yet (all, and those not [`Need::SharedLate`]).
    pub(super) pending: usize,
    pub(super) pending_early: usize,
    /// Why the last shared process of this era was replaced (told to the next scenario).
    pub(super) replaced: Option<String>,
    /// A process of this era did not answer the hand-over barrier: from now on each item
    /// starts its own ([`Pool::give_back`]).
    pub(super) unshared: bool,
}

impl Lane {
    /// A process is idle, or none is alive (so waiting would not bring one).
    fn free(&self) -> bool {
        !self.idle.is_empty() || self.live == 0
    }

    /// The idle process, or the right to start one.
    pub(super) fn claim(&mut self) -> Lease {
        match self.idle.pop() {
            Some(conn) => Lease::Warm(Box::new(conn)),
            None => {
                self.live += 1;
                Lease::Start
            }
        }
    }

    /// An idle process that no sharing item of the era needs any more leaves the pool.
    fn take_spare(&mut self) -> Option<Connection> {
        if self.pending > 0 {
            return None;
        }
        let conn = self.idle.pop()?;
        self.live -= 1;
        Some(conn)
    }
}

impl Pool {
    /// An item of `era` that needs `need` (`None`: it starts nothing) will be scheduled.
    pub fn expect(&self, era: &str, need: Option<&Need>) {
        let (Some(need), true) = (need, self.enabled) else {
            return;
        };
        let mut lanes = self.lanes();
        let lane = lanes.entry(era.to_string()).or_default();
        match need {
            Need::Shared => {
                lane.pending += 1;
                lane.pending_early += 1;
            }
            Need::SharedLate => lane.pending += 1,
            Need::Last(_) | Need::Own(_) => {}
        }
    }

    /// An item of `era` that needs `need` can begin now: a sharing item does not start a
    /// second process while the first is busy with another scenario (a late one waits for
    /// the era's other sharing items too), and a [`Need::Last`] item waits until no sharing
    /// item of the era needs the warm process any more, then takes it.
    pub fn ready(&self, era: &str, need: Option<&Need>) -> bool {
        let (Some(need), true) = (need, self.enabled) else {
            return true;
        };
        let lanes = self.lanes();
        let Some(lane) = lanes.get(era) else {
            return true;
        };
        match need {
            Need::Shared => lane.unshared || lane.free(),
            Need::SharedLate => lane.pending_early == 0 && (lane.unshared || lane.free()),
            Need::Last(_) => lane.pending == 0 && lane.free(),
            Need::Own(_) => true,
        }
    }

    /// The item's claim on a process of `era`'s pool (`None`: it starts one of its own).
    pub fn lease(&self, era: &str, need: Option<&Need>) -> Option<Lease> {
        let (Some(need), true) = (need, self.enabled) else {
            return None;
        };
        let mut lanes = self.lanes();
        let lane = lanes.entry(era.to_string()).or_default();
        match need {
            Need::Shared | Need::SharedLate => {
                lane.pending = lane.pending.saturating_sub(1);
                if *need == Need::Shared {
                    lane.pending_early = lane.pending_early.saturating_sub(1);
                }
                // Not shared any more: a process of its own, stopped after it.
                (!lane.unshared).then(|| lane.claim())
            }
            Need::Last(_) => lane.take_spare().map(|c| Lease::Last(Box::new(c))),
            Need::Own(_) => None,
        }
    }

    /// A lease the item did not use (it was skipped before connecting).
    pub fn unlease(&self, era: &str, lease: Lease) {
        let mut lanes = self.lanes();
        let lane = lanes.entry(era.to_string()).or_default();
        match lease {
            Lease::Warm(conn) => lane.idle.push(*conn),
            Lease::Start => lane.live = lane.live.saturating_sub(1),
            Lease::Last(conn) => {
                lane.idle.push(*conn);
                lane.live += 1;
            }
        }
    }

    /// A process of its own for a probe that disturbs it (the parse-error checks, in a
    /// [`Need::SharedLate`] scenario): a warm idle one of `era` that no sharing item needs
    /// any more, else `None` (the probe starts one). Stop it after the probe.
    pub fn take_spare(&self, era: &str) -> Option<Connection> {
        if !self.enabled {
            return None;
        }
        let spare = self.lanes().get_mut(era)?.take_spare();
        if spare.is_some() {
            self.count_warm();
        }
        spare
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

    /// Whether `era`'s processes are no longer shared: one did not answer the hand-over
    /// barrier, so nothing would prove that what it wrote belongs to the scenario before.
    pub(super) fn unshared(&self, era: &str) -> bool {
        self.lanes().get(era).is_some_and(|l| l.unshared)
    }

    /// A process of `era`'s lane that is not handed on is gone.
    pub(super) fn forget_live(&self, era: &str) {
        if let Some(lane) = self.lanes().get_mut(era) {
            lane.live = lane.live.saturating_sub(1);
        }
    }

    /// A leased start failed: the slot is free again.
    pub fn start_failed(&self, era: &str) {
        self.unlease(era, Lease::Start);
    }
}
