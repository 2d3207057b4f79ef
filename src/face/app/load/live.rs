//! The live line of a running load: what the run has done so far, redrawn in place.

use super::render::ms;
use crate::run::load::{self};

/// The live line of a load run on a terminal (stderr, not in CI; nothing elsewhere):
/// redrawn once a second with the rate, the errors and p50/p99 so far.
pub(super) struct LiveView {
    on: bool,
    shown: bool,
}

impl LiveView {
    pub(super) fn new() -> LiveView {
        LiveView {
            on: crate::face::app::progress::on_terminal(),
            shown: false,
        }
    }

    pub(super) fn show(&mut self, now: &load::Live) {
        if !self.on {
            return;
        }
        err!("\r\x1b[2K{}", live_line(now));
        self.shown = true;
    }

    /// Clear the line before the report.
    pub(super) fn clear(&mut self) {
        if std::mem::take(&mut self.shown) {
            err!("\r\x1b[2K");
        }
    }
}

/// `[12s] 49/s, 583 iterations, 0 failed (0.00%), p50 3.1ms p99 9.8ms, 2 in flight`.
fn live_line(now: &load::Live) -> String {
    let s = &now.so_far;
    let seconds = now.elapsed.as_secs();
    if now.warming {
        return format!("[{seconds}s] warming up, {} in flight", now.in_flight);
    }
    let rate = 100.0 * s.failed as f64 / (s.iterations.max(1)) as f64;
    format!(
        "[{seconds}s] {}/s, {} iterations, {} failed ({rate:.2}%), p50 {} p99 {}, {} in flight",
        s.last_second,
        s.iterations,
        s.failed,
        ms(s.p50_ms),
        ms(s.p99_ms),
        now.in_flight
    )
}
