//! A connection used by more than one scenario (the engine's warm-server pool): whether it
//! can be handed on, what the server wrote after the scenario's last reply, how it starts
//! again for the next one, and the count of server starts (where a stdio run's time goes).

use serde_json::{Value, json};
use std::time::{Duration, Instant};

use super::Connection;
use super::liveness::LIVENESS_WAIT;
use super::transport::Transport;
use crate::results::exchange::{Exchange, TranscriptEntry};
use crate::run::client::TransportError;
use crate::run::client::stdio::HANDOVER_ID_PREFIX;

/// What [`Connection::settle_for_handover`] found.
pub enum Handover {
    /// Nothing was left unread: the connection can be handed on.
    Clean,
    /// The server had written more after the scenario's last reply (the transcript of
    /// reading it, ending with a note); read now, so the next scenario does not see it.
    Drained(Vec<TranscriptEntry>),
    /// Not to be handed on (why), with the transcript of what was read trying.
    Spent {
        why: String,
        /// The barrier got no answer in time: the server may not answer it at all.
        unanswered: bool,
        transcript: Vec<TranscriptEntry>,
    },
}

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

    /// Before the connection goes to another scenario: read everything the server wrote
    /// after the last reply (a non-JSON line, a stale duplicate reply, a late notification,
    /// its exit), so that none of it is judged in the next scenario. One round trip: stdio
    /// is ordered, so everything the server wrote before answering a harmless request
    /// (`ping`, modern `server/discover`) arrives before that answer — no fixed wait.
    pub async fn settle_for_handover(&mut self) -> Handover {
        if let Err(why) = self.reusable() {
            return Handover::Spent {
                why,
                unanswered: false,
                transcript: Vec::new(),
            };
        }
        let Transport::Stdio(_) = self.transport else {
            return Handover::Clean;
        };
        let mark = self.log.len();
        let method = self.harmless_method();
        let result = self.barrier(method).await;
        let note = match &result {
            Ok(ex) if ex.other_messages.len() + ex.stdout_noise.len() == 0 => {
                self.log.truncate(mark);
                return Handover::Clean;
            }
            Ok(ex) => format!(
                "after the scenario's last reply the server wrote {}, read before its process was handed to the next scenario (all it wrote before answering `{method}`): not judged, as on a process of its own nothing would have read it; the next scenario does not see it",
                leftovers(ex)
            ),
            Err(e) => format!(
                "after the scenario's last step, `{method}` to see what the server wrote meanwhile did not get an answer ({e}): its server process is not handed to another scenario"
            ),
        };
        self.note(note);
        let transcript = self.log.split_off(mark);
        let Err(e) = result else {
            return Handover::Drained(transcript);
        };
        Handover::Spent {
            unanswered: matches!(e, TransportError::Timeout(_)),
            why: match e {
                TransportError::Timeout(d) => format!(
                    "`{method}` after its last step got no answer within {}",
                    humantime::format_duration(d)
                ),
                e => e.to_string(),
            },
            transcript,
        }
    }

    /// The hand-over's round trip: `method`, with an id of its own, answered within the
    /// liveness wait; a reply to another request meanwhile is a stale one, received.
    async fn barrier(&mut self, method: &str) -> Result<Exchange, TransportError> {
        self.handovers += 1;
        let id = format!("{HANDOVER_ID_PREFIX}{}", self.handovers);
        let mut out = self.build_plain(method, None, Some(json!(id)));
        out.timeout = self.target.timeout.min(LIVENESS_WAIT);
        // Its timeout says what it says: no liveness probe after it.
        let probing = std::mem::replace(&mut self.probing, true);
        self.set_stale_replies_expected(true);
        let result = self.send(&out).await;
        self.set_stale_replies_expected(false);
        self.probing = probing;
        result
    }

    fn set_stale_replies_expected(&mut self, on: bool) {
        if let Transport::Stdio(t) = &mut self.transport {
            t.stale_replies_expected = on;
        }
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
        // The next scenario answers as its own client, or as none.
        self.answer_as(None);
        self.wire = self.opening_wire.clone();
        if let Transport::Stdio(t) = &mut self.transport {
            t.forget_exchanges();
        }
    }
}

/// What the hand-over barrier read before its answer, counted by kind: "1 reply to an
/// earlier request, 2 notification(s), 1 non-JSON line(s)" (of a flood, the kept ones
/// and how many more).
fn leftovers(ex: &Exchange) -> String {
    let kind = |m: &Value| match (m.get("id"), super::super::is_response(m)) {
        (_, true) => 0,
        (None, false) => 1,
        (Some(_), false) => 2,
    };
    let mut counts = [0; 3];
    for m in &ex.other_messages {
        counts[kind(m)] += 1;
    }
    let [replies, notifications, requests] = counts;
    [
        (replies, "reply(ies) to an earlier request"),
        (notifications, "notification(s)"),
        (requests, "request(s) to the client (answered)"),
        (ex.other_messages.dropped(), "more message(s) not kept"),
        (ex.stdout_noise.len(), "non-JSON line(s)"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect::<Vec<_>>()
    .join(", ")
}
