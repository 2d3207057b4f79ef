//! The server process's end: close stdin, wait, ask it to stop, kill its group, then
//! whatever of its tree is left (see [`crate::ground::signals::tree`]).
//!
//! The server's id names *this* server only until it is reaped (see the contract in
//! [`crate::ground::platform`]). So its exit is observed without reaping it
//! ([`platform::Server::exited`]); every group signal is sent before the reap, and the
//! reap waits until [`Leader::kill_tree`] is done. A group signal can then never reach a
//! stranger that got the same number.

use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::framing::Incoming;
use super::{Next, StdioTransport};
use crate::ground::platform::{self, Stop};

use tokio::sync::{oneshot, watch};

/// The server process, as long as its id is ours to signal.
pub(super) struct Leader {
    server: platform::Server,
    /// The value of [`crate::ground::signals::tree::MARKER_VAR`] in this server's environment.
    marker: String,
    /// Dropped or sent once the cleanup is done: the exit watcher may reap the server
    /// then. `None` afterwards (the id is no longer ours).
    release: Option<oneshot::Sender<()>>,
    /// The server's descendants, pinned while it still ran (see [`Leader::pin_tree`]).
    pinned: Vec<platform::Pinned>,
    /// The server's own cgroup, where mcpspec may make one: killed at once, whatever
    /// left the group or the tree. `None` once removed.
    cgroup: Option<platform::ServerCgroup>,
    /// The stops mcpspec sent to the server's group.
    sent: Vec<Stop>,
    /// The exit status once known (see [`watch_exit`]).
    exit_rx: watch::Receiver<Option<std::process::ExitStatus>>,
    /// `--sandbox`: the server's private HOME (removed once the server is stopped).
    _sandbox_home: Option<SandboxHome>,
}

/// A sandboxed server's HOME and TMPDIR: an empty folder of mcpspec's, where the server
/// sees a tmpfs of its own (see [`platform::BeforeExec`]); removed after the server.
struct SandboxHome(std::path::PathBuf);

impl SandboxHome {
    fn create() -> std::io::Result<SandboxHome> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcpspec-home-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir(&dir)?;
        Ok(SandboxHome(dir))
    }
}

impl Drop for SandboxHome {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What [`Leader::spawn`] hands to the transport.
pub(super) struct Spawned {
    pub leader: Leader,
    pub stdin: platform::PipeWriter,
    pub stdout: platform::PipeReader,
    pub stderr: std::process::ChildStderr,
    /// The exit status once the process has exited (a zombie until released).
    pub exit_rx: watch::Receiver<Option<std::process::ExitStatus>>,
}

impl Leader {
    /// Start the server in its own process group, with its marker and piped stdio.
    pub fn spawn(
        program: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&std::path::Path>,
        sandbox: bool,
    ) -> std::io::Result<Spawned> {
        let marker = crate::ground::signals::tree::new_marker();
        let mut cmd = platform::command(program);
        cmd.args(args)
            .env(crate::ground::signals::tree::MARKER_VAR, &marker)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        let cgroup =
            platform::ServerCgroup::create(&crate::ground::signals::tree::cgroup_name(&marker));
        let mut before = platform::BeforeExec::default();
        if let Some(cgroup) = &cgroup {
            before.enter_cgroup(cgroup);
        }
        let sandbox_home = if sandbox {
            let home = SandboxHome::create()?;
            cmd.env("HOME", &home.0).env("TMPDIR", &home.0);
            before.sandbox(&home.0).map_err(|e| {
                std::io::Error::new(e.kind(), format!("--sandbox is not available here: {e}"))
            })?;
            Some(home)
        } else {
            None
        };
        // Spawned and registered under one lock (see `crate::ground::signals::groups`).
        let mut groups = crate::ground::signals::groups();
        let spawned = platform::Server::spawn(&mut cmd, before)?;
        groups.insert(spawned.server.id());
        drop(groups);
        let (release, released) = oneshot::channel();
        let (exit_tx, exit_rx) = watch::channel(None);
        // From here on a failure drops `leader`, which stops and reaps the server.
        let leader = Leader {
            server: spawned.server.clone(),
            marker,
            release: Some(release),
            pinned: Vec::new(),
            cgroup,
            sent: Vec::new(),
            exit_rx: exit_rx.clone(),
            _sandbox_home: sandbox_home,
        };
        tokio::spawn(watch_exit(spawned.server, exit_tx, released));
        let missing = || std::io::Error::other("a pipe to the server is missing");
        Ok(Spawned {
            stdin: platform::PipeWriter::new(spawned.stdin.ok_or_else(missing)?)?,
            stdout: platform::PipeReader::new(spawned.stdout.ok_or_else(missing)?)?,
            stderr: spawned.stderr.ok_or_else(missing)?,
            leader,
            exit_rx,
        })
    }

    /// Pin the server's descendants now, while it runs: one that calls `setsid()` and
    /// clears its environment is found only under the server, and once the server has
    /// exited it is re-parented away.
    pub fn pin_tree(&mut self) {
        if self.release.is_some() {
            // The id is not reaped (not released): it still names the server.
            self.pinned
                .extend(crate::ground::signals::tree::pin_descendants(
                    self.server.id() as u32,
                ));
        }
    }

    /// Signal the server's process group (nothing once released).
    pub fn signal(&mut self, stop: Stop) {
        if self.release.is_some() {
            self.server.signal(stop);
            if !self.sent.contains(&stop) {
                self.sent.push(stop);
            }
        }
    }

    /// Kill the group and every process of the tree, then let the server be reaped.
    pub fn kill_tree(&mut self) {
        if self.release.is_none() {
            return;
        }
        // Before the group kill: once the leader is dead its children move away.
        self.pin_tree();
        self.signal(Stop::Kill);
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill();
        }
        crate::ground::signals::tree::kill_server_tree(
            std::mem::take(&mut self.pinned),
            &self.marker,
            self.server.id(),
        );
        if let Some(cgroup) = self.cgroup.take() {
            cgroup.reap_adopted(self.server.id());
        }
        // Under the registry's lock: an interrupt's kill of every group can no longer
        // reach this one, and only then is it reaped.
        crate::ground::signals::unregister_group(self.server.id());
        if let Some(release) = self.release.take() {
            let _ = release.send(());
        }
        // Reap it now if the watcher has seen it exit (it would reap it too, but only
        // when the runtime polls it again, which may be never at the end of a run). Only
        // where that names exactly this process: by pid, it could name a newer child.
        if self.exit_rx.borrow().is_some() {
            self.server.reap_if_pinned();
        }
    }

    /// How an exit status reads in a report: a signal mcpspec did not send is named so.
    pub fn describe_exit(&self, status: std::process::ExitStatus) -> String {
        let ours = |sig| self.sent.iter().any(|&s| platform::is_stop_signal(s, sig));
        match platform::signal_of(status) {
            Some(sig) if !ours(sig) && crate::ground::signals::received().is_none() => {
                format!(
                    "the server was killed by signal {sig} ({}), which mcpspec did not send",
                    platform::signal_name(sig)
                )
            }
            Some(sig) => format!(
                "server exited: signal {sig} ({}), sent by mcpspec",
                platform::signal_name(sig)
            ),
            None => format!("server exited: {status}"),
        }
    }
}

impl Drop for Leader {
    fn drop(&mut self) {
        self.kill_tree();
    }
}

/// Publish the server's exit status as soon as it exits, without reaping it; reap it once
/// released (after the cleanup that may still signal its group).
async fn watch_exit(
    server: platform::Server,
    exit_tx: watch::Sender<Option<std::process::ExitStatus>>,
    released: oneshot::Receiver<()>,
) {
    let status = server.exited().await;
    let _ = exit_tx.send(status);
    // Sent or dropped: either way the cleanup is over.
    let _ = released.await;
    server.reap();
}

impl StdioTransport {
    /// Close stdin, wait, then SIGTERM, then SIGKILL the process group; then every
    /// process of the server's tree that is left (see [`super::tree`]).
    pub async fn shutdown(&mut self) {
        // Before stdin closes: the server may exit at once and its children move away.
        self.leader.pin_tree();
        self.close_stdin();
        if self.wait_exit(Duration::from_millis(1500)).await.is_none() {
            self.leader.signal(Stop::Term);
            if self.wait_exit(Duration::from_millis(1500)).await.is_none() {
                self.leader.signal(Stop::Kill);
                self.wait_exit(Duration::from_secs(5)).await;
            }
        }
        // Grandchildren that outlived the leader still get the group signal, and those
        // that left the group are found pinned or by their marker.
        self.kill_tree();
    }

    pub(super) async fn shutdown_now(&mut self) {
        self.close_stdin();
        self.kill_tree();
        self.wait_exit(Duration::from_secs(5)).await;
    }

    pub(super) fn close_stdin(&mut self) {
        self.stdin = None;
        self.pending = Vec::new();
        self.pending_start = 0;
    }

    pub(super) fn kill_tree(&mut self) {
        self.leader.kill_tree();
    }

    /// The exit status, waiting at most `limit` for it.
    /// Meanwhile stdout is drained, so a server blocked writing to a full pipe can exit.
    pub(super) async fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = super::super::deadline_after(limit);
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leader() -> Leader {
        Leader {
            server: platform::Server::for_tests(),
            marker: String::new(),
            release: None,
            pinned: Vec::new(),
            cgroup: None,
            sent: Vec::new(),
            exit_rx: watch::channel(None).1,
            _sandbox_home: None,
        }
    }

    #[test]
    fn a_signal_mcpspec_did_not_send_is_named() {
        // No signal ends a process on Windows: nothing to name there.
        let Some(status) = platform::killed_by(Stop::Kill) else {
            return;
        };
        assert_eq!(
            leader().describe_exit(status),
            "the server was killed by signal 9 (SIGKILL), which mcpspec did not send"
        );
        let mut sent = leader();
        sent.sent = vec![Stop::Kill];
        assert_eq!(
            sent.describe_exit(status),
            "server exited: signal 9 (SIGKILL), sent by mcpspec"
        );
        let exited = platform::exited_with(3);
        assert_eq!(
            leader().describe_exit(exited),
            format!("server exited: {exited}")
        );
    }
}
