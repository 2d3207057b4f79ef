//! What went over the wire: what came back for one request ([`Exchange`]) and the
//! transcript entries a step records. The client fills them, the assertions judge them and
//! the reports print them, so they sit below all three.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// HTTP status and headers of a reply.
#[derive(Debug, Clone)]
pub struct HttpMeta {
    pub status: u16,
    /// Lower-cased header names, in arrival order.
    pub headers: Vec<(String, String)>,
}

impl HttpMeta {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What came back for one outgoing message.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// The JSON-RPC response (matched by id), if any.
    pub response: Option<Value>,
    /// The response exactly as received, when the transport kept it (transcripts).
    pub response_text: Option<String>,
    /// Raw reply body when it was not a JSON-RPC message (or any body on HTTP errors).
    pub raw_body: Option<String>,
    pub http: Option<HttpMeta>,
    /// Other messages received meanwhile (notifications, server requests): counted,
    /// the first and last few kept in order.
    pub other_messages: Received,
    /// Lines on stdout that were not JSON (stdio), seen during this exchange: counted,
    /// the first and last few kept.
    pub stdout_noise: Kept<String>,
    pub elapsed: Duration,
    /// The response was matched by its id alone and `response_text` still has to be
    /// parsed into `response` (see [`Exchange::settle`]).
    pub unsettled: bool,
    /// Transport events worth a transcript note (an HTTP request sent again on a fresh
    /// connection).
    pub notes: Vec<String>,
    /// Modern era: what the server asked in the `input_required` rounds of this request,
    /// each `{method, params}` with its `key` (legacy server requests are in
    /// `other_messages`).
    pub input_requests: Vec<Value>,
    /// Modern era: the `input_required` rounds the request took before its final result.
    pub rounds: u32,
    /// A task step (2025-11-25): every status the task reported, in order (its
    /// `CreateTaskResult`, then each `tasks/cancel` and `tasks/get` result).
    pub task_statuses: Vec<String>,
}

impl Exchange {
    /// Parse a response that was matched by id only. A text that then turns out not to be
    /// JSON (a number out of range, say) is kept as the raw body.
    pub fn settle(&mut self) {
        if !std::mem::take(&mut self.unsettled) {
            return;
        }
        if let Some(text) = &self.response_text {
            match serde_json::from_str(text) {
                Ok(value) => self.response = Some(value),
                Err(_) => self.raw_body = Some(text.clone()),
            }
        }
    }
}

/// How many items a [`Kept`] record keeps at each end.
pub const KEPT_EACH_END: usize = 16;

/// A count of items with only the first and last [`KEPT_EACH_END`] kept: whatever a
/// server sends during one exchange (a flood of notifications, endless noise), memory
/// stays flat.
#[derive(Debug, Clone)]
pub struct Kept<T> {
    total: usize,
    head: Vec<T>,
    tail: std::collections::VecDeque<T>,
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept {
            total: 0,
            head: Vec::new(),
            tail: std::collections::VecDeque::new(),
        }
    }
}

impl<T> Kept<T> {
    pub fn push(&mut self, item: T) {
        self.total += 1;
        if self.head.len() < KEPT_EACH_END {
            self.head.push(item);
            return;
        }
        if self.tail.len() == KEPT_EACH_END {
            self.tail.pop_front();
        }
        self.tail.push_back(item);
    }

    /// How many were pushed (kept or not).
    pub fn len(&self) -> usize {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// How many were pushed but not kept (between the first and the last few).
    pub fn dropped(&self) -> usize {
        self.total - self.head.len() - self.tail.len()
    }

    pub fn first(&self) -> Option<&T> {
        self.head.first()
    }

    /// The kept items, in arrival order (the first few, then the last few).
    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Kept<T> {
    type Item = &'a T;
    type IntoIter =
        std::iter::Chain<std::slice::Iter<'a, T>, std::collections::vec_deque::Iter<'a, T>>;
    fn into_iter(self) -> Self::IntoIter {
        self.head.iter().chain(self.tail.iter())
    }
}

/// How many distinct methods [`Received`] counts by name (the rest are counted together,
/// so a server inventing a method name per message cannot grow the map).
const METHODS_COUNTED: usize = 64;

/// Messages other than the response received during one exchange: the first and last
/// few kept, and a count per method (`None`: a message without a method, e.g. a late
/// reply, or a method beyond the first [`METHODS_COUNTED`] names).
#[derive(Debug, Clone, Default)]
pub struct Received {
    pub kept: Kept<Value>,
    per_method: Vec<(Option<String>, usize)>,
}

impl Received {
    pub fn push(&mut self, msg: Value) {
        let method = msg.get("method").and_then(Value::as_str);
        let slot = match self
            .per_method
            .iter()
            .position(|(m, _)| m.as_deref() == method)
        {
            Some(i) => Some(i),
            None if method.is_some() && self.per_method.len() >= METHODS_COUNTED => {
                self.per_method.iter().position(|(m, _)| m.is_none())
            }
            None => None,
        };
        match slot {
            Some(i) => self.per_method[i].1 += 1,
            None if method.is_some() && self.per_method.len() >= METHODS_COUNTED => {
                self.per_method.push((None, 1))
            }
            None => self.per_method.push((method.map(str::to_string), 1)),
        }
        self.kept.push(msg);
    }

    /// How many messages of `method` arrived (kept or not).
    pub fn count(&self, method: &str) -> usize {
        self.per_method
            .iter()
            .find(|(m, _)| m.as_deref() == Some(method))
            .map_or(0, |(_, n)| *n)
    }

    /// Counts per method, in order of first arrival (`None`: no method, or uncounted).
    pub fn counts(&self) -> impl Iterator<Item = (Option<&str>, usize)> {
        self.per_method.iter().map(|(m, n)| (m.as_deref(), *n))
    }

    pub fn len(&self) -> usize {
        self.kept.len()
    }

    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    pub fn dropped(&self) -> usize {
        self.kept.dropped()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Value> {
        self.kept.iter()
    }
}

impl FromIterator<Value> for Received {
    fn from_iter<I: IntoIterator<Item = Value>>(messages: I) -> Self {
        let mut received = Received::default();
        received.extend(messages);
        received
    }
}

impl Extend<Value> for Received {
    fn extend<I: IntoIterator<Item = Value>>(&mut self, messages: I) {
        for msg in messages {
            self.push(msg);
        }
    }
}

impl<'a> IntoIterator for &'a Received {
    type Item = &'a Value;
    type IntoIter = <&'a Kept<Value> as IntoIterator>::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        (&self.kept).into_iter()
    }
}

/// Which way a transcript entry went (a word in the reports).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Sent,
    Received,
    Note,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Sent => "sent",
            Direction::Received => "received",
            Direction::Note => "note",
        }
    }
}

impl std::fmt::Display for Direction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One message of a step's exchange with the server.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptEntry {
    /// `sent` or `received` (or `note` for transport events such as a timeout).
    pub direction: Direction,
    /// Milliseconds since the step started.
    pub at_ms: u64,
    /// The JSON-RPC message (or raw body text when it was not JSON), redacted.
    pub body: String,
    /// HTTP status and selected headers, on HTTP.
    pub http: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn received_keeps_both_ends_and_counts_everything() {
        let mut r = Received::default();
        for i in 0..100_000 {
            r.push(serde_json::json!({"method": "notifications/progress", "params": {"i": i}}));
        }
        r.push(serde_json::json!({"id": 1, "result": {}}));
        assert_eq!(r.len(), 100_001);
        assert_eq!(r.count("notifications/progress"), 100_000);
        assert_eq!(r.iter().count(), 2 * KEPT_EACH_END);
        assert_eq!(r.dropped(), 100_001 - 2 * KEPT_EACH_END);
        let kept: Vec<&Value> = r.iter().collect();
        assert_eq!(kept[0]["params"]["i"], 0);
        assert_eq!(kept[KEPT_EACH_END - 1]["params"]["i"], 15);
        assert_eq!(kept[2 * KEPT_EACH_END - 1]["id"], 1);
        // Invented method names cannot grow the counts beyond a bound.
        let mut r = Received::default();
        for i in 0..1000 {
            r.push(serde_json::json!({"method": format!("m{i}")}));
        }
        assert!(r.counts().count() <= METHODS_COUNTED + 1);
        assert_eq!(r.counts().map(|(_, n)| n).sum::<usize>(), 1000);
        assert_eq!(r.count("m0"), 1);
    }
}
