//! The server's stderr and stdout noise: the tail shown with a failure, caught up before it
//! is shown, and why the process closed.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::{NOISE_CONTEXT_BYTES, STDERR_CATCH_UP, STDERR_DONE_WAIT, StdioTransport};

impl StdioTransport {
    pub(super) async fn close_reason(&mut self, what: &str) -> String {
        // Give the process a moment to finish exiting so its status is known.
        let status = match self.exited {
            Some(s) => Some(s),
            None => self.wait_exit(Duration::from_millis(500)).await,
        };
        self.exited = status;
        if status.is_some() {
            // The process is gone: let the stderr thread catch up, so the tail shown with
            // this error has the server's last words (an async wait: other scenarios run
            // meanwhile).
            let mut done = self.stderr_done.clone();
            let _ = tokio::time::timeout(STDERR_DONE_WAIT, done.wait_for(|d| *d)).await;
        }
        let why = match status {
            Some(s) => format!("{what} ({})", self.leader.describe_exit(s)),
            None => what.to_string(),
        };
        self.closed = Some(why.clone());
        why
    }

    /// Last lines of the server's stderr, everything it had written by now included; once
    /// [`StdioTransport::mark_started`], only the lines written since (a start-up banner is
    /// no failure's cause, and repeated in every failing suite it hid the lines that are).
    pub async fn stderr_tail(&self) -> Option<String> {
        self.catch_up_stderr().await;
        let lines = self.stderr.lock().ok()?;
        let written = self.stderr_progress.lines.load(Ordering::Acquire);
        let since = self
            .stderr_from
            .map_or(lines.len(), |from| written.saturating_sub(from) as usize)
            .min(lines.len());
        if since == 0 {
            return None;
        }
        Some(
            lines
                .iter()
                .skip(lines.len() - since)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }

    /// What the server wrote on stderr until now was its start-up (or earlier scenarios'):
    /// [`StdioTransport::stderr_tail`] shows only what comes after.
    pub async fn mark_started(&mut self) {
        self.catch_up_stderr().await;
        let _held = self.stderr.lock();
        self.stderr_from = Some(self.stderr_progress.lines.load(Ordering::Acquire));
    }

    /// Waits until the stderr thread has kept every line in the pipe now (at most
    /// [`STDERR_CATCH_UP`]). stderr and stdout are separate pipes: a line the server wrote
    /// just before its last reply may be unread when that reply has been read, and on a
    /// loaded machine a report then went without it. Normally no wait at all; when there
    /// is one, it is on the stderr thread's progress ([`StderrProgress::changed`]), so the
    /// engine's other scenarios run meanwhile.
    async fn catch_up_stderr(&self) {
        let Some(probe) = &self.stderr_probe else {
            return;
        };
        let progress = &self.stderr_progress;
        let caught_up = async {
            loop {
                // Registered before the check: progress made after it still wakes us.
                let changed = progress.changed.notified();
                let mut changed = std::pin::pin!(changed);
                changed.as_mut().enable();
                if *self.stderr_done.borrow() {
                    return;
                }
                // Nothing waits in the pipe, so all of it was read by now; then wait for
                // what was read to be kept.
                let pending = probe.pending().unwrap_or(0);
                let read = progress.read.load(Ordering::Acquire);
                if pending == 0 && progress.kept.load(Ordering::Acquire) >= read {
                    return;
                }
                // The thread notifies once it has kept what it read, and when it ends.
                changed.await;
            }
        };
        let _ = tokio::time::timeout(STDERR_CATCH_UP, caught_up).await;
    }

    pub fn noise_total(&self) -> usize {
        self.noise_total
    }

    /// The first non-JSON line seen on stdout (when kept) and the start of the line last
    /// written to stdin before it.
    pub fn first_noise(&self) -> Option<&(String, Option<String>)> {
        self.first_noise.as_ref()
    }

    /// A non-JSON line on stdout (`text`, when kept).
    pub(super) fn noise_seen(&mut self, text: Option<&str>) {
        self.noise_total += 1;
        if self.first_noise.is_none()
            && let Some(text) = text
        {
            let line =
                text[..crate::ground::redact::char_floor(text, NOISE_CONTEXT_BYTES)].to_string();
            self.first_noise = Some((line, self.last_written.take()));
        }
    }
}
