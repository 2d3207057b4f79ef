//! The server process's end: close stdin, wait, SIGTERM, SIGKILL the process group, then
//! whatever of its tree is left (see [`crate::signals::tree`]).
//!
//! The server's pid is also its process-group id, and both name *this* server only until
//! it is reaped (see the contract in [`crate::sys`]). So its exit is observed without
//! reaping it ([`crate::sys::exit_status_unreaped`]); every group signal is sent before
//! the reap, and the reap waits until [`Leader::kill_tree`] is done. A group signal can
//! then never reach a stranger that got the same number.

use super::*;

use std::os::unix::process::{CommandExt, ExitStatusExt};

use tokio::sync::oneshot;

/// The server process, as long as its pid is ours to signal.
pub(super) struct Leader {
    pid: i32,
    /// The value of [`crate::signals::tree::MARKER_VAR`] in this server's environment.
    marker: String,
    /// Dropped or sent once the cleanup is done: the exit watcher may reap the server
    /// then. `None` afterwards (the pid is no longer ours).
    release: Option<oneshot::Sender<()>>,
    /// The server's descendants, pinned while it still ran (see [`Leader::pin_tree`]).
    pinned: Vec<crate::sys::Pinned>,
    /// The signals mcpspec sent to the server's group, as a bit set.
    sent: u64,
    /// The server pinned (Linux), to reap it exactly as soon as the cleanup is done.
    me: Option<crate::sys::Pinned>,
    /// The exit status once known (see [`watch_exit`]).
    exit_rx: watch::Receiver<Option<std::process::ExitStatus>>,
}

/// What [`Leader::spawn`] hands to the transport.
pub(super) struct Spawned {
    pub leader: Leader,
    pub stdin: File,
    pub stdout: File,
    pub stderr: File,
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
    ) -> std::io::Result<Spawned> {
        let marker = crate::signals::tree::new_marker();
        let mut cmd = std::process::Command::new(program);
        cmd.args(args)
            .env(crate::signals::tree::MARKER_VAR, &marker)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        // Spawned and registered under one lock (see `crate::signals::groups`).
        let mut groups = crate::signals::groups();
        let mut child = cmd.spawn()?;
        let pid = child.id() as i32;
        groups.insert(pid);
        drop(groups);
        let (release, released) = oneshot::channel();
        let (exit_tx, exit_rx) = watch::channel(None);
        // From here on a failure drops `leader`, which stops and reaps the server.
        let leader = Leader {
            pid,
            marker,
            release: Some(release),
            pinned: Vec::new(),
            sent: 0,
            me: crate::sys::Pinned::open(pid).ok(),
            exit_rx: exit_rx.clone(),
        };
        tokio::spawn(watch_exit(pid, exit_tx, released));
        let pipe = |fd: Option<std::os::fd::OwnedFd>| {
            fd.map(File::from)
                .ok_or_else(|| std::io::Error::other("a pipe to the server is missing"))
        };
        Ok(Spawned {
            stdin: pipe(child.stdin.take().map(Into::into))?,
            stdout: pipe(child.stdout.take().map(Into::into))?,
            stderr: pipe(child.stderr.take().map(Into::into))?,
            leader,
            exit_rx,
        })
    }

    /// Pin the server's descendants now, while it runs: one that calls `setsid()` and
    /// clears its environment is found only under the server, and once the server has
    /// exited it is re-parented away.
    pub fn pin_tree(&mut self) {
        if self.release.is_some() {
            // The pid is not reaped (not released): it still names the server.
            self.pinned
                .extend(crate::signals::tree::pin_descendants(self.pid as u32));
        }
    }

    /// Signal the server's process group (nothing once released).
    pub fn signal(&mut self, sig: i32) {
        if self.release.is_some() {
            crate::sys::kill_group(self.pid, sig);
            self.sent |= bit(sig);
        }
    }

    /// SIGKILL the group and every process of the tree, then let the server be reaped.
    pub fn kill_tree(&mut self) {
        if self.release.is_none() {
            return;
        }
        // Before the group kill: once the leader is dead its children move away.
        self.pin_tree();
        self.signal(libc::SIGKILL);
        crate::signals::tree::kill_server_tree(
            std::mem::take(&mut self.pinned),
            &self.marker,
            self.pid,
        );
        // Under the registry's lock: an interrupt's kill of every group can no longer
        // reach this one, and only then is it reaped.
        crate::signals::unregister_group(self.pid);
        if let Some(release) = self.release.take() {
            let _ = release.send(());
        }
        // Reap it now if the watcher has seen it exit (it would reap it too, but only
        // when the runtime polls it again, which may be never at the end of a run). By
        // the pidfd: once reaped, the pid could name a newer child.
        if self.exit_rx.borrow().is_some()
            && let Some(me) = &self.me
        {
            me.reap();
        }
    }

    /// How an exit status reads in a report: a signal mcpspec did not send is named so.
    pub fn describe_exit(&self, status: std::process::ExitStatus) -> String {
        match status.signal() {
            Some(sig) if self.sent & bit(sig) == 0 && crate::signals::received().is_none() => {
                format!(
                    "the server was killed by signal {sig} ({}), which mcpspec did not send",
                    signal_name(sig)
                )
            }
            Some(sig) => format!(
                "server exited: signal {sig} ({}), sent by mcpspec",
                signal_name(sig)
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

fn bit(sig: i32) -> u64 {
    1u64.checked_shl(sig as u32).unwrap_or(0)
}

fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGXCPU => "SIGXCPU",
        _ => "a signal",
    }
}

/// Publish the server's exit status as soon as it exits, without reaping it; reap it once
/// released (after the cleanup that may still signal its group).
async fn watch_exit(
    pid: i32,
    exit_tx: watch::Sender<Option<std::process::ExitStatus>>,
    released: oneshot::Receiver<()>,
) {
    let me = crate::sys::Pinned::open(pid).ok();
    let status = exited(pid, me.as_ref()).await;
    let _ = exit_tx.send(status);
    // Sent or dropped: either way the cleanup is over.
    let _ = released.await;
    match me {
        Some(me) => me.reap(),
        None => crate::sys::reap(pid),
    };
}

/// Wait for child `pid` to exit, leaving it unreaped. Linux: its pidfd turns readable.
/// Elsewhere (or without pidfds): each SIGCHLD, and a slow tick in case one is missed.
async fn exited(pid: i32, me: Option<&crate::sys::Pinned>) -> Option<std::process::ExitStatus> {
    #[cfg(target_os = "linux")]
    if let Some(Ok(fd)) = me.map(|p| {
        p.exit_fd()
            .and_then(|f| crate::sys::register(f, Interest::READABLE))
    }) {
        let _ = fd.readable().await;
    }
    #[cfg(not(target_os = "linux"))]
    let _ = me;
    use tokio::signal::unix::{SignalKind, signal};
    let mut sigchld = signal(SignalKind::child()).ok();
    loop {
        match crate::sys::exit_status_unreaped(pid) {
            Ok(Some(status)) => return Some(status),
            Ok(None) => {}
            // Not our child any more: nothing will ever tell its status.
            Err(_) => return None,
        }
        let tick = tokio::time::sleep(Duration::from_millis(100));
        match sigchld.as_mut() {
            Some(s) => {
                tokio::select! {
                    _ = s.recv() => {}
                    _ = tick => {}
                }
            }
            None => tick.await,
        }
    }
}

impl StdioTransport {
    /// Close stdin, wait, then SIGTERM, then SIGKILL the process group; then every
    /// process of the server's tree that is left (see [`super::tree`]).
    pub async fn shutdown(&mut self) {
        // Before stdin closes: the server may exit at once and its children move away.
        self.leader.pin_tree();
        self.close_stdin();
        if self.wait_exit(Duration::from_millis(1500)).await.is_none() {
            self.leader.signal(libc::SIGTERM);
            if self.wait_exit(Duration::from_millis(1500)).await.is_none() {
                self.leader.signal(libc::SIGKILL);
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
            pid: 0,
            marker: String::new(),
            release: None,
            pinned: Vec::new(),
            sent: 0,
            me: None,
            exit_rx: watch::channel(None).1,
        }
    }

    #[test]
    fn a_signal_mcpspec_did_not_send_is_named() {
        let status = std::process::ExitStatus::from_raw(libc::SIGKILL);
        assert_eq!(
            leader().describe_exit(status),
            "the server was killed by signal 9 (SIGKILL), which mcpspec did not send"
        );
        let mut sent = leader();
        sent.sent = bit(libc::SIGKILL);
        assert_eq!(
            sent.describe_exit(status),
            "server exited: signal 9 (SIGKILL), sent by mcpspec"
        );
        let exited = std::process::ExitStatus::from_raw(3 << 8);
        assert_eq!(
            leader().describe_exit(exited),
            "server exited: exit status: 3"
        );
    }
}
