//! stdio transport: newline-delimited JSON-RPC with a child process.
//!
//! One wait path: every wait — for the reply, and for the server to take what is written
//! to its stdin — goes through [`StdioTransport::next_event`], which waits on the tokio
//! reactor for stdout readable, stdin writable (while output is pending) and the
//! deadline at once. Writes never block: a server that stops reading its stdin cannot
//! stall mcpspec past the step's timeout, and stdout is drained while a large request or
//! a burst is written (otherwise both pipes fill up and both sides wait forever).
//!
//! The child runs in its own process group so that shutdown (close stdin → wait →
//! SIGTERM → SIGKILL; see [`crate::ground::platform`] for Windows) reaches grandchildren too (`npx`, `uv run`, shell wrappers), and
//! [`super::tree`] catches the ones that leave the group: mcpspec never leaves an orphan
//! behind.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::watch;

use super::{Outgoing, TransportError, id_key, is_response, server_request_reply};
use crate::results::exchange::Exchange;

use writing::writable;

mod framing;
mod many;
mod process;
mod relay;
mod shared;
mod stderr;
mod writing;

pub use relay::Relayed;
pub use shared::SharedStdio;

use crate::ground::platform::{PipeProbe, PipeReader, PipeWriter};
use framing::{Incoming, StderrProgress, StdoutReader, read_stderr};

const STDERR_TAIL_LINES: usize = 40;
/// Longest wait for the stderr thread to keep what the server had written when a report
/// asks for the tail (normally none: the thread is idle).
const STDERR_CATCH_UP: Duration = Duration::from_millis(100);
/// After the process exits, how long to wait for the stderr thread to read the rest.
const STDERR_DONE_WAIT: Duration = Duration::from_millis(200);
/// After the process exits, how long to keep reading what it wrote before.
const EXIT_GRACE: Duration = Duration::from_millis(200);
/// Replies to server requests are dropped (counted) while this much output is already
/// waiting for a server that does not read its stdin: the backlog stays bounded.
const REPLY_BACKLOG: usize = 1024 * 1024;
/// How much of a non-JSON line is kept for the report.
const NOISE_CHARS: usize = 500;

/// How much of a non-JSON line, and of the line written before it, is kept for the report.
const NOISE_CONTEXT_BYTES: usize = 400;

pub struct StdioTransport {
    /// The process's exit status, once known (a waiter task owns the child).
    exit_rx: watch::Receiver<Option<std::process::ExitStatus>>,
    /// The server process (its group is signalled, and it is reaped, through this).
    leader: process::Leader,
    stdout: PipeReader,
    /// `None` once closed (shutdown) or broken (a failed write).
    stdin: Option<PipeWriter>,
    incoming: StdoutReader,
    /// Bytes written by mcpspec and not yet taken by the server, from `pending_start`.
    pending: Vec<u8>,
    pending_start: usize,
    /// Bytes queued and bytes written since the start (a request is sent once
    /// `written` reaches the `queued` count after it).
    queued: u64,
    written: u64,
    /// The end of the request [`StdioTransport::send`] queued last, and when its last
    /// byte was written (the start of its latency).
    request_mark: u64,
    request_written_at: Option<Instant>,
    /// A write to stdin failed (reported once by `next_event`).
    write_failed: Option<String>,
    /// Why stdin broke, for every later send.
    stdin_broken: Option<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// `true` once the stderr thread has read everything.
    stderr_done: watch::Receiver<bool>,
    /// What the stderr thread has read and kept, and what waits in the pipe.
    stderr_progress: Arc<StderrProgress>,
    /// Stderr lines written before the scenario began (see [`StdioTransport::mark_started`]).
    stderr_from: Option<u64>,
    stderr_probe: Option<PipeProbe>,
    closed: Option<String>,
    max_bytes: usize,
    /// Ids of requests that timed out: a late reply to one is not a wrong id.
    abandoned: HashSet<String>,
    /// Ids of requests left open (see [`super::open`]): their response may come during any
    /// later exchange and is not a wrong id.
    open: HashSet<String>,
    /// Set once the server process has exited (its stdout may still be held open by a
    /// grandchild, so EOF alone would not tell).
    exited: Option<std::process::ExitStatus>,
    /// Non-JSON lines seen on stdout so far.
    noise_total: usize,
    /// The first of them (when its text was kept) and the last line written to stdin
    /// before it, if any: what `stdout_clean` shows.
    first_noise: Option<(String, Option<String>)>,
    /// The start of the last line written to stdin.
    last_written: Option<String>,
    /// Exchanges answered so far, and how many there were once the handshake was done
    /// (a close right after it is named so).
    answered: usize,
    handshake_answers: Option<usize>,
    /// What the last exchange that failed had received meanwhile (for its report).
    unanswered: Option<Box<Exchange>>,
    /// The exchange under way is the hand-over barrier ([`super::Connection::settle_for_handover`]):
    /// a reply to another request is a stale one left behind, received meanwhile, not a
    /// wrong id.
    pub(super) stale_replies_expected: bool,
    /// The scenario's answers to server requests (none: every one gets -32601).
    pub(super) answerer: Option<Arc<super::answers::Answerer>>,
}

impl StdioTransport {
    pub fn spawn(
        program: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&std::path::Path>,
        max_bytes: usize,
        sandbox: bool,
    ) -> std::io::Result<StdioTransport> {
        let process::Spawned {
            leader,
            stdin,
            stdout,
            stderr: stderr_file,
            exit_rx,
        } = process::Leader::spawn(program, args, env, cwd, sandbox)?;
        // A thread keeps the stderr tail (blocking reads: it costs nothing while the server
        // is quiet, and it drains a chatty stderr whatever the runtime is doing).
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr.clone();
        let stderr_progress = Arc::new(StderrProgress::default());
        let progress = stderr_progress.clone();
        let stderr_probe = PipeProbe::of(&stderr_file);
        let (stderr_ended, stderr_done) = watch::channel(false);
        std::thread::Builder::new()
            .name("mcpspec-stderr".into())
            .spawn(move || {
                read_stderr(stderr_file, &tail, &progress);
                stderr_ended.send_replace(true);
                progress.changed.notify_waiters();
            })?;
        Ok(StdioTransport {
            exit_rx,
            leader,
            stdout,
            stdin: Some(stdin),
            incoming: StdoutReader::new(max_bytes),
            pending: Vec::new(),
            pending_start: 0,
            queued: 0,
            written: 0,
            request_mark: 0,
            request_written_at: None,
            write_failed: None,
            stdin_broken: None,
            stderr,
            stderr_done,
            stderr_progress,
            stderr_from: None,
            stderr_probe,
            closed: None,
            max_bytes,
            abandoned: HashSet::new(),
            open: HashSet::new(),
            exited: None,
            noise_total: 0,
            first_noise: None,
            last_written: None,
            answered: 0,
            handshake_answers: None,
            unanswered: None,
            stale_replies_expected: false,
            answerer: None,
        })
    }

    /// Send one message and wait for its response (matched by id).
    pub async fn exchange(&mut self, out: &Outgoing) -> Result<Exchange, TransportError> {
        let started = self.send(out).await?;
        self.receive(out, started).await
    }

    /// Queue one message and write what the pipe takes right now (never waits: the rest
    /// is written by [`StdioTransport::receive`] while it reads). Returns the start of
    /// the exchange.
    pub async fn send(&mut self, out: &Outgoing) -> Result<Instant, TransportError> {
        let started = Instant::now();
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        if self.stdin.is_none() {
            return Err(self.stdin_gone().await);
        }
        self.unanswered = None;
        self.queue(out.body.as_bytes());
        self.request_mark = self.queued;
        self.request_written_at = None;
        self.write_now();
        if let Some(e) = self.write_failed.take() {
            let why = self
                .close_reason(&format!("writing to the server's stdin failed: {e}"))
                .await;
            return Err(TransportError::Closed(why));
        }
        Ok(started)
    }

    /// Wait for the response to `out`, queued by [`StdioTransport::send`] at `started`.
    pub async fn receive(
        &mut self,
        out: &Outgoing,
        started: Instant,
    ) -> Result<Exchange, TransportError> {
        let mut ex = Exchange::default();
        let result = self.receive_into(out, started, &mut ex).await;
        if result.is_err() && (!ex.other_messages.is_empty() || !ex.stdout_noise.is_empty()) {
            self.unanswered = Some(Box::new(ex));
            return result.map(|()| Exchange::default());
        }
        result.map(|()| ex)
    }

    /// What the last exchange that failed received meanwhile (notifications, non-JSON
    /// lines), once.
    pub fn take_unanswered(&mut self) -> Option<Box<Exchange>> {
        self.unanswered.take()
    }

    async fn receive_into(
        &mut self,
        out: &Outgoing,
        started: Instant,
        ex: &mut Exchange,
    ) -> Result<(), TransportError> {
        let wait = if out.expects_response {
            out.timeout
        } else {
            out.quiet_period.min(out.timeout)
        };
        let request_end = self.queued;
        // Writing the request counts against its timeout too (a notification gets the
        // full timeout to be written, then its quiet period).
        let mut deadline = super::deadline_from(
            started,
            wait.max(if self.sent(request_end) {
                Duration::ZERO
            } else {
                out.timeout
            }),
        );
        let expected = out.id.as_ref();
        let mut writing = !self.sent(request_end);
        loop {
            let next = self.next_event(deadline).await;
            if writing && self.sent(request_end) {
                writing = false;
                // Written: a message without a response now waits its quiet period only.
                if !out.expects_response {
                    deadline = deadline.min(Instant::now() + wait);
                }
            }
            match next {
                Next::Exited => {
                    // Read what the process wrote before exiting, briefly.
                    deadline = deadline.min(Instant::now() + EXIT_GRACE);
                }
                Next::WriteFailed(e) if !self.sent(request_end) => {
                    let why = self
                        .close_reason(&format!("writing to the server's stdin failed: {e}"))
                        .await;
                    return Err(TransportError::Closed(why));
                }
                // A reply to a server request could not be written: best effort.
                Next::WriteFailed(_) => {}
                Next::Timeout if self.exited.is_some() => {
                    let why = self.close_reason("the server process exited").await;
                    return Err(TransportError::Closed(why));
                }
                Next::Timeout if !self.sent(request_end) => {
                    ex.elapsed = started.elapsed();
                    let size = out.body.len() + 1;
                    let left = (request_end - self.written) as usize;
                    let why = format!(
                        "timed out after {} writing the request: the server did not read its stdin ({} of {size} bytes written)",
                        humantime::format_duration(out.timeout),
                        size.saturating_sub(left),
                    );
                    // Half a message is in the pipe: nothing later can be framed.
                    self.closed = Some(why.clone());
                    return Err(TransportError::Closed(why));
                }
                Next::Timeout => {
                    ex.elapsed = started.elapsed();
                    return if out.expects_response {
                        if let Some(id) = expected {
                            self.abandoned.insert(id_key(id));
                        }
                        Err(TransportError::Timeout(wait))
                    } else {
                        Ok(())
                    };
                }
                Next::Event(Incoming::Closed) => {
                    let what = if self.handshake_answers == Some(self.answered) {
                        "the server closed its stdout after the handshake"
                    } else {
                        "the server closed its stdout"
                    };
                    let why = self.close_reason(what).await;
                    return Err(TransportError::Closed(why));
                }
                Next::Event(Incoming::Oversized) => {
                    self.closed = Some(format!("message larger than {} bytes", self.max_bytes));
                    self.shutdown_now().await;
                    return Err(TransportError::Oversized {
                        limit: self.max_bytes,
                    });
                }
                Next::Event(Incoming::Noise(text)) => {
                    self.noise_seen(Some(text.as_str()));
                    ex.stdout_noise.push(text);
                }
                Next::Event(Incoming::Response(id, text))
                    if self.abandoned.is_empty() && expected == Some(&id) =>
                {
                    ex.response_text = Some(text);
                    ex.unsettled = true;
                    self.answer(ex, started);
                    return Ok(());
                }
                Next::Event(response @ Incoming::Response(..)) => {
                    // Not the awaited reply: routed as any other message.
                    self.incoming.requeue(response.parsed());
                }
                Next::Event(Incoming::Message(msg, text)) => {
                    if !is_response(&msg) {
                        let answerer = self.answerer.clone();
                        let left = deadline.saturating_duration_since(Instant::now());
                        if let Some(reply) =
                            server_request_reply(&msg, answerer.as_deref(), left).await
                        {
                            self.reply(&reply);
                        }
                        ex.other_messages.push(msg);
                        continue;
                    }
                    let got = msg.get("id").unwrap_or(&Value::Null);
                    if !self.open.is_empty() && self.open.contains(&id_key(got)) {
                        // The end of a request left open: it belongs to its stream.
                        ex.other_messages.push(msg);
                        continue;
                    }
                    if !self.abandoned.is_empty() && self.abandoned.remove(&id_key(got)) {
                        // A late reply to a request that already timed out.
                        ex.other_messages.push(msg);
                        continue;
                    }
                    // Ids match as JSON values (`1` and `1.0` differ, as on the wire).
                    match expected {
                        Some(id) if id == got => {}
                        Some(_) if self.stale_replies_expected => {
                            ex.other_messages.push(msg);
                            continue;
                        }
                        // A second copy of the reply to the hand-over barrier before this
                        // scenario (a server that writes every reply twice): not its own,
                        // nor the answer to a notification.
                        _ if is_handover_id(got) => {
                            ex.notes.push(format!(
                                "a second reply to the hand-over request after the scenario before (id {got}) arrived now: not judged here"
                            ));
                            continue;
                        }
                        // A parse error answer (`id: null`) to a raw message without id.
                        None if out.expects_response && got.is_null() => {}
                        Some(id) => {
                            let got = got.clone();
                            let error = msg.get("error").cloned().map(Box::new);
                            ex.other_messages.push(msg);
                            return Err(TransportError::WrongId {
                                expected: id.clone(),
                                got,
                                error,
                            });
                        }
                        // A reply to a message that expects none (a notification).
                        None if !out.expects_response => {}
                        None => {
                            ex.other_messages.push(msg);
                            continue;
                        }
                    }
                    ex.response = Some(msg);
                    ex.response_text = Some(text);
                    self.answer(ex, started);
                    return Ok(());
                }
            }
        }
    }

    /// The reply to the request is read: its latency is from the request's last byte
    /// written to the read that brought the reply's last byte (stamped in
    /// [`StdioTransport::next_event`] as the bytes arrive, before parsing).
    fn answer(&mut self, ex: &mut Exchange, started: Instant) {
        let from = self.request_written_at.unwrap_or(started);
        ex.elapsed = self.incoming.read_at.saturating_duration_since(from);
        self.answered += 1;
    }

    /// A request is held open (a listen stream not cancelled): the server may still send
    /// for it.
    pub fn holds_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// The connection goes to another scenario: what the last failed exchange received
    /// is not its business.
    pub fn forget_exchanges(&mut self) {
        self.unanswered = None;
    }

    pub fn is_closed(&self) -> bool {
        self.closed.is_some()
    }

    /// Why the connection cannot be used any more, if it cannot.
    pub fn closed_reason(&self) -> Option<&str> {
        self.closed.as_deref()
    }

    /// The handshake is complete: a close before the next answer happened "after the
    /// handshake".
    pub fn mark_handshake(&mut self) {
        self.handshake_answers = Some(self.answered);
    }

    /// Mark the connection unusable (the step that found it dead says why).
    pub fn mark_closed(&mut self, why: String) {
        self.closed.get_or_insert(why);
    }

    /// The next thing the server wrote, or why there is none: the deadline passed, a
    /// write failed, or the process was just seen to exit (each reported once). Pending
    /// output is written as the server takes it, all the while.
    async fn next_event(&mut self, deadline: Instant) -> Next {
        let sleep = tokio::time::sleep_until(deadline.into());
        let mut sleep = std::pin::pin!(sleep);
        loop {
            if self.exited.is_none()
                && let Some(status) = *self.exit_rx.borrow()
            {
                self.exited = Some(status);
                return Next::Exited;
            }
            if let Some(event) = self.incoming.take_event() {
                return Next::Event(event);
            }
            if let Some(e) = self.write_failed.take() {
                return Next::WriteFailed(e);
            }
            let exited = self.exited.is_some();
            let stdin = match &mut self.stdin {
                Some(pipe) if self.pending_start < self.pending.len() => Some(pipe),
                _ => None,
            };
            // Checked here too: a server that floods stdout keeps the reads ready.
            if Instant::now() >= deadline {
                return Next::Timeout;
            }
            let woke = tokio::select! {
                biased;
                wrote = writable(stdin, &self.pending[self.pending_start..]) => match wrote {
                    Ok((n, at)) => Woke::Wrote(n, at),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => Woke::Io,
                    Err(e) => Woke::WriteError(e.to_string()),
                },
                read = self.stdout.read(self.incoming.chunk()) => {
                    // Stamped where the bytes arrive, before any framing or parsing.
                    self.incoming.read_at = Instant::now();
                    match read {
                        Ok(0) | Err(_) => self.incoming.eof = true,
                        Ok(n) => self.incoming.accept(n),
                    }
                    Woke::Io
                },
                _ = self.exit_rx.changed(), if !exited => Woke::Io,
                _ = &mut sleep => Woke::Timeout,
            };
            match woke {
                Woke::Io => {}
                Woke::Wrote(n, at) => self.advance(n, at),
                Woke::WriteError(e) => self.fail_writes(e),
                Woke::Timeout => return Next::Timeout,
            }
        }
    }
}

/// The id of every hand-over request ([`super::Connection::settle_for_handover`]) starts
/// so: no scenario's request has one like it.
pub(super) const HANDOVER_ID_PREFIX: &str = "mcpspec-handover-";

fn is_handover_id(id: &Value) -> bool {
    id.as_str()
        .is_some_and(|s| s.starts_with(HANDOVER_ID_PREFIX))
}

/// What [`StdioTransport::next_event`] found.
enum Next {
    Event(Incoming),
    Timeout,
    Exited,
    /// Writing to stdin failed (the server closed it or exited).
    WriteFailed(String),
}

/// Why the reactor woke the wait.
enum Woke {
    Io,
    Wrote(usize, Instant),
    WriteError(String),
    Timeout,
}
