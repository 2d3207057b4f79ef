//! Linux only: pidfds, the child-subreaper flag and `/proc`, for the whole-tree cleanup
//! (see the contract in [`crate::ground::platform`]; `fallback.rs` is the same API without them).
//!
//! A pid names *our* process only while it is not reaped; once reaped, the kernel may
//! hand the number to anyone (pid_max can be 32768). So any process found in `/proc` is
//! signalled only through a [`Pinned`] handle, a pidfd (`pidfd_open`,
//! `pidfd_send_signal`, `waitid(P_PIDFD)`, kernel ≥ 5.3), which reaches the process it
//! was opened on or nothing. On an older kernel `Pinned::open` fails and only the
//! server's own group is signalled.

use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::sync::mpsc;

/// Make this process the reaper of its orphaned descendants: a server's grandchild that
/// double-forks or calls `setsid()` is re-parented to mcpspec instead of init, so it can
/// still be found under mcpspec and stopped.
pub fn become_subreaper() -> bool {
    // SAFETY: prctl(2) PR_SET_CHILD_SUBREAPER takes an integer flag; no memory.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0) == 0 }
}

/// A spawn request for the spawner thread, and where its result goes.
type SpawnJob = (Command, mpsc::Sender<std::io::Result<Child>>);

/// The thread that starts every server (see [`spawn_tied`]); `None` if it could not be
/// started.
static SPAWNER: OnceLock<Option<mpsc::Sender<SpawnJob>>> = OnceLock::new();

/// Start `cmd` so that its process gets SIGKILL when mcpspec dies, however it dies (even
/// by SIGKILL, when nothing of mcpspec runs to stop it): `PR_SET_PDEATHSIG`.
///
/// That signal fires when the *thread* that forked the child exits, not the process: a
/// server forked by a tokio worker (or a test thread) would be killed when that thread
/// ends. So every server is forked by one thread that lives as long as mcpspec. If that
/// thread cannot be started, the server is started here without the tie.
pub fn spawn_tied(mut cmd: Command) -> std::io::Result<Child> {
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, queue) = mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("mcpspec-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in queue {
                    tie_to_parent(&mut cmd);
                    let _ = reply.send(cmd.spawn());
                }
            })
            .ok()
            .map(|_| jobs)
    });
    let Some(spawner) = spawner else {
        return cmd.spawn();
    };
    let (reply, result) = mpsc::channel();
    spawner
        .send((cmd, reply))
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?;
    result
        .recv()
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?
}

/// In the child, before `exec`: SIGKILL when the parent (thread) dies. If mcpspec died
/// before the `prctl` (the child was re-parented already), the signal will never come:
/// the child gives up instead of running unwatched.
fn tie_to_parent(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs in the forked child and makes only async-signal-safe
    // system calls (prctl, getppid); it allocates nothing (a raw OS error is no
    // allocation).
    unsafe {
        cmd.pre_exec(move || {
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            if libc::getppid() != parent {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// One process pinned by a pidfd: every signal reaches it or nothing, even after its pid
/// is reused.
#[derive(Debug)]
pub struct Pinned {
    fd: std::os::fd::OwnedFd,
    pid: i32,
}

impl Pinned {
    /// Pin the process that has `pid` now. Verify afterwards that it is the one you meant
    /// (read `/proc/<pid>` *after* this call, then check [`Pinned::alive`]: a process
    /// still alive at that point had that pid all along).
    pub fn open(pid: i32) -> std::io::Result<Pinned> {
        use std::os::fd::FromRawFd;
        if pid <= 0 {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        }
        // SAFETY: pidfd_open(2) takes two integers and returns a new descriptor (or -1).
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the descriptor was just created and is owned by nothing else.
        let fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) };
        Ok(Pinned { fd, pid })
    }

    /// The pid it had when pinned.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    fn signal(&self, sig: i32) -> bool {
        // SAFETY: pidfd_send_signal(2) on a descriptor we own, with a null siginfo.
        let r = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.fd.as_raw_fd(),
                sig,
                std::ptr::null::<libc::siginfo_t>(),
                0,
            )
        };
        r == 0
    }

    /// SIGKILL the pinned process. False once it is reaped.
    pub fn kill(&self) -> bool {
        self.signal(libc::SIGKILL)
    }

    /// Not reaped yet (a zombie counts): its pid still names it.
    pub fn alive(&self) -> bool {
        self.signal(0)
    }

    /// Reap it if it is an exited child of this process (never blocks). True once reaped
    /// or when it is not (or no longer) a child.
    pub fn reap(&self) -> bool {
        // SAFETY: waitid(2) writes into a zeroed local siginfo_t.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above; P_PIDFD names exactly the pinned process.
        let r = unsafe {
            libc::waitid(
                libc::P_PIDFD,
                self.fd.as_raw_fd() as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG,
            )
        };
        // With WNOHANG and no exited child, waitid returns 0 and leaves si_pid 0.
        // SAFETY: reading the pid of a siginfo_t filled in by waitid(2) (or zeroed).
        r != 0 || unsafe { info.si_pid() } != 0
    }

    /// Resolves once the pinned process has exited (its pidfd turns readable); `Err` if
    /// that cannot be watched (the caller falls back to polling).
    pub async fn exited(&self) -> std::io::Result<()> {
        let file = std::fs::File::from(self.fd.try_clone()?);
        let fd = super::unix::register(file, tokio::io::Interest::READABLE)?;
        let _ = fd.readable().await?;
        Ok(())
    }
}

/// The children of `pid` (every thread's), from `/proc`.
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for task in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// The parent of `pid`, from `/proc/<pid>/stat`.
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may contain spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The environment `pid` was started with (`NAME=value` entries, NUL-separated).
pub fn environ(pid: u32) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/environ")).ok()
}
