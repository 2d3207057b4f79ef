//! A connection used by more than one scenario (the engine's warm-server pool): whether it
//! can be handed on, how it starts again for the next one, and the count of server starts
//! (where a stdio run's time goes).

use super::*;

/// Server processes started (stdio) by this program, and the time it took them to answer
/// their first message: process-wide counters that a run reads before and after (see
/// [`starts`]). Every stdio start goes through [`Connection::open`] or
/// [`Connection::send_fresh`], which count it.
static STARTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static START_NANOS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Server processes started so far in this program, and the time spent starting them
/// (from the spawn to the end of the opening exchange).
pub fn starts() -> (u64, Duration) {
    use std::sync::atomic::Ordering::Relaxed;
    (
        STARTS.load(Relaxed),
        Duration::from_nanos(START_NANOS.load(Relaxed)),
    )
}

pub(super) fn count_start(processes: u64, took: Duration) {
    use std::sync::atomic::Ordering::Relaxed;
    STARTS.fetch_add(processes, Relaxed);
    START_NANOS.fetch_add(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX), Relaxed);
}

impl Connection {
    /// Whether the connection can be handed to another scenario as it is: alive, no
    /// request of it timed out (a late reply could land in the next scenario), nothing
    /// held open.
    pub fn reusable(&self) -> Result<(), String> {
        if let Some(why) = self.broken_reason() {
            return Err(why.to_string());
        }
        if self.timed_out {
            return Err("a request timed out".into());
        }
        if let Transport::Stdio(t) = &self.transport
            && t.holds_open()
        {
            return Err("a request was left open".into());
        }
        Ok(())
    }

    /// Hand the connection to the next scenario: it starts as the opening left it (the
    /// handshake and its wire verdicts), with no transcript, tool list or server requests
    /// of the scenario before. The process and its session are the same.
    pub fn begin_reuse(&mut self) {
        self.log.clear();
        self.log_started = Instant::now();
        self.tools = None;
        self.server_requests.clear();
        self.unanswered = None;
        self.wire = self.opening_wire.clone();
        if let Transport::Stdio(t) = &mut self.transport {
            t.forget_exchanges();
        }
    }
}
