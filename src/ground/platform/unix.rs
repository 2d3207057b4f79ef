//! POSIX (Linux, macOS, the BSDs): process groups, signals, seeing a child's exit without
//! reaping it, non-blocking pipes on tokio's reactor. See the contract in
//! [`crate::ground::platform`].
//!
//! A pid or process-group id names *our* process only while that process is not
//! reaped. So a server is never reaped before its group and tree are cleaned up
//! ([`exit_status_unreaped`] sees the exit and leaves a zombie that holds both numbers),
//! and any other process is signalled only through a [`Pinned`] handle (Linux).

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus};
use std::sync::Arc;
use std::time::Duration;

use rustix::process::{Pid, Signal};

use super::{BeforeExec, Pinned, Spawned, Stop};

fn signal_of_stop(stop: Stop) -> Signal {
    match stop {
        Stop::Term => Signal::TERM,
        Stop::Kill => Signal::KILL,
    }
}

fn signal_number(stop: Stop) -> i32 {
    signal_of_stop(stop).as_raw()
}

/// A pid as rustix takes it; `None` for 0 and below, which name no single process.
fn pid_of(pid: i32) -> Option<Pid> {
    Pid::from_raw(pid.max(0))
}

/// Send SIGTERM/SIGKILL to every process of group `pgid` (errors, e.g. an empty group,
/// ignored). Only while the group's leader is an unreaped child of this process: after
/// the reap the number may lead a stranger's group.
pub fn signal_group(pgid: i32, stop: Stop) {
    if let Some(pgid) = pid_of(pgid) {
        let _ = rustix::process::kill_process_group(pgid, signal_of_stop(stop));
    }
}

/// Reap `pid` if it is an exited child of this process (never blocks). True when it was
/// reaped, or cannot be (not our child).
fn reap(pid: i32) -> bool {
    use rustix::process::{WaitOptions, waitpid};
    // Not `waitpid(0 or -1, …)`, which would reap any child.
    let Some(pid) = pid_of(pid) else {
        return true;
    };
    !matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None))
}

/// The exit status of child `pid` once it has exited, *without reaping it* (`waitid` with
/// `WNOWAIT`, POSIX): the zombie keeps its pid and process-group id ours until reaped.
/// `Ok(None)` while it runs; an error if it is not (or no longer) our child.
fn exit_status_unreaped(pid: i32) -> std::io::Result<Option<ExitStatus>> {
    use rustix::process::{WaitId, WaitIdOptions, waitid};
    let pid = pid_of(pid).ok_or(std::io::ErrorKind::InvalidInput)?;
    // `None`: it runs (with WNOHANG, waitid(2) then leaves the siginfo zeroed).
    let Some(info) = waitid(
        WaitId::Pid(pid),
        WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
    )?
    else {
        return Ok(None);
    };
    // Back to a wait(2) status word, which `ExitStatus` is made of. WEXITED alone reports
    // an exit, a kill or a core dump.
    let raw = match (info.exit_status(), info.terminating_signal()) {
        (Some(code), _) => (code & 0xff) << 8,
        (None, Some(sig)) if info.dumped() => (sig & 0x7f) | 0x80,
        (None, sig) => sig.unwrap_or(0) & 0x7f,
    };
    Ok(Some(ExitStatus::from_raw(raw)))
}

/// A server process: the leader of its own process group.
#[derive(Clone, Debug)]
pub struct Server {
    pid: i32,
    /// The server pinned (Linux), to reap exactly it and no later holder of its pid.
    me: Option<Arc<Pinned>>,
}

impl Server {
    /// Start `cmd` (stdio already piped by the caller) in a new process group, tied to
    /// mcpspec's life where the system can (Linux: `PR_SET_PDEATHSIG`, see `linux::spawn_tied`).
    /// `before`: what the child does before `exec` (see `linux::BeforeExec`).
    pub fn spawn(cmd: &mut Command, before: BeforeExec) -> std::io::Result<Spawned> {
        cmd.process_group(0);
        // Handed over by value: it is started on another thread.
        let cmd = std::mem::replace(cmd, Command::new(""));
        let mut child = super::tree_impl::spawn_tied(cmd, before)?;
        let pid = child.id() as i32;
        // Dropping the `Child` neither waits nor kills: the server is reaped by
        // `Server::reap`, after its cleanup.
        Ok(Spawned {
            server: Server {
                pid,
                me: Pinned::open(pid).ok().map(Arc::new),
            },
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
        })
    }

    /// A server that never ran (tests).
    #[cfg(test)]
    pub fn for_tests() -> Server {
        Server { pid: 0, me: None }
    }

    /// Its pid, which is also its process-group id.
    pub fn id(&self) -> i32 {
        self.pid
    }

    /// Signal its group (see [`signal_group`]: only before [`Server::reap`]).
    pub fn signal(&self, stop: Stop) {
        signal_group(self.pid, stop);
    }

    /// Wait for it to exit, leaving it unreaped. Linux: its pidfd turns readable.
    /// Elsewhere (or without pidfds): each SIGCHLD, and a slow tick in case one is missed.
    /// `None` if it is not our child (nothing will ever tell its status).
    pub async fn exited(&self) -> Option<ExitStatus> {
        if let Some(me) = &self.me {
            let _ = me.exited().await;
        }
        use tokio::signal::unix::{SignalKind, signal};
        let mut sigchld = signal(SignalKind::child()).ok();
        loop {
            match exit_status_unreaped(self.pid) {
                Ok(Some(status)) => return Some(status),
                Ok(None) => {}
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

    /// Reap it once it has exited (never blocks). Call once, after the cleanup.
    pub fn reap(&self) {
        match &self.me {
            Some(me) => me.reap(),
            None => reap(self.pid),
        };
    }

    /// Reap it now if that can name only this process (by its pidfd, Linux); otherwise
    /// leave it to [`Server::reap`] (by pid it could name a newer child once reaped).
    pub fn reap_if_pinned(&self) {
        if let Some(me) = &self.me {
            me.reap();
        }
    }
}

/// A second descriptor of the server's stderr, to ask how many bytes wait in the pipe
/// while the stderr thread reads it.
pub struct PipeProbe(OwnedFd);

impl PipeProbe {
    pub fn of(pipe: &std::process::ChildStderr) -> Option<PipeProbe> {
        pipe.as_fd().try_clone_to_owned().ok().map(PipeProbe)
    }

    /// Bytes written to the pipe and not read yet (`None`: the system cannot say).
    pub fn pending(&self) -> Option<usize> {
        let n = rustix::io::ioctl_fionread(&self.0).ok()?;
        Some(usize::try_from(n).unwrap_or(0))
    }
}

/// SIGINT and SIGTERM, received by mcpspec.
pub struct Interrupts {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

impl Interrupts {
    /// Listen from now on (in a runtime); `None` if the handlers cannot be installed.
    pub fn new() -> Option<Interrupts> {
        use tokio::signal::unix::{SignalKind, signal};
        Some(Interrupts {
            int: signal(SignalKind::interrupt()).ok()?,
            term: signal(SignalKind::terminate()).ok()?,
        })
    }

    /// The next one: (exit code, name).
    pub async fn recv(&mut self) -> (i32, &'static str) {
        tokio::select! {
            _ = self.int.recv() => (130, "SIGINT"),
            _ = self.term.recv() => (143, "SIGTERM"),
        }
    }
}

/// The signal that ended a process, if one did.
pub fn signal_of(status: ExitStatus) -> Option<i32> {
    status.signal()
}

/// Whether `stop` is the signal `sig`.
pub fn is_stop_signal(stop: Stop, sig: i32) -> bool {
    signal_number(stop) == sig
}

pub fn signal_name(sig: i32) -> &'static str {
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

/// A `--stdio` command line as words (POSIX shell quoting).
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    shell_words::split(line).map_err(|e| e.to_string())
}

/// The command that runs `program` (found as `execvp` finds it).
pub fn command(program: &str) -> Command {
    Command::new(program)
}

/// A program's file name is used as given.
pub(super) fn program_extensions(_program: &std::path::Path) -> Vec<String> {
    vec![String::new()]
}

/// What a non-regular, non-folder file is, for an error.
pub fn special_file_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "device"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// The status of a process killed by `stop` (tests).
#[cfg(test)]
pub fn killed_by(stop: Stop) -> Option<ExitStatus> {
    Some(ExitStatus::from_raw(signal_number(stop)))
}

/// The status of a process that exited with `code` (tests).
#[cfg(test)]
pub fn exited_with(code: i32) -> ExitStatus {
    ExitStatus::from_raw(code << 8)
}

/// The CPU time this process (all its threads, not its children) has used: user, system.
/// (rustix has no `getrusage`; `clock_gettime(CLOCK_PROCESS_CPUTIME_ID)` would not split
/// the two.)
pub fn process_cpu() -> Option<(std::time::Duration, std::time::Duration)> {
    // SAFETY: getrusage writes the struct it is given, which lives through the call.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        (libc::getrusage(libc::RUSAGE_SELF, &mut usage) == 0).then_some(usage)
    }?;
    let time = |t: libc::timeval| {
        std::time::Duration::from_secs(t.tv_sec.max(0) as u64)
            + std::time::Duration::from_micros(t.tv_usec.max(0) as u64)
    };
    Some((time(usage.ru_utime), time(usage.ru_stime)))
}
