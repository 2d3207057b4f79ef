//! What is running right now: each running `scenario@era` and its current step, for the
//! console's live progress (the renderer lives with the `run` command and only reads this).
//!
//! Cheap on the step path: one uncontended lock and a copy of the step's name into a buffer
//! that is reused, no allocation once it has grown.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// The run's live state, shared by the engine (writes) and the console (reads).
#[derive(Default)]
pub struct Live {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: Vec<Running>,
    finished: usize,
    next_key: u64,
}

/// One item being run.
#[derive(Clone, Debug)]
pub struct Running {
    key: u64,
    /// `scenario@era`.
    pub id: String,
    /// The step being run (`connecting` before the first one).
    pub step: String,
    /// When the current step began.
    pub since: Instant,
}

/// A copy of the live state at one moment.
#[derive(Clone, Debug, Default)]
pub struct LiveSnapshot {
    /// Items finished so far.
    pub finished: usize,
    /// Items running, oldest first.
    pub running: Vec<Running>,
}

impl Live {
    pub fn new() -> Arc<Live> {
        Arc::new(Live::default())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An item starts; the returned handle reports its steps and ends it when dropped.
    pub fn start(self: &Arc<Self>, id: String) -> ItemProgress {
        let mut state = self.lock();
        let key = state.next_key;
        state.next_key += 1;
        state.running.push(Running {
            key,
            id,
            step: "connecting".into(),
            since: Instant::now(),
        });
        ItemProgress {
            live: Some(Arc::clone(self)),
            key,
        }
    }

    pub fn snapshot(&self) -> LiveSnapshot {
        let state = self.lock();
        LiveSnapshot {
            finished: state.finished,
            running: state.running.clone(),
        }
    }
}

/// The handle of one running item (see [`Live::start`]).
pub struct ItemProgress {
    live: Option<Arc<Live>>,
    key: u64,
}

impl ItemProgress {
    /// A handle that reports nowhere (callers outside a `run`).
    pub fn none() -> ItemProgress {
        ItemProgress { live: None, key: 0 }
    }

    /// The item's next step begins.
    pub fn step(&self, name: &str) {
        let Some(live) = &self.live else { return };
        let mut state = live.lock();
        if let Some(running) = state.running.iter_mut().find(|r| r.key == self.key) {
            running.step.clear();
            running.step.push_str(name);
            running.since = Instant::now();
        }
    }
}

impl Drop for ItemProgress {
    fn drop(&mut self) {
        let Some(live) = &self.live else { return };
        let mut state = live.lock();
        state.running.retain(|r| r.key != self.key);
        state.finished += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_and_steps_are_tracked_until_dropped() {
        let live = Live::new();
        let a = live.start("a@legacy".into());
        let b = live.start("b@modern".into());
        a.step("lists tools");
        let now = live.snapshot();
        assert_eq!(now.finished, 0);
        assert_eq!(now.running.len(), 2);
        assert_eq!(now.running[0].id, "a@legacy");
        assert_eq!(now.running[0].step, "lists tools");
        assert_eq!(now.running[1].step, "connecting");
        drop(a);
        let now = live.snapshot();
        assert_eq!(now.finished, 1);
        assert_eq!(now.running.len(), 1);
        assert_eq!(now.running[0].id, "b@modern");
        drop(b);
        ItemProgress::none().step("nothing happens");
        assert_eq!(live.snapshot().finished, 2);
    }
}
