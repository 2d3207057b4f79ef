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
use std::time::Instant;

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

/// When an event happened and where the run stood then, stamped once by [`Events::emit`]
/// (as nextest's `TestEvent` carries its timestamp and running counts): no subscriber
/// keeps its own clock or tally.
#[derive(Debug, Clone, Copy)]
pub struct Moment {
    pub at: Instant,
    pub counts: Counts,
}

/// The items of the run so far, this event included.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counts {
    /// Items that started (connecting or later).
    pub started: usize,
    /// Items that are done (in any order).
    pub ended: usize,
}

impl Counts {
    /// Items between their start and their end.
    pub fn running(&self) -> usize {
        self.started - self.ended
    }

    fn after(mut self, event: &Event<'_>) -> Counts {
        match event {
            Event::SuiteStarted { .. } => self.started += 1,
            Event::SuiteEnded { .. } => self.ended += 1,
            _ => {}
        }
        self
    }
}

/// Something that reads the events of a run.
pub trait Subscriber {
    fn on(&mut self, event: &Event<'_>, moment: &Moment);
}

/// The run's subscribers, in order: every event goes to each one in turn. The engine emits
/// from the items it runs side by side, hence the lock (uncontended: one event at a time).
pub struct Events<'s> {
    subscribers: Mutex<Listeners<'s>>,
}

struct Listeners<'s> {
    each: Vec<&'s mut (dyn Subscriber + Send)>,
    counts: Counts,
}

impl<'s> Events<'s> {
    pub fn new(subscribers: Vec<&'s mut (dyn Subscriber + Send)>) -> Events<'s> {
        Events {
            subscribers: Mutex::new(Listeners {
                each: subscribers,
                counts: Counts::default(),
            }),
        }
    }

    /// No subscribers (a run whose result is only returned).
    pub fn none() -> Events<'static> {
        Events::new(Vec::new())
    }

    pub fn emit(&self, event: &Event<'_>) {
        let mut listeners = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        listeners.counts = listeners.counts.after(event);
        let moment = Moment {
            at: Instant::now(),
            counts: listeners.counts,
        };
        for subscriber in listeners.each.iter_mut() {
            subscriber.on(event, &moment);
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

#[cfg(test)]
mod tests {
    use super::{Counts, Event, Events, Moment, Subscriber};

    #[derive(Default)]
    struct Seen(Vec<(String, Counts)>);

    impl Subscriber for Seen {
        fn on(&mut self, event: &Event<'_>, moment: &Moment) {
            let name = format!("{event:?}");
            self.0.push((
                name.split([' ', '(']).next().unwrap().to_string(),
                moment.counts,
            ));
        }
    }

    /// Every subscriber gets the same running counts, this event included: none counts
    /// for itself.
    #[test]
    fn events_carry_the_running_counts() {
        let mut seen = Seen::default();
        {
            let events = Events::new(vec![&mut seen]);
            events.emit(&Event::SuiteStarted { id: "a" });
            events.emit(&Event::SuiteStarted { id: "b" });
            events.emit(&Event::SuiteEnded { id: "b" });
            events.emit(&Event::StepStarted {
                suite: "a",
                step: "s",
            });
        }
        let counts = |started, ended| Counts { started, ended };
        assert_eq!(
            seen.0,
            vec![
                ("SuiteStarted".to_string(), counts(1, 0)),
                ("SuiteStarted".to_string(), counts(2, 0)),
                ("SuiteEnded".to_string(), counts(2, 1)),
                ("StepStarted".to_string(), counts(2, 1)),
            ]
        );
        assert_eq!(seen.0[3].1.running(), 1);
    }
}
