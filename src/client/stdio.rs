//! stdio transport: newline-delimited JSON-RPC with a child process.
//!
//! The child runs in its own process group so that shutdown (close stdin → wait →
//! SIGTERM → SIGKILL) reaches grandchildren too (`npx`, `uv run`, shell wrappers):
//! mcpspec never leaves an orphan behind.

use std::collections::{HashSet, VecDeque};
use std::fs::File;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::io::unix::AsyncFd;
use tokio::process::{ChildStdin, Command};
use tokio::sync::watch;

use super::{Exchange, Outgoing, TransportError, id_key, is_response, server_request_reply};

const STDERR_TAIL_LINES: usize = 40;
/// After the process exits, how long to keep reading what it wrote before.
const EXIT_GRACE: Duration = Duration::from_millis(200);

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
    stdin: Option<ChildStdin>,
    incoming: StdoutReader,
    stderr: Arc<Mutex<VecDeque<String>>>,
    /// Disconnected once the stderr thread has read everything.
    stderr_done: std::sync::mpsc::Receiver<()>,
    closed: Option<String>,
    max_bytes: usize,
    /// Ids of requests that timed out: a late reply to one is not a wrong id.
    abandoned: HashSet<String>,
    /// Set once the server process has exited (its stdout may still be held open by a
    /// grandchild, so EOF alone would not tell).
    exited: Option<std::process::ExitStatus>,
    /// Non-JSON lines seen on stdout so far.
    noise_total: usize,
    /// The line being written, kept between messages (one allocation, not one each).
    write_buf: Vec<u8>,
}

impl StdioTransport {
    pub fn spawn(
        program: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&std::path::Path>,
        max_bytes: usize,
    ) -> std::io::Result<StdioTransport> {
        let mut cmd = Command::new(program);
        cmd.args(args)
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
        let stdout = child.stdout.take().expect("stdout piped").into_owned_fd()?;
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
        // On a current-thread runtime nothing else needs this thread while a reply is
        // awaited, so the transport reads stdout itself with a blocking read(2): one system
        // call per message, and no reactor round trip (two epoll calls, a timer, a task
        // wake-up).
        let direct = tokio::runtime::Handle::current().runtime_flavor()
            == tokio::runtime::RuntimeFlavor::CurrentThread;
        let wait = if direct {
            Wait::Direct {
                // tokio hands the pipe over in blocking mode, as wanted here.
                stdout: File::from(stdout),
                blocker: super::slicer::Blocker::register(),
            }
        } else {
            // SAFETY: the `File` owns its descriptor, which stays open for as long as the
            // `AsyncFd` that owns the `File`, and always reports that same descriptor.
            let registered = unsafe {
                AsyncFd::register_with_interest(nonblocking(stdout)?, tokio::io::Interest::READABLE)
            };
            Wait::Reactor(registered?)
        };
        let stdin = child.stdin.take();
        let (exit_tx, exit_rx) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await.ok();
            let _ = exit_tx.send(status);
        });
        Ok(StdioTransport {
            stdin,
            exit_rx,
            pgid,
            incoming: StdoutReader::new(wait, max_bytes),
            stderr,
            stderr_done,
            closed: None,
            max_bytes,
            abandoned: HashSet::new(),
            exited: None,
            noise_total: 0,
            write_buf: Vec::new(),
        })
    }

    /// Send one message and wait for its response (matched by id).
    pub async fn exchange(&mut self, out: &Outgoing) -> Result<Exchange, TransportError> {
        let started = self.send(out).await?;
        self.receive(out, started).await
    }

    /// Write one message; returns when it was written (the start of the exchange).
    pub async fn send(&mut self, out: &Outgoing) -> Result<Instant, TransportError> {
        let started = Instant::now();
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        let mut line = std::mem::take(&mut self.write_buf);
        line.clear();
        line.extend_from_slice(out.body.as_bytes());
        line.push(b'\n');
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| TransportError::Closed("stdin closed".into()))?;
        if let Err(e) = stdin.write_all(&line).await {
            let why = self
                .close_reason(&format!("writing to the server's stdin failed: {e}"))
                .await;
            return Err(TransportError::Closed(why));
        }
        let _ = stdin.flush().await;
        self.write_buf = line;
        Ok(started)
    }

    /// Wait for the response to `out`, written by [`StdioTransport::send`] at `started`.
    pub async fn receive(
        &mut self,
        out: &Outgoing,
        started: Instant,
    ) -> Result<Exchange, TransportError> {
        let mut ex = Exchange::default();
        let wait = if out.expects_response {
            out.timeout
        } else {
            out.quiet_period.min(out.timeout)
        };
        let mut deadline = super::deadline_after(wait);
        let expected = out.id.as_ref();
        loop {
            match self.next_event(deadline).await {
                Next::Exited => {
                    // Read what the process wrote before exiting, briefly.
                    deadline = deadline.min(Instant::now() + EXIT_GRACE);
                }
                Next::Timeout if self.exited.is_some() => {
                    let why = self.close_reason("the server process exited").await;
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
                        Ok(ex)
                    };
                }
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
                Next::Event(Incoming::Noise(text)) => {
                    self.noise_total += 1;
                    ex.stdout_noise.push(text);
                }
                Next::Event(Incoming::Response(id, text))
                    if self.abandoned.is_empty() && expected == Some(&id) =>
                {
                    ex.response_text = Some(text);
                    ex.unsettled = true;
                    ex.elapsed = started.elapsed();
                    return Ok(ex);
                }
                Next::Event(response @ Incoming::Response(..)) => {
                    // Not the awaited reply: routed as any other message.
                    self.incoming.requeue(response.parsed());
                }
                Next::Event(Incoming::Message(msg, text)) => {
                    if !is_response(&msg) {
                        if let Some(reply) = server_request_reply(&msg) {
                            self.write_line(&reply).await;
                        }
                        ex.other_messages.push(msg);
                        continue;
                    }
                    let got = msg.get("id").unwrap_or(&Value::Null);
                    if !self.abandoned.is_empty() && self.abandoned.remove(&id_key(got)) {
                        // A late reply to a request that already timed out.
                        ex.other_messages.push(msg);
                        continue;
                    }
                    // Ids match as JSON values (`1` and `1.0` differ, as on the wire).
                    match expected {
                        Some(id) if id == got => {
                            ex.response = Some(msg);
                            ex.response_text = Some(text);
                            ex.elapsed = started.elapsed();
                            return Ok(ex);
                        }
                        // A parse error answer (`id: null`) to a raw message without id.
                        None if out.expects_response && got.is_null() => {
                            ex.response = Some(msg);
                            ex.response_text = Some(text);
                            ex.elapsed = started.elapsed();
                            return Ok(ex);
                        }
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
                        None if !out.expects_response => {
                            ex.response = Some(msg);
                            ex.response_text = Some(text);
                            ex.elapsed = started.elapsed();
                            return Ok(ex);
                        }
                        None => ex.other_messages.push(msg),
                    }
                }
            }
        }
    }

    /// Best effort: a failed write shows up on the next exchange.
    async fn write_line(&mut self, text: &str) {
        if let Some(stdin) = self.stdin.as_mut() {
            let line = format!("{text}\n");
            if stdin.write_all(line.as_bytes()).await.is_ok() {
                let _ = stdin.flush().await;
            }
        }
    }

    /// Write several requests without waiting, then collect their responses (any order).
    /// Returns the responses by request index and the non-JSON lines seen meanwhile.
    pub async fn burst(
        &mut self,
        outs: &[Outgoing],
        timeout: Duration,
    ) -> Result<(Vec<Option<Value>>, Vec<String>), TransportError> {
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        let mut text = String::new();
        for out in outs {
            text.push_str(&out.body);
            text.push('\n');
        }
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| TransportError::Closed("stdin closed".into()))?;
        if let Err(e) = stdin.write_all(text.as_bytes()).await {
            let why = self
                .close_reason(&format!("writing to the server's stdin failed: {e}"))
                .await;
            return Err(TransportError::Closed(why));
        }
        let _ = stdin.flush().await;
        let keys: Vec<Option<String>> = outs.iter().map(|o| o.id.as_ref().map(id_key)).collect();
        let mut responses: Vec<Option<Value>> = vec![None; outs.len()];
        let mut noise = Vec::new();
        let deadline = super::deadline_after(timeout);
        while responses
            .iter()
            .zip(&keys)
            .any(|(r, k)| r.is_none() && k.is_some())
        {
            match self.next_event(deadline).await {
                Next::Exited => {}
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

    /// Close stdin, wait, then SIGTERM, then SIGKILL the process group.
    pub async fn shutdown(&mut self) {
        self.stdin.take();
        if self.wait_exit(Duration::from_millis(1500)).await.is_none() {
            self.signal(libc::SIGTERM);
            if self.wait_exit(Duration::from_millis(1500)).await.is_none() {
                self.signal(libc::SIGKILL);
                self.wait_exit(Duration::from_secs(5)).await;
            }
        }
        // Grandchildren that outlived the leader still get the group signal.
        self.signal(libc::SIGKILL);
        if let Some(p) = self.pgid.take() {
            crate::signals::unregister_group(p);
        }
    }

    async fn shutdown_now(&mut self) {
        self.stdin.take();
        self.signal(libc::SIGKILL);
        self.wait_exit(Duration::from_secs(5)).await;
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

    /// The next thing the server wrote, or why there is none: the deadline passed, or
    /// the process was just seen to exit (reported once).
    async fn next_event(&mut self, deadline: Instant) -> Next {
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
            let ready = match &mut self.incoming.wait {
                Wait::Direct { .. } => self.incoming.wait_direct(deadline),
                Wait::Reactor(fd) => {
                    let exited = self.exited.is_some();
                    tokio::select! {
                        guard = fd.readable_mut() => match guard {
                            Ok(mut guard) => {
                                let read = guard.try_io(|f| {
                                    read_into(
                                        f.get_mut(),
                                        &mut self.incoming.chunk,
                                        &mut self.incoming.buf,
                                    )
                                });
                                match read {
                                    Ok(Ok(0)) | Ok(Err(_)) => self.incoming.eof = true,
                                    Ok(Ok(_)) | Err(_) => {}
                                }
                                Ready::Data
                            }
                            Err(_) => {
                                self.incoming.eof = true;
                                Ready::Data
                            }
                        },
                        _ = tokio::time::sleep_until(deadline.into()) => Ready::Timeout,
                        _ = self.exit_rx.changed(), if !exited => Ready::Data,
                    }
                }
            };
            match ready {
                Ready::Data => {}
                Ready::Timeout => return Next::Timeout,
                // A slice of the wait passed or a signal came: let the runtime run its
                // other tasks (signal handling, the process waiter), then go on.
                Ready::Yield => tokio::task::yield_now().await,
            }
        }
    }

    fn signal(&self, sig: i32) {
        if let Some(p) = self.pgid {
            // SAFETY: kill(2) on our own child's process group; no memory is involved.
            unsafe {
                libc::kill(-p, sig);
            }
        }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        if let Some(p) = self.pgid.take() {
            // SAFETY: as above.
            unsafe {
                libc::kill(-p, libc::SIGKILL);
            }
            crate::signals::unregister_group(p);
        }
    }
}

/// How the transport waits for the server's output.
enum Wait {
    /// Current-thread runtime: blocking reads of stdout right here, each bounded by a
    /// slice (see [`super::slicer`]).
    Direct {
        stdout: File,
        blocker: Arc<super::slicer::Blocker>,
    },
    /// Multi-thread runtime (`--jobs`): readiness from the reactor.
    Reactor(AsyncFd<File>),
}

/// What [`StdioTransport::next_event`] found.
enum Next {
    Event(Incoming),
    Timeout,
    Exited,
}

enum Ready {
    Data,
    Timeout,
    Yield,
}

/// A direct wait shorter than this polls with the exact timeout instead of blocking for
/// slices (a notification's quiet period, the end of a deadline).
const SHORT_WAIT: Duration = Duration::from_millis(100);
const READ_CHUNK: usize = 64 * 1024;

/// The server's stdout, read by the exchange that waits for it (no reader task: a task
/// and a channel between it and the exchange cost a wake-up per message), framed into
/// lines here.
struct StdoutReader {
    wait: Wait,
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
    fn new(wait: Wait, max_bytes: usize) -> Self {
        StdoutReader {
            wait,
            buf: Vec::with_capacity(READ_CHUNK),
            chunk: vec![0; READ_CHUNK].into_boxed_slice(),
            start: 0,
            max_bytes,
            eof: false,
            ended: false,
            requeued: None,
        }
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
            let (line_end, next_start) = match pending.iter().position(|&b| b == b'\n') {
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

    /// Direct mode: wait until stdout has data, a slice of the wait passed (the runtime
    /// gets a turn), or `deadline`.
    fn wait_direct(&mut self, deadline: Instant) -> Ready {
        let Wait::Direct { stdout, blocker } = &mut self.wait else {
            return Ready::Yield;
        };
        let now = Instant::now();
        if now >= deadline {
            return Ready::Timeout;
        }
        let remaining = deadline - now;
        if remaining < SHORT_WAIT {
            let mut fd = libc::pollfd {
                fd: stdout.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let millis = remaining.as_micros().div_ceil(1000) as libc::c_int;
            // SAFETY: one valid pollfd for the duration of the call.
            let n = unsafe { libc::poll(&mut fd, 1, millis) };
            if n <= 0 {
                // Timed out, or interrupted by a signal.
                return if n == 0 && Instant::now() >= deadline {
                    Ready::Timeout
                } else {
                    Ready::Yield
                };
            }
        }
        // Readable (a read returns at once) or a long wait (the slicer bounds the block).
        match blocker.read(stdout, &mut self.chunk) {
            Ok(0) => self.eof = true,
            Ok(n) => self.buf.extend_from_slice(&self.chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ready::Yield,
            Err(_) => self.eof = true,
        }
        Ready::Data
    }
}

/// The pipe as a `File` in non-blocking mode (tokio hands it over blocking): reads
/// return at once when there is nothing, so a drain never stalls the thread.
fn nonblocking(fd: std::os::fd::OwnedFd) -> std::io::Result<File> {
    let raw = fd.as_raw_fd();
    // SAFETY: fcntl(2) on a descriptor we own; no memory is involved.
    let flags = unsafe { libc::fcntl(raw, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(raw, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(File::from(fd))
}

/// Read once through `chunk` (a buffer kept for it: no zeroing per read) onto `buf`.
fn read_into(file: &mut File, chunk: &mut [u8], buf: &mut Vec<u8>) -> std::io::Result<usize> {
    let n = file.read(chunk)?;
    buf.extend_from_slice(&chunk[..n]);
    Ok(n)
}

/// The stderr tail, kept by a thread until stderr ends.
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
                Err(_) => Incoming::Noise(crate::redact::shorten(&text, 500)),
            },
            other => other,
        }
    }
}

/// One non-empty stdout line as an event. A response is only checked (valid JSON, its
/// routing fields) and its id read; anything else is parsed whole.
fn frame(text: &[u8]) -> Incoming {
    let Ok(line) = std::str::from_utf8(text) else {
        return Incoming::Noise(crate::redact::shorten(&String::from_utf8_lossy(text), 500));
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
        _ => Incoming::Noise(crate::redact::shorten(line, 500)),
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
