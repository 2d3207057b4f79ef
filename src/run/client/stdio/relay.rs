//! A server process whose pipes are handed out whole, for `mcpspec record`: the recording
//! proxy forwards bytes between a real client and the server, so it needs the raw pipes, and
//! still the same process care as every other server mcpspec starts (own group, its tree
//! killed at the end and on a signal, the exit observed without reaping too early).

use std::time::Duration;
use tokio::sync::watch;

use super::process::Leader;

use crate::ground::platform::{PipeReader, PipeWriter, Stop};

/// The server under a recording: its stdin, stdout and stderr, and its end.
pub struct Relayed {
    leader: Leader,
    pub stdin: Option<PipeWriter>,
    pub stdout: PipeReader,
    /// Taken by whoever copies the server's stderr.
    pub stderr: Option<std::process::ChildStderr>,
    exit_rx: watch::Receiver<Option<std::process::ExitStatus>>,
}

impl Relayed {
    /// Start `words` (program and arguments), the environment inherited.
    pub fn spawn(words: &[String]) -> std::io::Result<Relayed> {
        let (program, args) = words
            .split_first()
            .ok_or_else(|| std::io::Error::other("no server command given"))?;
        let spawned = Leader::spawn(program, args, &[], None, false)?;
        Ok(Relayed {
            leader: spawned.leader,
            stdin: Some(spawned.stdin),
            stdout: spawned.stdout,
            stderr: Some(spawned.stderr),
            exit_rx: spawned.exit_rx,
        })
    }

    /// The exit status, if the server has exited.
    pub fn exited(&self) -> Option<std::process::ExitStatus> {
        *self.exit_rx.borrow()
    }

    /// Wait at most `limit` for the server to exit.
    pub async fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let mut rx = self.exit_rx.clone();
        tokio::time::timeout(limit, rx.wait_for(Option::is_some))
            .await
            .ok()
            .and_then(|r| r.ok().and_then(|s| *s))
    }

    /// How the exit reads in the recording (a signal mcpspec did not send is named).
    pub fn describe_exit(&self, status: std::process::ExitStatus) -> String {
        self.leader.describe_exit(status)
    }

    /// Close stdin, give the server a moment, then stop it and everything it started.
    pub async fn stop(&mut self) -> Option<std::process::ExitStatus> {
        self.leader.pin_tree();
        self.stdin = None;
        let mut status = self.wait_exit(Duration::from_millis(1500)).await;
        if status.is_none() {
            self.leader.signal(Stop::Term);
            status = self.wait_exit(Duration::from_millis(1500)).await;
        }
        if status.is_none() {
            self.leader.signal(Stop::Kill);
            status = self.wait_exit(Duration::from_secs(5)).await;
        }
        self.leader.kill_tree();
        status
    }
}
