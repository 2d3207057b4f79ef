//! A load profile: how iterations are paced, how long the run measures, how long it warms
//! up first, and how many connections it may hold.

use std::time::Duration;

/// How iterations start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// Closed loop: N virtual clients, each starting its next iteration when its last one
    /// ended (a slow server slows the load).
    Clients(usize),
    /// Open loop: iterations a second on a fixed schedule, whatever the server does; each
    /// one's latency counts from its scheduled start (coordinated omission corrected).
    Rate(f64),
}

/// When the measured part of the run ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Duration(Duration),
    Iterations(u64),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Profile {
    pub pace: Pace,
    pub length: Length,
    /// Run the load this long before measuring: its iterations are judged, not counted.
    pub warmup: Duration,
    /// Connections (HTTP) or server processes (stdio) open at once, at most.
    pub connections: usize,
}

/// Measured when neither a duration nor a count is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

impl Profile {
    /// Iterations in flight at once, at most: a closed loop's clients (within the
    /// connections allowed), an open loop's connections.
    pub fn in_flight(&self) -> usize {
        match self.pace {
            Pace::Clients(n) => n.min(self.connections),
            Pace::Rate(_) => self.connections,
        }
        .max(1)
    }

    pub fn describe(&self) -> String {
        let pace = match self.pace {
            Pace::Clients(_) => format!("{} client(s), closed loop", self.in_flight()),
            Pace::Rate(r) => format!("{r}/s open loop (at most {} in flight)", self.connections),
        };
        let length = match self.length {
            Length::Duration(d) => humantime::format_duration(d).to_string(),
            Length::Iterations(n) => format!("{n} iterations"),
        };
        let warmup = if self.warmup.is_zero() {
            String::new()
        } else {
            format!(
                " after {} of warm-up",
                humantime::format_duration(self.warmup)
            )
        };
        format!("{pace}, {length}{warmup}")
    }
}
