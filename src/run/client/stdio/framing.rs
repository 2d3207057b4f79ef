//! The server's stdout framed into messages (newline-delimited JSON, one partial line held
//! at most), and its stderr kept as a bounded tail for reports.

use serde_json::Value;
use std::collections::VecDeque;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{NOISE_CHARS, STDERR_TAIL_LINES};

/// What the server wrote to stdout, in order.
#[derive(Debug)]
pub(super) enum Incoming {
    /// The message and its line as received (for the transcript).
    Message(Value, String),
    /// A response (id, `result` or `error`, no `method`) not parsed yet beyond its id: the
    /// exchange waiting for it hands the text on, and the message is built off the
    /// request-to-request path (see [`Exchange::settle`]).
    Response(Value, String),
    Noise(String),
    Oversized,
    Closed,
}

const READ_CHUNK: usize = 64 * 1024;

/// The server's stdout, read by the exchange that waits for it (no reader task: a task
/// and a channel between it and the exchange cost a wake-up per message), framed into
/// lines here. Holds at most one partial line (bounded by the message size limit).
pub(super) struct StdoutReader {
    /// Bytes read and not yet framed start at `start`.
    buf: Vec<u8>,
    /// What one read(2) fills.
    chunk: Box<[u8]>,
    start: usize,
    max_bytes: usize,
    /// The read end reached EOF (or failed).
    pub(super) eof: bool,
    /// EOF was reported or a line was too long: nothing more will come.
    ended: bool,
    /// An event put back by [`StdoutReader::requeue`].
    requeued: Option<Incoming>,
    /// When the last read returned (set by the reader as the bytes arrive): the time the
    /// events framed from it were received.
    pub(super) read_at: Instant,
}

impl StdoutReader {
    pub(super) fn new(max_bytes: usize) -> Self {
        StdoutReader {
            buf: Vec::with_capacity(READ_CHUNK),
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            start: 0,
            max_bytes,
            eof: false,
            ended: false,
            requeued: None,
            read_at: Instant::now(),
        }
    }

    /// The buffer one read fills (kept for it: no zeroing per read); then [`Self::accept`].
    pub(super) fn chunk(&mut self) -> &mut [u8] {
        &mut self.chunk
    }

    /// Take the first `n` bytes of the chunk just read onto `buf`.
    pub(super) fn accept(&mut self, n: usize) {
        self.buf.extend_from_slice(&self.chunk[..n]);
    }

    /// Put an event back to be taken next.
    pub(super) fn requeue(&mut self, event: Incoming) {
        self.requeued = Some(event);
    }

    /// The next complete event in what was read, if any.
    pub(super) fn take_event(&mut self) -> Option<Incoming> {
        if let Some(event) = self.requeued.take() {
            return Some(event);
        }
        loop {
            if self.ended {
                return Some(Incoming::Closed);
            }
            let pending = &self.buf[self.start..];
            let (line_end, next_start) = match memchr_newline(pending) {
                Some(i) => (self.start + i, self.start + i + 1),
                // At EOF a last line without a newline still counts.
                None if self.eof && !pending.is_empty() => (self.buf.len(), self.buf.len()),
                None if self.eof => {
                    self.ended = true;
                    return Some(Incoming::Closed);
                }
                None => {
                    if pending.len() > self.max_bytes + 1 {
                        return Some(self.too_long());
                    }
                    if self.start > 0 && self.start * 2 >= self.buf.len() {
                        self.buf.drain(..self.start);
                        self.start = 0;
                    }
                    return None;
                }
            };
            if next_start - self.start > self.max_bytes + 1 {
                return Some(self.too_long());
            }
            let text = trim_line(&self.buf[self.start..line_end]);
            let event = (!text.is_empty()).then(|| frame(text));
            self.start = next_start;
            if self.start == self.buf.len() {
                self.buf.clear();
                self.start = 0;
            }
            if let Some(event) = event {
                return Some(event);
            }
        }
    }

    pub(super) fn too_long(&mut self) -> Incoming {
        self.ended = true;
        self.buf = Vec::new();
        self.start = 0;
        Incoming::Oversized
    }
}

pub(super) fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// A non-JSON line as kept for the report: at most [`NOISE_CHARS`] characters, with a
/// marker when cut.
/// A non-JSON line as kept for the report: redacted, then cut with a marker.
pub(super) fn noise(text: &str) -> Incoming {
    let mut kept = crate::ground::redact::shorten(text, NOISE_CHARS);
    if text.chars().count() > NOISE_CHARS {
        kept.push_str(&format!(" (truncated, {} bytes)", text.len()));
    }
    Incoming::Noise(kept)
}

/// How far the stderr thread has got: bytes read from the pipe, and bytes of those that
/// are in the tail (their lines kept). Equal and nothing pending in the pipe: the tail holds
/// every line written so far.
#[derive(Default)]
pub(super) struct StderrProgress {
    pub(super) read: AtomicU64,
    pub(super) kept: AtomicU64,
    /// Lines written so far (the tail keeps the last of them); counted under the tail's lock.
    pub(super) lines: AtomicU64,
    /// Notified each time `kept` grows (and when the thread ends): what an async wait for
    /// the tail waits on, instead of a sleep loop on the engine's task.
    pub(super) changed: tokio::sync::Notify,
}

pub(super) fn read_stderr(
    mut stderr: impl Read,
    tail: &Arc<Mutex<VecDeque<String>>>,
    progress: &StderrProgress,
) {
    let mut chunk = [0u8; 8192];
    let mut partial = Vec::new();
    loop {
        match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                progress.read.fetch_add(n as u64, Ordering::AcqRel);
                for &b in &chunk[..n] {
                    if b == b'\n' {
                        push_stderr_line(tail, progress, &partial);
                        partial.clear();
                    } else if partial.len() < 4096 {
                        partial.push(b);
                    }
                }
                progress.kept.fetch_add(n as u64, Ordering::AcqRel);
                progress.changed.notify_waiters();
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if !partial.is_empty() {
        push_stderr_line(tail, progress, &partial);
    }
}

pub(super) fn push_stderr_line(
    tail: &Arc<Mutex<VecDeque<String>>>,
    progress: &StderrProgress,
    line: &[u8],
) {
    let line = String::from_utf8_lossy(line);
    let line = line.strip_suffix('\r').unwrap_or(&line);
    if let Ok(mut t) = tail.lock() {
        if t.len() == STDERR_TAIL_LINES {
            t.pop_front();
        }
        t.push_back(crate::ground::redact::shorten(line, 1000));
        progress.lines.fetch_add(1, Ordering::AcqRel);
    }
}

impl Incoming {
    /// A [`Incoming::Response`] parsed whole (a message, or noise if its text is not a JSON
    /// value after all); any other event as it is.
    pub(super) fn parsed(self) -> Incoming {
        match self {
            Incoming::Response(_, text) => match serde_json::from_str(&text) {
                Ok(msg) => Incoming::Message(msg, text),
                Err(_) => noise(&text),
            },
            other => other,
        }
    }
}

/// One non-empty stdout line as an event. A response is only checked (valid JSON, its
/// routing fields) and its id read; anything else is parsed whole.
pub(super) fn frame(text: &[u8]) -> Incoming {
    let Ok(line) = std::str::from_utf8(text) else {
        return noise(&String::from_utf8_lossy(text));
    };
    if let Ok(envelope) = serde_json::from_str::<Envelope>(line)
        && envelope.method.is_none()
        && (envelope.result.is_some() || envelope.error.is_some())
        && let Some(id) = envelope.id
    {
        return Incoming::Response(id, line.to_owned());
    }
    match serde_json::from_str::<Value>(line) {
        Ok(v) if v.is_object() || v.is_array() => Incoming::Message(v, line.to_owned()),
        _ => noise(line),
    }
}

/// The fields a JSON-RPC message is routed by; the others are checked and skipped.
#[derive(serde::Deserialize)]
pub(super) struct Envelope {
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: Option<serde::de::IgnoredAny>,
    #[serde(default, deserialize_with = "present")]
    result: Option<serde::de::IgnoredAny>,
    #[serde(default, deserialize_with = "present")]
    error: Option<serde::de::IgnoredAny>,
}

/// A member that is there, even when `null` (`Option` alone reads `null` as absent).
pub(super) fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

pub(super) fn trim_line(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::exchange::Exchange;

    fn framed(line: &str) -> Incoming {
        frame(line.as_bytes())
    }

    /// Only a plain response is left unparsed; its id is read exactly (`null` included).
    #[test]
    fn responses_are_framed_by_their_envelope() {
        match framed(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#) {
            Incoming::Response(id, text) => {
                assert_eq!(id, serde_json::json!(7));
                assert!(text.ends_with("}}"));
            }
            other => panic!("{other:?}"),
        }
        match framed(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}"#) {
            Incoming::Response(id, _) => assert!(id.is_null()),
            other => panic!("{other:?}"),
        }
        // A server request, a notification, a batch, a message without a result: whole.
        for line in [
            r#"{"jsonrpc":"2.0","id":"s1","method":"roots/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
        ] {
            assert!(matches!(framed(line), Incoming::Message(..)), "{line}");
        }
        for line in ["not json", "42", r#"{"id":1,"result":"#, "\u{1b}[31mred"] {
            assert!(matches!(framed(line), Incoming::Noise(_)), "{line}");
        }
        assert!(matches!(
            frame(b"{\"id\":1,\"result\":\"\xff\"}"),
            Incoming::Noise(_)
        ));
    }

    /// A response matched by id is parsed when settled; one that is not a JSON value after
    /// all (a number beyond f64) becomes the raw body.
    #[test]
    fn settling_parses_or_keeps_the_raw_text() {
        let mut ex = Exchange {
            response_text: Some(r#"{"jsonrpc":"2.0","id":1,"result":{"n":1}}"#.into()),
            unsettled: true,
            ..Exchange::default()
        };
        ex.settle();
        assert_eq!(ex.response.as_ref().unwrap()["result"]["n"], 1);
        assert!(!ex.unsettled);
        let huge = r#"{"jsonrpc":"2.0","id":1,"result":{"n":1e999}}"#;
        assert!(matches!(framed(huge), Incoming::Response(..)));
        let mut ex = Exchange {
            response_text: Some(huge.into()),
            unsettled: true,
            ..Exchange::default()
        };
        ex.settle();
        assert!(ex.response.is_none());
        assert_eq!(ex.raw_body.as_deref(), Some(huge));
    }
}
