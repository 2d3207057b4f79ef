//! stdio transport: newline-delimited JSON-RPC with a child process.
//!
//! The child runs in its own process group so that shutdown (close stdin → wait →
//! SIGTERM → SIGKILL) reaches grandchildren too (`npx`, `uv run`, shell wrappers):
//! mcpspec never leaves an orphan behind.

use std::collections::{HashSet, VecDeque};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;

use super::{Exchange, Outgoing, TransportError, id_key, is_response, server_request_reply};

const STDERR_TAIL_LINES: usize = 40;
/// After the process exits, how long to keep reading what it wrote before.
const EXIT_GRACE: Duration = Duration::from_millis(200);

/// Events from the reader task, in stdout order.
#[derive(Debug)]
enum Incoming {
    /// The message and its line as received (for the transcript).
    Message(Value, String),
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
    closed: Option<String>,
    max_bytes: usize,
    /// Ids of requests that timed out: a late reply to one is not a wrong id.
    abandoned: HashSet<String>,
    /// Set once the server process has exited (its stdout may still be held open by a
    /// grandchild, so EOF alone would not tell).
    exited: Option<std::process::ExitStatus>,
    /// Non-JSON lines seen on stdout so far.
    noise_total: usize,
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
        let stdout = child.stdout.take().expect("stdout piped");
        let stderr_pipe = child.stderr.take().expect("stderr piped");
        let stdin = child.stdin.take();
        let (exit_tx, exit_rx) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await.ok();
            let _ = exit_tx.send(status);
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        tokio::spawn(read_stderr(stderr_pipe, stderr.clone()));
        Ok(StdioTransport {
            stdin,
            exit_rx,
            pgid,
            incoming: StdoutReader::new(stdout, max_bytes),
            stderr,
            closed: None,
            max_bytes,
            abandoned: HashSet::new(),
            exited: None,
            noise_total: 0,
        })
    }

    /// Send one message and wait for its response (matched by id).
    pub async fn exchange(&mut self, out: &Outgoing) -> Result<Exchange, TransportError> {
        let started = Instant::now();
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        let mut ex = Exchange::default();
        let mut line = out.body.clone().into_bytes();
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

        let wait = if out.expects_response {
            out.timeout
        } else {
            out.quiet_period.min(out.timeout)
        };
        let deadline = tokio::time::Instant::now() + wait;
        let expected = out.id.as_ref().map(id_key);
        let mut deadline = deadline;
        loop {
            let next = tokio::select! {
                next = tokio::time::timeout_at(deadline, self.incoming.next()) => next,
                _ = self.exit_rx.changed(), if self.exited.is_none() => {
                    // Read what the process wrote before exiting, briefly.
                    self.exited = *self.exit_rx.borrow();
                    if self.exited.is_none() {
                        continue;
                    }
                    deadline = deadline.min(tokio::time::Instant::now() + EXIT_GRACE);
                    continue;
                }
            };
            match next {
                Err(_) if self.exited.is_some() => {
                    let why = self.close_reason("the server process exited").await;
                    return Err(TransportError::Closed(why));
                }
                Err(_) => {
                    ex.elapsed = started.elapsed();
                    return if out.expects_response {
                        if let Some(key) = &expected {
                            self.abandoned.insert(key.clone());
                        }
                        Err(TransportError::Timeout(wait))
                    } else {
                        Ok(ex)
                    };
                }
                Ok(Incoming::Closed) => {
                    let why = self.close_reason("the server closed its stdout").await;
                    return Err(TransportError::Closed(why));
                }
                Ok(Incoming::Oversized) => {
                    self.closed = Some(format!("message larger than {} bytes", self.max_bytes));
                    self.shutdown_now().await;
                    return Err(TransportError::Oversized {
                        limit: self.max_bytes,
                    });
                }
                Ok(Incoming::Noise(text)) => {
                    self.noise_total += 1;
                    ex.stdout_noise.push(text);
                }
                Ok(Incoming::Message(msg, text)) => {
                    if !is_response(&msg) {
                        if let Some(reply) = server_request_reply(&msg) {
                            self.write_line(&reply).await;
                        }
                        ex.other_messages.push(msg);
                        continue;
                    }
                    let got = msg.get("id").cloned().unwrap_or(Value::Null);
                    let got_key = id_key(&got);
                    if !self.abandoned.is_empty() && self.abandoned.remove(&got_key) {
                        // A late reply to a request that already timed out.
                        ex.other_messages.push(msg);
                        continue;
                    }
                    match &expected {
                        Some(key) if *key == got_key => {
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
                        Some(_) => {
                            let error = msg.get("error").cloned().map(Box::new);
                            ex.other_messages.push(msg);
                            return Err(TransportError::WrongId {
                                expected: out.id.clone().unwrap_or(Value::Null),
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
        let deadline = tokio::time::Instant::now() + timeout;
        while responses
            .iter()
            .zip(&keys)
            .any(|(r, k)| r.is_none() && k.is_some())
        {
            match tokio::time::timeout_at(deadline, self.incoming.next()).await {
                Err(_) => return Err(TransportError::Timeout(timeout)),
                Ok(Incoming::Closed) => {
                    let why = self.close_reason("the server closed its stdout").await;
                    return Err(TransportError::Closed(why));
                }
                Ok(Incoming::Oversized) => {
                    self.closed = Some(format!("message larger than {} bytes", self.max_bytes));
                    return Err(TransportError::Oversized {
                        limit: self.max_bytes,
                    });
                }
                Ok(Incoming::Noise(line)) => {
                    self.noise_total += 1;
                    noise.push(line);
                }
                Ok(Incoming::Message(msg, _)) => {
                    let key = msg.get("id").map(id_key);
                    if let Some(i) = keys.iter().position(|k| k.is_some() && *k == key) {
                        responses[i] = Some(msg);
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
        let mut rx = self.exit_rx.clone();
        let incoming = &mut self.incoming;
        let drain = async {
            while !matches!(
                incoming.next().await,
                Incoming::Closed | Incoming::Oversized
            ) {}
            std::future::pending::<()>().await
        };
        let status = tokio::select! {
            status = tokio::time::timeout(limit, rx.wait_for(Option::is_some)) => status
                .ok()
                .and_then(|r| r.ok().and_then(|s| *s)),
            _ = drain => None,
        };
        if status.is_some() {
            self.exited = status;
        }
        status
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

/// The server's stdout, read by the exchange that waits for it (no reader task: a task
/// and a channel between it and the exchange cost a wake-up per message).
///
/// Cancel-safe: a line read partly when a timeout fires stays in `line` and is
/// completed by the next call.
struct StdoutReader {
    reader: BufReader<ChildStdout>,
    line: Vec<u8>,
    max_bytes: usize,
    /// EOF, an oversized line or a read error was seen: nothing more will come.
    ended: bool,
}

impl StdoutReader {
    fn new(stdout: ChildStdout, max_bytes: usize) -> Self {
        StdoutReader {
            reader: BufReader::with_capacity(64 * 1024, stdout),
            line: Vec::with_capacity(8 * 1024),
            max_bytes,
            ended: false,
        }
    }

    /// The next event, in stdout order; [`Incoming::Closed`] for ever after the end.
    async fn next(&mut self) -> Incoming {
        loop {
            if self.ended {
                return Incoming::Closed;
            }
            match read_line_bounded(&mut self.reader, &mut self.line, self.max_bytes).await {
                Ok(LineRead::Line) => {}
                Ok(LineRead::TooLong) => {
                    self.ended = true;
                    self.line = Vec::new();
                    return Incoming::Oversized;
                }
                Ok(LineRead::Eof) | Err(_) => {
                    self.ended = true;
                    return Incoming::Closed;
                }
            }
            let event = {
                let text = trim_line(&self.line);
                if text.is_empty() {
                    None
                } else {
                    Some(match serde_json::from_slice::<Value>(text) {
                        Ok(v) if v.is_object() || v.is_array() => {
                            Incoming::Message(v, String::from_utf8_lossy(text).into_owned())
                        }
                        _ => Incoming::Noise(
                            String::from_utf8_lossy(text).chars().take(500).collect(),
                        ),
                    })
                }
            };
            self.line.clear();
            if let Some(event) = event {
                return event;
            }
        }
    }
}

enum LineRead {
    Line,
    Eof,
    TooLong,
}

async fn read_line_bounded<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
    out: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<LineRead> {
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if out.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..=i], true),
            None => (buf, false),
        };
        let n = chunk.len();
        if out.len() + n > max + 1 {
            return Ok(LineRead::TooLong);
        }
        out.extend_from_slice(chunk);
        reader.consume(n);
        if done {
            return Ok(LineRead::Line);
        }
    }
}

fn trim_line(line: &[u8]) -> &[u8] {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &line[..end]
}

async fn read_stderr(stderr: impl AsyncRead + Unpin, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        if let Ok(mut t) = tail.lock() {
            if t.len() == STDERR_TAIL_LINES {
                t.pop_front();
            }
            t.push_back(line.chars().take(1000).collect());
        }
    }
}
