//! Writing to the server's stdin without blocking: what it has not taken yet stays queued.

use std::time::Instant;

use super::{NOISE_CONTEXT_BYTES, REPLY_BACKLOG, StdioTransport};
use crate::ground::platform::PipeWriter;
use crate::run::client::TransportError;

impl StdioTransport {
    /// Queue one line for the server's stdin.
    pub(super) fn queue(&mut self, body: &[u8]) {
        if self.pending_start == self.pending.len() {
            self.pending.clear();
            self.pending_start = 0;
        }
        self.pending.extend_from_slice(body);
        self.pending.push(b'\n');
        if self.first_noise.is_none() {
            let start = &body[..body.len().min(NOISE_CONTEXT_BYTES)];
            self.last_written = Some(String::from_utf8_lossy(start).into_owned());
        }
        self.queued += body.len() as u64 + 1;
    }

    /// Write pending output until the pipe is full (non-blocking).
    pub(super) fn write_now(&mut self) {
        while self.pending_start < self.pending.len() {
            let Some(stdin) = self.stdin.as_mut() else {
                return;
            };
            let at = Instant::now();
            match stdin.try_write(&self.pending[self.pending_start..]) {
                Ok(n) => self.advance(n, at),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.fail_writes(e.to_string());
                    return;
                }
            }
        }
    }

    /// `n` more bytes were taken by the server, by a write begun `at`; the write that took
    /// the request's last byte stamps the start of its latency (stamped before the write,
    /// not after: the server may be at work before this thread runs again).
    pub(super) fn advance(&mut self, n: usize, at: Instant) {
        self.pending_start += n;
        self.written += n as u64;
        if self.request_written_at.is_none() && self.written >= self.request_mark {
            self.request_written_at = Some(at);
        }
    }

    /// Why nothing can be sent any more.
    pub(super) async fn stdin_gone(&mut self) -> TransportError {
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
    pub(super) fn fail_writes(&mut self, why: String) {
        self.stdin_broken = Some(why.clone());
        self.write_failed = Some(why);
        self.stdin = None;
        self.pending = Vec::new();
        self.pending_start = 0;
    }

    /// Whether everything queued up to `mark` has been written.
    pub(super) fn sent(&self, mark: u64) -> bool {
        self.written >= mark
    }

    /// Queue the answer to a server request, unless too much output is already waiting
    /// (a server that floods requests and reads nothing).
    pub(super) fn reply(&mut self, text: &str) {
        if self.stdin.is_some() && self.pending.len() - self.pending_start < REPLY_BACKLOG {
            self.queue(text.as_bytes());
            self.write_now();
        }
    }
}

/// Write some of `chunk` to stdin once the server takes it (how much, and when the write
/// began); never, when there is nothing to write.
pub(super) async fn writable(
    stdin: Option<&mut PipeWriter>,
    chunk: &[u8],
) -> std::io::Result<(usize, Instant)> {
    match stdin {
        Some(pipe) => pipe.write_stamped(chunk).await,
        None => std::future::pending().await,
    }
}
