//! Whether a connection still answers after a timeout, and how long an answer due at once may take.

use std::time::Duration;

use super::Connection;
use super::transcript::result_of;
use crate::run::client::TransportError;

/// After a request timed out, a harmless request proves the connection alive. It waits
/// [`LIVENESS_FACTOR`] times the slowest answer seen so far on the connection (the server's
/// own speed), at least [`LIVENESS_FLOOR`], at most [`LIVENESS_WAIT`] and the timeout: a
/// timed-out step then costs its timeout and little more, not twice it.
pub(super) const LIVENESS_WAIT: Duration = Duration::from_secs(5);
const LIVENESS_FACTOR: u32 = 4;
/// Against scheduling hiccups on a loaded machine: a ping answered in 1 ms still gets this.
const LIVENESS_FLOOR: Duration = Duration::from_secs(1);

/// How long the liveness request waits (see [`LIVENESS_WAIT`]); `slowest`: the slowest
/// answer on the connection, `None` if nothing was answered yet.
pub(super) fn liveness_wait(slowest: Option<Duration>, timeout: Duration) -> Duration {
    let ceiling = timeout.min(LIVENESS_WAIT);
    match slowest {
        Some(d) => d
            .saturating_mul(LIVENESS_FACTOR)
            .max(LIVENESS_FLOOR)
            .min(ceiling),
        None => ceiling,
    }
}

/// A request the spec wants answered at once, without any work (an unknown method,
/// invalid params, malformed input: [`crate::protocol::errors::answered_at_once`]), waits
/// [`PROMPT_FACTOR`] times the round trip of a harmless request sent just before it (the
/// server's speed right now), at least [`PROMPT_FLOOR`], at most the step's timeout: a
/// server that never answers such a request costs seconds, not the whole timeout — as the
/// parse-error probe's wait already does.
pub const PROMPT_FACTOR: u32 = 10;
/// Against scheduling hiccups on a loaded machine: a ping answered in 1 ms still gives this.
pub const PROMPT_FLOOR: Duration = Duration::from_secs(2);

/// The wait for an answer due at once (see [`PROMPT_FACTOR`]); `rtt`: the round trip of the
/// harmless request just before it.
pub fn prompt_wait(rtt: Duration, timeout: Duration) -> Duration {
    rtt.saturating_mul(PROMPT_FACTOR)
        .max(PROMPT_FLOOR)
        .min(timeout)
}

/// How long a request due at once was waited for, and why (for a timeout's message).
#[derive(Debug, Clone, Copy)]
pub struct PromptWait {
    /// The round trip of the harmless request sent just before it.
    pub rtt: Duration,
    pub method: &'static str,
    /// The wait: [`prompt_wait`] of `rtt`.
    pub wait: Duration,
    /// The step's timeout, which it replaced.
    pub timeout: Duration,
}

impl PromptWait {
    /// "`ping` sent just before it was answered in 3ms; waited 10 × that (at least 2s, at most the timeout 30s)".
    pub fn describe(&self) -> String {
        let ms = |d: Duration| {
            if d < Duration::from_millis(1) {
                "under 1ms".to_string()
            } else {
                humantime::format_duration(Duration::from_millis(d.as_millis() as u64)).to_string()
            }
        };
        format!(
            "the `{}` sent just before it was answered in {}, so it waited {} ({PROMPT_FACTOR} × that round trip, at least {}, at most the timeout {}) instead of the whole timeout",
            self.method,
            ms(self.rtt),
            ms(self.wait),
            ms(PROMPT_FLOOR),
            ms(self.timeout),
        )
    }

    /// The message of a request due at once (`what`, e.g. "an unknown method (`x`)") that
    /// got no answer within `waited`.
    pub fn timed_out(&self, waited: Duration, what: &str) -> String {
        format!(
            "no answer within {}: {what} is answered at once, without any work (JSON-RPC 2.0 section 5.1); {}",
            humantime::format_duration(waited),
            self.describe()
        )
    }
}

impl Connection {
    /// After a request timed out (stdio or HTTP): is anyone still answering? A harmless
    /// request (`ping`, modern `server/discover`) gets a short wait; if it times out too,
    /// the connection is dead and the scenario's remaining steps are not run, instead of
    /// each waiting out its own timeout. A server that is only slow on one request
    /// answers it and the run goes on.
    pub(super) async fn check_alive(&mut self) {
        if self.probing
            || self.transport.closed_reason().is_some()
            || self.negotiated.handshake.is_none()
        {
            return;
        }
        let method = self.harmless_method();
        let id = self.next_id();
        let mut out = self.build_plain(method, None, Some(id));
        out.timeout = liveness_wait(
            self.slowest_answer.or(self.slowest_opening),
            self.target.timeout,
        );
        self.note(format!(
            "the request timed out: is the connection alive? (`{method}`, {} to answer)",
            humantime::format_duration(out.timeout)
        ));
        self.probing = true;
        let alive = Box::pin(self.send(&out)).await;
        self.probing = false;
        if let Err(TransportError::Timeout(d)) = alive {
            self.transport.mark_closed(format!(
                "the connection is dead: a request timed out, then `{method}` got no answer within {}",
                humantime::format_duration(d)
            ));
        }
    }

    /// Before a request due at once: a harmless request, timed (the server's speed right
    /// now), and the wait it gives ([`prompt_wait`]) within `timeout`. `None` (wait the
    /// whole timeout) when the connection is not open yet or broken, or the harmless
    /// request got no result.
    pub async fn prompt_wait(&mut self, timeout: Duration) -> Option<PromptWait> {
        if self.probing
            || self.transport.closed_reason().is_some()
            || self.negotiated.handshake.is_none()
        {
            return None;
        }
        let method = self.harmless_method();
        let id = self.next_id();
        let mut out = self.build_plain(method, None, Some(id));
        out.timeout = liveness_wait(self.slowest_answer.or(self.slowest_opening), timeout);
        self.probing = true;
        let sent = Box::pin(self.send(&out)).await;
        self.probing = false;
        let ex = sent.ok()?;
        result_of(&ex).ok()?;
        let wait = prompt_wait(ex.elapsed, timeout);
        (wait < timeout).then_some(PromptWait {
            rtt: ex.elapsed,
            method,
            wait,
            timeout,
        })
    }

    /// Keep the answer time of a request of this connection's own (not a notification,
    /// whose "answer" is a quiet period; not a liveness probe; not one sent over a fresh
    /// connection, which includes a process start).
    pub(super) fn time_answer(&mut self, took: Duration) {
        if self.probing {
            return;
        }
        let slowest = if self.negotiated.handshake.is_some() {
            &mut self.slowest_answer
        } else {
            &mut self.slowest_opening
        };
        *slowest = Some(slowest.map_or(took, |d| d.max(took)));
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{LIVENESS_FLOOR, LIVENESS_WAIT, liveness_wait};

    #[test]
    fn the_liveness_wait_follows_the_servers_speed_within_floor_and_ceiling() {
        let ms = Duration::from_millis;
        let secs = Duration::from_secs;
        // A fast server: the floor, not the timeout.
        assert_eq!(liveness_wait(Some(ms(3)), secs(30)), LIVENESS_FLOOR);
        // A slower one: a multiple of its slowest answer.
        assert_eq!(liveness_wait(Some(ms(800)), secs(30)), ms(3200));
        // Never past the timeout nor the ceiling.
        assert_eq!(liveness_wait(Some(ms(800)), secs(2)), secs(2));
        assert_eq!(liveness_wait(Some(secs(10)), secs(30)), LIVENESS_WAIT);
        assert_eq!(liveness_wait(Some(ms(1)), ms(500)), ms(500));
        // Nothing answered yet: as before, the timeout (at most the ceiling).
        assert_eq!(liveness_wait(None, secs(2)), secs(2));
    }
}
