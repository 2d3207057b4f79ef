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
//! SIGTERM → SIGKILL) reaches grandchildren too (`npx`, `uv run`, shell wrappers), and
//! [`super::tree`] catches the ones that leave the group: mcpspec never leaves an orphan
//! behind.

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::process::Command;
use tokio::sync::watch;

use super::{Exchange, Kept, Outgoing, TransportError, id_key, is_response, server_request_reply};

const STDERR_TAIL_LINES: usize = 40;
/// After the process exits, how long to keep reading what it wrote before.
const EXIT_GRACE: Duration = Duration::from_millis(200);
/// Replies to server requests are dropped (counted) while this much output is already
/// waiting for a server that does not read its stdin: the backlog stays bounded.
const REPLY_BACKLOG: usize = 1024 * 1024;
/// How much of a non-JSON line is kept for the report.
const NOISE_CHARS: usize = 500;

/// What the server wrote to stdout, in order.
#[derive(Debug)]
enum Incoming {
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

pub struct StdioTransport {
    /// The process's exit status, once known (a waiter task owns the child).
    exit_rx: watch::Receiver<Option<std::process::ExitStatus>>,
    pgid: Option<i32>,
    /// The value of [`crate::signals::tree::MARKER_VAR`] in this server's environment.
    marker: String,
    stdout: AsyncFd<File>,
    /// `None` once closed (shutdown) or broken (a failed write).
    stdin: Option<AsyncFd<File>>,
    incoming: StdoutReader,
    /// Bytes written by mcpspec and not yet taken by the server, from `pending_start`.
    pending: Vec<u8>,
    pending_start: usize,
    /// Bytes queued and bytes written since the start (a request is sent once
    /// `written` reaches the `queued` count after it).
    queued: u64,
    written: u64,
    /// A write to stdin failed (reported once by `next_event`).
    write_failed: Option<String>,
    /// Why stdin broke, for every later send.
    stdin_broken: Option<String>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Disconnected once the stderr thread has read everything.
    stderr_done: std::sync::mpsc::Receiver<()>,
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
    /// Exchanges answered so far, and how many there were once the handshake was done
    /// (a close right after it is named so).
    answered: usize,
    handshake_answers: Option<usize>,
    /// What the last exchange that failed had received meanwhile (for its report).
    unanswered: Option<Box<Exchange>>,
}

impl StdioTransport {
    pub fn spawn(
        program: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&std::path::Path>,
        max_bytes: usize,
    ) -> std::io::Result<StdioTransport> {
        let marker = crate::signals::tree::new_marker();
        let mut cmd = Command::new(program);
        cmd.args(args)
            .env(crate::signals::tree::MARKER_VAR, &marker)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn()?;
        let pgid = child.id().map(|p| p as i32);
        if let Some(p) = pgid {
            crate::signals::register_group(p);
        }
        let stdout = File::from(child.stdout.take().expect("stdout piped").into_owned_fd()?);
        let stdin = File::from(child.stdin.take().expect("stdin piped").into_owned_fd()?);
        let stderr_pipe = child.stderr.take().expect("stderr piped");
        // A thread keeps the stderr tail (blocking reads: it costs nothing while the server
        // is quiet, and it drains a chatty stderr whatever the runtime is doing).
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let stderr_file = File::from(stderr_pipe.into_owned_fd()?);
        let tail = stderr.clone();
        let (stderr_ended, stderr_done) = std::sync::mpsc::channel::<()>();
        std::thread::Builder::new()
            .name("mcpspec-stderr".into())
            .spawn(move || {
                read_stderr(stderr_file, &tail);
                drop(stderr_ended);
            })?;
        crate::sys::set_nonblocking(stdout.as_fd())?;
        crate::sys::set_nonblocking(stdin.as_fd())?;
        let stdout = crate::sys::register(stdout, Interest::READABLE)?;
        let stdin = crate::sys::register(stdin, Interest::WRITABLE)?;
        let (exit_tx, exit_rx) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await.ok();
            let _ = exit_tx.send(status);
        });
        Ok(StdioTransport {
            exit_rx,
            pgid,
            marker,
            stdout,
            stdin: Some(stdin),
            incoming: StdoutReader::new(max_bytes),
            pending: Vec::new(),
            pending_start: 0,
            queued: 0,
            written: 0,
            write_failed: None,
            stdin_broken: None,
            stderr,
            stderr_done,
            closed: None,
            max_bytes,
            abandoned: HashSet::new(),
            open: HashSet::new(),
            exited: None,
            noise_total: 0,
            answered: 0,
            handshake_answers: None,
            unanswered: None,
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
        self.write_now();
        if let Some(e) = self.write_failed.take() {
            let why = self
                .close_reason(&format!("writing to the server's stdin failed: {e}"))
                .await;
            return Err(TransportError::Closed(why));
        }
        Ok(started)
    }

    /// Queue one line for the server's stdin.
    fn queue(&mut self, body: &[u8]) {
        if self.pending_start == self.pending.len() {
            self.pending.clear();
            self.pending_start = 0;
        }
        self.pending.extend_from_slice(body);
        self.pending.push(b'\n');
        self.queued += body.len() as u64 + 1;
    }

    /// Write pending output until the pipe is full (non-blocking).
    fn write_now(&mut self) {
        let Some(stdin) = self.stdin.as_ref() else {
            return;
        };
        while self.pending_start < self.pending.len() {
            match stdin.get_ref().write(&self.pending[self.pending_start..]) {
                Ok(n) => {
                    self.pending_start += n;
                    self.written += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.fail_writes(e.to_string());
                    return;
                }
            }
        }
    }

    /// Why nothing can be sent any more.
    async fn stdin_gone(&mut self) -> TransportError {
        let why = match self.stdin_broken.clone() {
            Some(e) => {
                self.close_reason(&format!("writing to the server's stdin failed: {e}"))
                    .await
            }
            None => "stdin closed".into(),
        };
        TransportError::Closed(why)
    }

    /// Stdin is broken: nothing pending will ever be written.
    fn fail_writes(&mut self, why: String) {
        self.stdin_broken = Some(why.clone());
        self.write_failed = Some(why);
        self.stdin = None;
        self.pending = Vec::new();
        self.pending_start = 0;
    }

    /// Whether everything queued up to `mark` has been written.
    fn sent(&self, mark: u64) -> bool {
        self.written >= mark
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
                    self.noise_total += 1;
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
                        if let Some(reply) = server_request_reply(&msg) {
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

    fn answer(&mut self, ex: &mut Exchange, started: Instant) {
        ex.elapsed = started.elapsed();
        self.answered += 1;
    }

    /// Queue the answer to a server request, unless too much output is already waiting
    /// (a server that floods requests and reads nothing).
    fn reply(&mut self, text: &str) {
        if self.stdin.is_some() && self.pending.len() - self.pending_start < REPLY_BACKLOG {
            self.queue(text.as_bytes());
            self.write_now();
        }
    }

    /// Write several requests without waiting, then collect their responses (any order).
    /// Returns the responses by request index and the non-JSON lines seen meanwhile.
    pub async fn burst(
        &mut self,
        outs: &[Outgoing],
        timeout: Duration,
    ) -> Result<(Vec<Option<Value>>, Kept<String>), TransportError> {
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        if self.stdin.is_none() {
            return Err(self.stdin_gone().await);
        }
        for out in outs {
            self.queue(out.body.as_bytes());
        }
        let request_end = self.queued;
        self.write_now();
        let keys: Vec<Option<String>> = outs.iter().map(|o| o.id.as_ref().map(id_key)).collect();
        let mut responses: Vec<Option<Value>> = vec![None; outs.len()];
        let mut noise = Kept::default();
        let deadline = super::deadline_after(timeout);
        while responses
            .iter()
            .zip(&keys)
            .any(|(r, k)| r.is_none() && k.is_some())
        {
            match self.next_event(deadline).await {
                Next::Exited => {}
                Next::WriteFailed(e) if !self.sent(request_end) => {
                    let why = self
                        .close_reason(&format!("writing to the server's stdin failed: {e}"))
                        .await;
                    return Err(TransportError::Closed(why));
                }
                Next::WriteFailed(_) => {}
                Next::Timeout if !self.sent(request_end) => {
                    let why = format!(
                        "timed out after {} writing the requests: the server did not read its stdin",
                        humantime::format_duration(timeout)
                    );
                    self.closed = Some(why.clone());
                    return Err(TransportError::Closed(why));
                }
                Next::Timeout => return Err(TransportError::Timeout(timeout)),
                Next::Event(Incoming::Closed) => {
                    let why = self.close_reason("the server closed its stdout").await;
                    return Err(TransportError::Closed(why));
                }
                Next::Event(Incoming::Oversized) => {
                    self.closed = Some(format!("message larger than {} bytes", self.max_bytes));
                    return Err(TransportError::Oversized {
                        limit: self.max_bytes,
                    });
                }
                Next::Event(Incoming::Noise(line)) => {
                    self.noise_total += 1;
                    noise.push(line);
                }
                Next::Event(message @ (Incoming::Message(..) | Incoming::Response(..))) => {
                    if let Incoming::Message(msg, _) = message.parsed() {
                        if let Some(reply) = server_request_reply(&msg) {
                            self.reply(&reply);
                            continue;
                        }
                        let key = msg.get("id").map(id_key);
                        if let Some(i) = keys.iter().position(|k| k.is_some() && *k == key) {
                            responses[i] = Some(msg);
                        }
                    }
                }
            }
        }
        Ok((responses, noise))
    }

    /// Leave the request `id` open: its response may arrive at any time later.
    pub fn hold_open(&mut self, id: &Value) {
        self.open.insert(id_key(id));
    }

    /// The open request `id` was cancelled: a late response to it is still no wrong id.
    pub fn release(&mut self, id: &Value) {
        let key = id_key(id);
        if self.open.remove(&key) {
            self.abandoned.insert(key);
        }
    }

    /// Wait for the next message from the server until `deadline`, sending nothing new
    /// (queued output is still written): `None` at the deadline. Server requests are
    /// answered as during an exchange; non-JSON lines are counted and skipped.
    pub async fn next_message(
        &mut self,
        deadline: Instant,
    ) -> Result<Option<Value>, TransportError> {
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        let mut deadline = deadline;
        loop {
            match self.next_event(deadline).await {
                Next::Exited => deadline = deadline.min(Instant::now() + EXIT_GRACE),
                Next::WriteFailed(_) => {}
                Next::Timeout if self.exited.is_some() => {
                    let why = self.close_reason("the server process exited").await;
                    return Err(TransportError::Closed(why));
                }
                Next::Timeout => return Ok(None),
                Next::Event(Incoming::Closed) => {
                    let why = self.close_reason("the server closed its stdout").await;
                    return Err(TransportError::Closed(why));
                }
                Next::Event(Incoming::Oversized) => {
                    self.closed = Some(format!("message larger than {} bytes", self.max_bytes));
                    self.shutdown_now().await;
                    return Err(TransportError::Oversized {
                        limit: self.max_bytes,
                    });
                }
                Next::Event(Incoming::Noise(_)) => self.noise_total += 1,
                Next::Event(event @ (Incoming::Message(..) | Incoming::Response(..))) => {
                    let Incoming::Message(msg, _) = event.parsed() else {
                        self.noise_total += 1;
                        continue;
                    };
                    if let Some(reply) = server_request_reply(&msg) {
                        self.reply(&reply);
                    }
                    return Ok(Some(msg));
                }
            }
        }
    }

    async fn close_reason(&mut self, what: &str) -> String {
        // Give the process a moment to finish exiting so its status is known.
        let status = match self.exited {
            Some(s) => Some(s),
            None => self.wait_exit(Duration::from_millis(500)).await,
        };
        self.exited = status;
        if status.is_some() {
            // The process is gone: let the stderr thread catch up, so the tail shown with
            // this error has the server's last words.
            let _ = self.stderr_done.recv_timeout(Duration::from_millis(200));
        }
        let why = match status {
            Some(s) => format!("{what} (server exited: {s})"),
            None => what.to_string(),
        };
        self.closed = Some(why.clone());
        why
    }

    /// Last lines of the server's stderr.
    pub fn stderr_tail(&self) -> Option<String> {
        let lines = self.stderr.lock().ok()?;
        if lines.is_empty() {
            return None;
        }
        Some(lines.iter().cloned().collect::<Vec<_>>().join("\n"))
    }

    pub fn noise_total(&self) -> usize {
        self.noise_total
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

    /// Close stdin, wait, then SIGTERM, then SIGKILL the process group; then every
    /// process of the server's tree that is left (see [`super::tree`]).
    pub async fn shutdown(&mut self) {
        self.close_stdin();
        if self.wait_exit(Duration::from_millis(1500)).await.is_none() {
            self.signal(libc::SIGTERM);
            if self.wait_exit(Duration::from_millis(1500)).await.is_none() {
                self.signal(libc::SIGKILL);
                self.wait_exit(Duration::from_secs(5)).await;
            }
        }
        // Grandchildren that outlived the leader still get the group signal, and those
        // that left the group are found by their marker.
        self.kill_tree();
    }

    async fn shutdown_now(&mut self) {
        self.close_stdin();
        self.kill_tree();
        self.wait_exit(Duration::from_secs(5)).await;
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
        self.pending = Vec::new();
        self.pending_start = 0;
    }

    fn kill_tree(&mut self) {
        self.signal(libc::SIGKILL);
        if let Some(p) = self.pgid.take() {
            crate::signals::tree::kill_server_tree(Some(p as u32), &self.marker);
            crate::signals::unregister_group(p);
        }
    }

    /// The exit status, waiting at most `limit` for it.
    /// Meanwhile stdout is drained, so a server blocked writing to a full pipe can exit.
    async fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = super::deadline_after(limit);
        loop {
            if let Some(status) = *self.exit_rx.borrow() {
                self.exited = Some(status);
                return Some(status);
            }
            match self.next_event(deadline).await {
                Next::Timeout => return None,
                Next::Exited
                | Next::WriteFailed(_)
                | Next::Event(
                    Incoming::Message(..) | Incoming::Response(..) | Incoming::Noise(_),
                ) => {}
                Next::Event(Incoming::Closed | Incoming::Oversized) => {
                    // Nothing more to drain: wait for the status alone.
                    let mut rx = self.exit_rx.clone();
                    let status =
                        tokio::time::timeout_at(deadline.into(), rx.wait_for(Option::is_some))
                            .await
                            .ok()
                            .and_then(|r| r.ok().and_then(|s| *s));
                    if status.is_some() {
                        self.exited = status;
                    }
                    return status;
                }
            }
        }
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
            let stdin = match &self.stdin {
                Some(fd) if self.pending_start < self.pending.len() => Some(fd),
                _ => None,
            };
            // Checked here too: a server that floods stdout keeps the reads ready.
            if Instant::now() >= deadline {
                return Next::Timeout;
            }
            let woke = tokio::select! {
                biased;
                ready = writable(stdin) => match ready {
                    Ok(mut guard) => {
                        let chunk = &self.pending[self.pending_start..];
                        match guard.try_io(|f| f.get_ref().write(chunk)) {
                            Ok(Ok(n)) => Woke::Wrote(n),
                            Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => Woke::Io,
                            Ok(Err(e)) => Woke::WriteError(e.to_string()),
                            // The pipe is full: readiness cleared, wait again.
                            Err(_) => Woke::Io,
                        }
                    }
                    Err(e) => Woke::WriteError(e.to_string()),
                },
                guard = self.stdout.readable_mut() => match guard {
                    Ok(mut guard) => {
                        let incoming = &mut self.incoming;
                        match guard.try_io(|f| incoming.read_from(f.get_mut())) {
                            Ok(Ok(0)) | Ok(Err(_)) => incoming.eof = true,
                            Ok(Ok(_)) | Err(_) => {}
                        }
                        Woke::Io
                    }
                    Err(_) => {
                        self.incoming.eof = true;
                        Woke::Io
                    }
                },
                _ = self.exit_rx.changed(), if !exited => Woke::Io,
                _ = &mut sleep => Woke::Timeout,
            };
            match woke {
                Woke::Io => {}
                Woke::Wrote(n) => {
                    self.pending_start += n;
                    self.written += n as u64;
                }
                Woke::WriteError(e) => self.fail_writes(e),
                Woke::Timeout => return Next::Timeout,
            }
        }
    }

    fn signal(&self, sig: i32) {
        if let Some(p) = self.pgid {
            crate::sys::kill_group(p, sig);
        }
    }
}

/// Readiness of stdin for writing; never, when there is nothing to write.
async fn writable(
    stdin: Option<&AsyncFd<File>>,
) -> std::io::Result<tokio::io::unix::AsyncFdReadyGuard<'_, File>> {
    match stdin {
        Some(fd) => fd.writable().await,
        None => std::future::pending().await,
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.kill_tree();
    }
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
    Wrote(usize),
    WriteError(String),
    Timeout,
}

const READ_CHUNK: usize = 64 * 1024;

/// The server's stdout, read by the exchange that waits for it (no reader task: a task
/// and a channel between it and the exchange cost a wake-up per message), framed into
/// lines here. Holds at most one partial line (bounded by the message size limit).
struct StdoutReader {
    /// Bytes read and not yet framed start at `start`.
    buf: Vec<u8>,
    /// What one read(2) fills.
    chunk: Box<[u8]>,
    start: usize,
    max_bytes: usize,
    /// The read end reached EOF (or failed).
    eof: bool,
    /// EOF was reported or a line was too long: nothing more will come.
    ended: bool,
    /// An event put back by [`StdoutReader::requeue`].
    requeued: Option<Incoming>,
}

impl StdoutReader {
    fn new(max_bytes: usize) -> Self {
        StdoutReader {
            buf: Vec::with_capacity(READ_CHUNK),
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            start: 0,
            max_bytes,
            eof: false,
            ended: false,
            requeued: None,
        }
    }

    /// Read once through `chunk` (a buffer kept for it: no zeroing per read) onto `buf`.
    fn read_from(&mut self, file: &mut File) -> std::io::Result<usize> {
        let n = file.read(&mut self.chunk)?;
        self.buf.extend_from_slice(&self.chunk[..n]);
        Ok(n)
    }

    /// Put an event back to be taken next.
    fn requeue(&mut self, event: Incoming) {
        self.requeued = Some(event);
    }

    /// The next complete event in what was read, if any.
    fn take_event(&mut self) -> Option<Incoming> {
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

    fn too_long(&mut self) -> Incoming {
        self.ended = true;
        self.buf = Vec::new();
        self.start = 0;
        Incoming::Oversized
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// A non-JSON line as kept for the report: at most [`NOISE_CHARS`] characters, with a
/// marker when cut.
/// A non-JSON line as kept for the report: redacted, then cut with a marker.
fn noise(text: &str) -> Incoming {
    let mut kept = crate::redact::shorten(text, NOISE_CHARS);
    if text.chars().count() > NOISE_CHARS {
        kept.push_str(&format!(" (truncated, {} bytes)", text.len()));
    }
    Incoming::Noise(kept)
}

fn read_stderr(mut stderr: File, tail: &Arc<Mutex<VecDeque<String>>>) {
    let mut chunk = [0u8; 8192];
    let mut partial = Vec::new();
    loop {
        match stderr.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                for &b in &chunk[..n] {
                    if b == b'\n' {
                        push_stderr_line(tail, &partial);
                        partial.clear();
                    } else if partial.len() < 4096 {
                        partial.push(b);
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    if !partial.is_empty() {
        push_stderr_line(tail, &partial);
    }
}

fn push_stderr_line(tail: &Arc<Mutex<VecDeque<String>>>, line: &[u8]) {
    let line = String::from_utf8_lossy(line);
    let line = line.strip_suffix('\r').unwrap_or(&line);
    if let Ok(mut t) = tail.lock() {
        if t.len() == STDERR_TAIL_LINES {
            t.pop_front();
        }
        t.push_back(crate::redact::shorten(line, 1000));
    }
}

impl Incoming {
    /// A [`Incoming::Response`] parsed whole (a message, or noise if its text is not a JSON
    /// value after all); any other event as it is.
    fn parsed(self) -> Incoming {
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
fn frame(text: &[u8]) -> Incoming {
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
struct Envelope {
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
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

fn trim_line(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

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
