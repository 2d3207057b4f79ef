//! The server process's end: close stdin, wait, SIGTERM, SIGKILL the process group, then
//! whatever of its tree is left (see [`crate::signals::tree`]).

use super::*;

impl StdioTransport {
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
        self.signal(libc::SIGKILL);
        if let Some(p) = self.pgid.take() {
            crate::signals::tree::kill_server_tree(Some(p as u32), &self.marker);
            crate::signals::unregister_group(p);
        }
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

    pub(super) fn signal(&self, sig: i32) {
        if let Some(p) = self.pgid {
            crate::sys::kill_group(p, sig);
        }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.kill_tree();
    }
}
