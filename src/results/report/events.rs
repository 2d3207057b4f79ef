//! A run as a stream of events. The engine emits them; every output — the console, the
//! live progress line, JUnit, the JSON/HTML/SARIF files, the baseline's relabelling, the
//! `--last-failed` record — is a [`Subscriber`] that reads them. Nothing calls back up
//! into the command that started the run: data flows one way.
//!
//! Two orders: items start and end in whatever order the connections allow
//! ([`Event::SuiteStarted`], [`Event::StepStarted`], [`Event::StepFinished`],
//! [`Event::SuiteEnded`], for the live progress), and their results come in input order
//! ([`Event::SuiteFinished`], for the reports).

use std::sync::Mutex;

use super::result::{RunReport, StepResult, SuiteResult};

/// What a run is, known before its first suite.
#[derive(Debug, Clone, Default)]
pub struct RunInfo {
    pub mcpspec_version: String,
    /// Redacted description of the target (see [`RunReport::target`]).
    pub target: String,
    pub transport: String,
    pub started_at: String,
    /// Items (`scenario@era`) the run will run.
    pub items: usize,
}

/// One thing that happened in a run.
#[derive(Debug)]
pub enum Event<'a> {
    RunStarted(&'a RunInfo),
    /// An item starts (connecting).
    SuiteStarted {
        id: &'a str,
    },
    /// A step of a running item begins.
    StepStarted {
        suite: &'a str,
        step: &'a str,
    },
    /// A step of a running item was judged.
    StepFinished {
        suite: &'a str,
        step: &'a StepResult,
    },
    /// An item is done (items end in any order).
    SuiteEnded {
        id: &'a str,
    },
    /// A suite's result, in input order.
    SuiteFinished(&'a SuiteResult),
    /// A suite a signal stopped before it finished (after the last `SuiteFinished`).
    SuiteInterrupted(&'a SuiteResult),
    /// The whole result, as the run's outputs see it (the baseline applied, the shard
    /// named): the last event.
    RunFinished(&'a RunReport),
}

/// Something that reads the events of a run.
pub trait Subscriber {
    fn on(&mut self, event: &Event<'_>);
}

/// The run's subscribers, in order: every event goes to each one in turn. The engine emits
/// from the items it runs side by side, hence the lock (uncontended: one event at a time).
pub struct Events<'s> {
    subscribers: Mutex<Vec<&'s mut (dyn Subscriber + Send)>>,
}

impl<'s> Events<'s> {
    pub fn new(subscribers: Vec<&'s mut (dyn Subscriber + Send)>) -> Events<'s> {
        Events {
            subscribers: Mutex::new(subscribers),
        }
    }

    /// No subscribers (a run whose result is only returned).
    pub fn none() -> Events<'static> {
        Events {
            subscribers: Mutex::new(Vec::new()),
        }
    }

    pub fn emit(&self, event: &Event<'_>) {
        let mut subscribers = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        for subscriber in subscribers.iter_mut() {
            subscriber.on(event);
        }
    }
}

/// The events of one running item: its steps as they begin and are judged, and its end
/// when dropped (whichever way its run ended).
pub struct ItemEvents<'e, 's> {
    events: &'e Events<'s>,
    id: String,
}

impl<'e, 's> ItemEvents<'e, 's> {
    pub fn start(events: &'e Events<'s>, id: String) -> ItemEvents<'e, 's> {
        events.emit(&Event::SuiteStarted { id: &id });
        ItemEvents { events, id }
    }

    pub fn step(&self, name: &str) {
        self.events.emit(&Event::StepStarted {
            suite: &self.id,
            step: name,
        });
    }

    pub fn step_finished(&self, step: &StepResult) {
        self.events.emit(&Event::StepFinished {
            suite: &self.id,
            step,
        });
    }
}

impl Drop for ItemEvents<'_, '_> {
    fn drop(&mut self) {
        self.events.emit(&Event::SuiteEnded { id: &self.id });
    }
}
