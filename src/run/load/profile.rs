//! A load profile: how iterations are paced (a pace, a ramp to it, or steps of pace), how
//! long the run measures, how long it warms up first, how many connections it may hold,
//! and how long a client thinks between iterations.

use std::time::Duration;

use crate::language::dsl::workload::{Pace, Stage};

/// When the measured part of the run ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Duration(Duration),
    Iterations(u64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The pace once ramped up; with `stages`, the first stage's.
    pub pace: Pace,
    /// With `stages`, their sum.
    pub length: Length,
    /// Run the load this long before measuring: its iterations are judged, not counted.
    pub warmup: Duration,
    /// Connections (HTTP) or server processes (stdio) open at once, at most.
    pub connections: usize,
    /// Rise to `pace` over this long at the start of the measured run, in tenths.
    pub ramp: Option<Duration>,
    /// A stepped load: each stage's pace for its duration, one after another.
    pub stages: Vec<Stage>,
    /// A closed-loop client's pause between iterations.
    pub think: Duration,
    /// Over stdio: every client on one shared server process (else one each).
    pub shared_process: bool,
}

/// Measured when neither a duration nor a count is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(10);

/// The tenths a ramp rises in.
const RAMP_STEPS: u32 = 10;

impl Profile {
    /// A profile of one pace and length, nothing else.
    pub fn plain(pace: Pace, length: Length, connections: usize) -> Profile {
        Profile {
            pace,
            length,
            warmup: Duration::ZERO,
            connections,
            ramp: None,
            stages: Vec::new(),
            think: Duration::ZERO,
            shared_process: false,
        }
    }

    /// The stage at `t` into the measured run (the last one past their end).
    pub fn stage_at(&self, t: Duration) -> Option<usize> {
        if self.stages.is_empty() {
            return None;
        }
        let mut end = Duration::ZERO;
        for (i, s) in self.stages.iter().enumerate() {
            end += s.duration;
            if t < end {
                return Some(i);
            }
        }
        Some(self.stages.len() - 1)
    }

    /// The pace at `t` into the measured run; the warm-up (`None`) runs at the pace the
    /// measured run starts with.
    pub fn pace_at(&self, t: Option<Duration>) -> Pace {
        let t = t.unwrap_or_default();
        if let Some(i) = self.stage_at(t) {
            return self.stages[i].pace;
        }
        match self.ramp {
            Some(ramp) if t < ramp => {
                let tenth =
                    ((t.as_secs_f64() / ramp.as_secs_f64()) * f64::from(RAMP_STEPS)) as u32 + 1;
                let part = f64::from(tenth.min(RAMP_STEPS)) / f64::from(RAMP_STEPS);
                match self.pace {
                    Pace::Clients(n) => Pace::Clients(((n as f64 * part).ceil() as usize).max(1)),
                    Pace::Rate(r) => Pace::Rate(r * part),
                }
            }
            _ => self.pace,
        }
    }

    /// Iterations in flight at once, at most, at `t` into the measured run: a closed
    /// loop's clients (within the connections allowed), an open loop's connections.
    pub fn in_flight_at(&self, t: Option<Duration>) -> usize {
        match self.pace_at(t) {
            Pace::Clients(n) => n.min(self.connections),
            Pace::Rate(_) => self.connections,
        }
        .max(1)
    }

    /// The most clients any part of the run has (a closed loop's connections over HTTP).
    pub fn most_clients(&self) -> Option<usize> {
        let mut paces = std::iter::once(self.pace).chain(self.stages.iter().map(|s| s.pace));
        paces
            .try_fold(0, |most, p| match p {
                Pace::Clients(n) => Some(most.max(n)),
                Pace::Rate(_) => None,
            })
            .filter(|n| *n > 0)
    }

    /// `10s`, `40 iterations`.
    pub fn describe_length(&self) -> String {
        match self.length {
            Length::Duration(d) => humantime::format_duration(d).to_string(),
            Length::Iterations(n) => format!("{n} iterations"),
        }
    }

    pub fn describe(&self) -> String {
        let pace = |p: Pace| match p {
            Pace::Clients(n) => {
                format!("{} client(s), closed loop", n.min(self.connections).max(1))
            }
            Pace::Rate(r) => format!("{r}/s open loop (at most {} in flight)", self.connections),
        };
        let mut text = if self.stages.is_empty() {
            let length = match self.length {
                Length::Duration(d) => humantime::format_duration(d).to_string(),
                Length::Iterations(n) => format!("{n} iterations"),
            };
            format!("{}, {length}", pace(self.pace))
        } else {
            let steps: Vec<String> = self
                .stages
                .iter()
                .map(|s| {
                    format!(
                        "{} for {}",
                        s.pace.describe(),
                        humantime::format_duration(s.duration)
                    )
                })
                .collect();
            format!("steps: {}", steps.join(", then "))
        };
        if let Some(ramp) = self.ramp {
            text.push_str(&format!(
                ", ramped up over {}",
                humantime::format_duration(ramp)
            ));
        }
        if !self.think.is_zero() {
            text.push_str(&format!(
                ", {} think time",
                humantime::format_duration(self.think)
            ));
        }
        if self.shared_process {
            text.push_str(", one shared server process");
        }
        if !self.warmup.is_zero() {
            text.push_str(&format!(
                " after {} of warm-up",
                humantime::format_duration(self.warmup)
            ));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ramp_rises_in_tenths_and_steps_follow_each_other() {
        let mut p = Profile::plain(
            Pace::Rate(100.0),
            Length::Duration(Duration::from_secs(20)),
            8,
        );
        p.ramp = Some(Duration::from_secs(10));
        assert_eq!(p.pace_at(None), Pace::Rate(10.0));
        assert_eq!(
            p.pace_at(Some(Duration::from_millis(5500))),
            Pace::Rate(60.0)
        );
        assert_eq!(p.pace_at(Some(Duration::from_secs(12))), Pace::Rate(100.0));
        p.stages = vec![
            Stage {
                pace: Pace::Clients(2),
                duration: Duration::from_secs(1),
            },
            Stage {
                pace: Pace::Clients(5),
                duration: Duration::from_secs(1),
            },
        ];
        p.pace = Pace::Clients(2);
        assert_eq!(p.stage_at(Duration::from_millis(1500)), Some(1));
        assert_eq!(
            p.pace_at(Some(Duration::from_millis(1500))),
            Pace::Clients(5)
        );
        assert_eq!(p.in_flight_at(Some(Duration::from_millis(1500))), 5);
        assert_eq!(p.most_clients(), Some(5));
    }
}
