//! One server process, many connections (`mcpspec load --stdio-mode shared`): the
//! requests of every connection are written to the one process as they come and its
//! replies routed back by id, so the server's own concurrency is what is measured.
//!
//! A task owns the process ([`StdioTransport`]); each connection holds a [`SharedStdio`]
//! handle. Ids are the connections' own in their transcripts: on the wire each request
//! gets one of the process's (unique across connections) and its reply the original back.
//! The process ends when the last handle is dropped, or when it broke (every request
//! waiting then fails with why).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use super::framing::Incoming;
use super::{EXIT_GRACE, Next, StdioTransport};
use crate::results::exchange::Exchange;
use crate::run::client::{
    Outgoing, TransportError, deadline_after, id_key, is_response, server_request_reply,
};

/// Ids on the wire of a shared process start here: above any id of the opening handshake.
const FIRST_WIRE_ID: u64 = 1 << 32;
/// Waiters whose request timed out are dropped this often (in requests sent).
const PRUNE_EVERY: u64 = 1024;

/// The reply's line and its latency (from the request's last byte written, when the Mux
/// saw it written at once, to the read that brought the reply).
type Reply = Result<(String, Option<Duration>), TransportError>;

/// One message for the process: its line, and where its reply goes (none: a notification).
struct Request {
    body: String,
    reply: Option<(String, oneshot::Sender<Reply>)>,
}

/// A handle on the shared process (cloned for each connection).
#[derive(Clone)]
pub struct SharedStdio {
    tx: mpsc::UnboundedSender<Request>,
    next_id: Arc<AtomicU64>,
    /// Why the process cannot be used any more, once known.
    closed: Arc<OnceLock<String>>,
    /// Set once the process has been shut down.
    ended: watch::Receiver<bool>,
}

impl SharedStdio {
    /// Hand `transport` (opened: its handshake done) to a task of its own.
    pub fn start(transport: StdioTransport) -> SharedStdio {
        let (tx, rx) = mpsc::unbounded_channel();
        let closed = Arc::new(OnceLock::new());
        let (ended_tx, ended) = watch::channel(false);
        let task = Mux {
            transport,
            waiters: HashMap::new(),
            closed: closed.clone(),
        };
        tokio::spawn(async move {
            task.run(rx).await;
            let _ = ended_tx.send(true);
        });
        SharedStdio {
            tx,
            next_id: Arc::new(AtomicU64::new(FIRST_WIRE_ID)),
            closed,
            ended,
        }
    }

    /// A handle on no process (a placeholder).
    pub fn closed() -> SharedStdio {
        let (tx, _) = mpsc::unbounded_channel();
        let (_, ended) = watch::channel(true);
        SharedStdio {
            tx,
            next_id: Arc::new(AtomicU64::new(FIRST_WIRE_ID)),
            closed: Arc::new(OnceLock::from("no server process".to_string())),
            ended,
        }
    }

    /// Why the process cannot be used any more, if it cannot.
    pub fn closed_reason(&self) -> Option<&str> {
        self.closed.get().map(String::as_str)
    }

    /// Wait until the process has been shut down (every handle dropped, or it broke).
    pub async fn ended(self) {
        let mut ended = self.ended.clone();
        drop(self);
        let _ = ended.wait_for(|e| *e).await;
    }

    /// Send `out` and wait for its reply (a notification: until it is queued).
    pub async fn exchange(&self, out: &Outgoing) -> Result<Exchange, TransportError> {
        let started = Instant::now();
        if let Some(why) = self.closed_reason() {
            return Err(TransportError::Closed(why.to_string()));
        }
        let own_id = out.id.as_ref().filter(|_| out.expects_response);
        let (body, key) = match own_id {
            None => (out.body.clone(), None),
            Some(id) => match serde_json::from_str::<Value>(&out.body) {
                Ok(Value::Object(mut msg)) => {
                    let wire = self.next_id.fetch_add(1, Ordering::Relaxed);
                    msg.insert("id".into(), Value::from(wire));
                    (
                        Value::Object(msg).to_string(),
                        Some(id_key(&Value::from(wire))),
                    )
                }
                // Not an object to renumber (a raw probe): sent as written, its reply
                // matched by the id as written.
                _ => (out.body.clone(), Some(id_key(id))),
            },
        };
        let closed = || {
            TransportError::Closed(
                self.closed_reason()
                    .unwrap_or("the shared server process ended")
                    .to_string(),
            )
        };
        let Some(key) = key else {
            self.tx
                .send(Request { body, reply: None })
                .map_err(|_| closed())?;
            return Ok(Exchange {
                elapsed: started.elapsed(),
                ..Exchange::default()
            });
        };
        let (reply_tx, reply_rx) = oneshot::channel();
        self.tx
            .send(Request {
                body,
                reply: Some((key, reply_tx)),
            })
            .map_err(|_| closed())?;
        let (text, latency) = match tokio::time::timeout(out.timeout, reply_rx).await {
            Ok(Ok(reply)) => reply?,
            Ok(Err(_)) => return Err(closed()),
            Err(_) => return Err(TransportError::Timeout(out.timeout)),
        };
        let elapsed = latency.unwrap_or_else(|| started.elapsed());
        let mut ex = Exchange {
            elapsed,
            ..Exchange::default()
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(mut msg)) => {
                if let Some(id) = own_id {
                    msg.insert("id".into(), id.clone());
                }
                let msg = Value::Object(msg);
                ex.response_text = Some(msg.to_string());
                ex.response = Some(msg);
            }
            _ => ex.raw_body = Some(text),
        }
        Ok(ex)
    }
}

/// The task that owns the process.
struct Mux {
    transport: StdioTransport,
    /// Requests waiting for their reply, by the wire id's key, and when the request's
    /// last byte was written (when it was written at once).
    waiters: HashMap<String, (oneshot::Sender<Reply>, Option<Instant>)>,
    closed: Arc<OnceLock<String>>,
}

/// What woke the task.
enum Woke {
    Request(Option<Request>),
    Server(Next),
}

impl Mux {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Request>) {
        let mut sent = 0u64;
        // After the process exited: read what it wrote before, until then.
        let mut exit_grace: Option<Instant> = None;
        loop {
            let deadline = exit_grace.unwrap_or_else(|| deadline_after(Duration::from_secs(3600)));
            let woke = tokio::select! {
                biased;
                r = rx.recv() => Woke::Request(r),
                next = self.transport.next_event(deadline) => Woke::Server(next),
            };
            match woke {
                Woke::Request(None) => break,
                Woke::Request(Some(r)) => {
                    if self.transport.stdin.is_none() {
                        let why = self.transport.stdin_gone().await;
                        self.close(why.to_string());
                        break;
                    }
                    self.transport.queue(r.body.as_bytes());
                    // Stamped before the write (see `StdioTransport::advance`).
                    let before = Instant::now();
                    self.transport.write_now();
                    let mark = self.transport.queued;
                    let written = self.transport.sent(mark).then_some(before);
                    if let Some((key, reply)) = r.reply {
                        self.waiters.insert(key, (reply, written));
                    }
                    sent += 1;
                    if sent.is_multiple_of(PRUNE_EVERY) {
                        self.waiters.retain(|_, (w, _)| !w.is_closed());
                    }
                }
                Woke::Server(Next::Exited) => {
                    exit_grace = Some(Instant::now() + EXIT_GRACE);
                }
                Woke::Server(Next::Timeout) => {
                    if exit_grace.is_some() {
                        let why = self
                            .transport
                            .close_reason("the server process exited")
                            .await;
                        self.close(why);
                        break;
                    }
                }
                Woke::Server(Next::WriteFailed(e)) => {
                    let why = self
                        .transport
                        .close_reason(&format!("writing to the server's stdin failed: {e}"))
                        .await;
                    self.close(why);
                    break;
                }
                Woke::Server(Next::Event(Incoming::Closed)) => {
                    let why = self
                        .transport
                        .close_reason("the server closed its stdout")
                        .await;
                    self.close(why);
                    break;
                }
                Woke::Server(Next::Event(Incoming::Oversized)) => {
                    let max = self.transport.max_bytes;
                    self.close(format!("message larger than {max} bytes"));
                    break;
                }
                Woke::Server(Next::Event(Incoming::Noise(_))) => self.transport.noise_total += 1,
                Woke::Server(Next::Event(Incoming::Response(id, text))) => {
                    self.route(&id, text);
                }
                Woke::Server(Next::Event(Incoming::Message(msg, text))) => {
                    if is_response(&msg) {
                        self.route(msg.get("id").unwrap_or(&Value::Null), text);
                        continue;
                    }
                    let answerer = self.transport.answerer.clone();
                    let wait = Duration::from_secs(30);
                    if let Some(reply) = server_request_reply(&msg, answerer.as_deref(), wait).await
                    {
                        self.transport.reply(&reply);
                    }
                    // A notification: no connection's own (it was not asked for by one).
                }
            }
        }
        self.transport.shutdown().await;
    }

    /// The reply `text` to the request with wire id `id`, to whoever waits for it (no
    /// one, when it timed out).
    fn route(&mut self, id: &Value, text: String) {
        if let Some((waiter, written)) = self.waiters.remove(&id_key(id)) {
            let read = self.transport.incoming.read_at;
            let latency = written.map(|w| read.saturating_duration_since(w));
            let _ = waiter.send(Ok((text, latency)));
        }
    }

    /// The process broke: every request waiting, and every later one, fails with `why`.
    fn close(&mut self, why: String) {
        let why = self.closed.get_or_init(|| why).clone();
        self.transport.mark_closed(why.clone());
        for (_, (waiter, _)) in self.waiters.drain() {
            let _ = waiter.send(Err(TransportError::Closed(why.clone())));
        }
    }
}
