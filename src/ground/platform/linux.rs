//! Linux only: pidfds, the child-subreaper flag and `/proc`, for the whole-tree cleanup
//! (see the contract in [`crate::ground::platform`]; `fallback.rs` is the same API without them).
//!
//! A pid names *our* process only while it is not reaped; once reaped, the kernel may
//! hand the number to anyone (pid_max can be 32768). So any process found in `/proc` is
//! signalled only through a [`Pinned`] handle, a pidfd (`pidfd_open`,
//! `pidfd_send_signal`, `waitid(P_PIDFD)`, kernel ≥ 5.3), which reaches the process it
//! was opened on or nothing. On an older kernel `Pinned::open` fails and only the
//! server's own group is signalled.

use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::OnceLock;
use std::sync::mpsc;

/// Make this process the reaper of its orphaned descendants: a server's grandchild that
/// double-forks or calls `setsid()` is re-parented to mcpspec instead of init, so it can
/// still be found under mcpspec and stopped.
pub fn become_subreaper() -> bool {
    // The flag is any non-zero value; rustix passes the pid given.
    rustix::process::set_child_subreaper(Some(rustix::process::getpid())).is_ok()
}

/// A spawn request for the spawner thread, and where its result goes.
type SpawnJob = (Command, BeforeExec, mpsc::Sender<std::io::Result<Child>>);

/// The thread that starts every server (see [`spawn_tied`]); `None` if it could not be
/// started.
static SPAWNER: OnceLock<Option<mpsc::Sender<SpawnJob>>> = OnceLock::new();

/// Start `cmd` so that its process gets SIGKILL when mcpspec dies, however it dies (even
/// by SIGKILL, when nothing of mcpspec runs to stop it): `PR_SET_PDEATHSIG`.
///
/// That signal fires when the *thread* that forked the child exits, not the process: a
/// server forked by a tokio worker (or a test thread) would be killed when that thread
/// ends. So every server is forked by one thread that lives as long as mcpspec. If that
/// thread cannot be started, the server is started here without the tie. `before` is
/// done in the child first (see [`BeforeExec`]).
pub fn spawn_tied(mut cmd: Command, before: BeforeExec) -> std::io::Result<Child> {
    let spawner = SPAWNER.get_or_init(|| {
        let (jobs, queue) = mpsc::channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("mcpspec-spawner".into())
            .spawn(move || {
                for (mut cmd, before, reply) in queue {
                    before.install(&mut cmd, true);
                    let _ = reply.send(cmd.spawn());
                }
            })
            .ok()
            .map(|_| jobs)
    });
    let Some(spawner) = spawner else {
        before.install(&mut cmd, false);
        return cmd.spawn();
    };
    let (reply, result) = mpsc::channel();
    spawner
        .send((cmd, before, reply))
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?;
    result
        .recv()
        .map_err(|_| std::io::Error::other("the spawner thread is gone"))?
}

/// What a server's process does between `fork` and `exec`, prepared in mcpspec (the
/// child allocates nothing) and done by one `pre_exec`, in this order:
/// 1. move into its cgroup ([`BeforeExec::enter_cgroup`]), with mcpspec's own rights, so
///    that nothing it starts is ever outside; a refused move leaves it where mcpspec runs
///    (the walk still finds it);
/// 2. `--sandbox` ([`BeforeExec::sandbox`]): a user namespace of its own (the same uid and
///    gid inside), a network namespace with only the loopback interface (brought up), and
///    a mount namespace where every mount is read-only but a fresh tmpfs on `home` (the
///    server's HOME and TMPDIR). The server cannot gain privileges back (`NO_NEW_PRIVS`,
///    and uid 0 inside gets no capabilities at `exec`): it cannot reach beyond the machine,
///    nor write outside `home`. A step that fails makes the spawn fail (never an
///    unsandboxed server) and names itself on the child's stderr;
/// 3. tied to mcpspec's life (see [`spawn_tied`]): SIGKILL when the forking thread dies.
///    Last, because a new user namespace changes the credentials, which clears that
///    signal. If mcpspec died before the `prctl` (the child was re-parented already), the
///    signal will never come: the child gives up instead of running unwatched.
#[derive(Default)]
pub struct BeforeExec {
    cgroup_procs: Option<std::ffi::CString>,
    sandbox: Option<SandboxPlan>,
}

/// `--sandbox`'s HOME and id maps, as the child writes them.
struct SandboxPlan {
    home: std::ffi::CString,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl BeforeExec {
    /// Start the server in `cgroup`.
    pub fn enter_cgroup(&mut self, cgroup: &ServerCgroup) {
        self.cgroup_procs = std::ffi::CString::new(
            cgroup
                .dir
                .join("cgroup.procs")
                .into_os_string()
                .into_encoded_bytes(),
        )
        .ok();
    }

    /// Start the server sandboxed, `home` its private tmpfs.
    pub fn sandbox(&mut self, home: &std::path::Path) -> std::io::Result<()> {
        let home = std::ffi::CString::new(home.as_os_str().as_encoded_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        let (uid, gid) = (
            rustix::process::getuid().as_raw(),
            rustix::process::getgid().as_raw(),
        );
        self.sandbox = Some(SandboxPlan {
            home,
            uid_map: format!("{uid} {uid} 1").into_bytes(),
            gid_map: format!("{gid} {gid} 1").into_bytes(),
        });
        Ok(())
    }

    /// Make it `cmd`'s one `pre_exec`; `tie`: step 3 too (only on the spawner thread).
    fn install(self, cmd: &mut Command, tie: bool) {
        use rustix::mount::{MountFlags, MountPropagationFlags, mount, mount_change};
        use rustix::process::{Signal, getpid, getppid, set_parent_process_death_signal};
        use rustix::thread::{
            CapabilitiesSecureBits, UnshareFlags, set_capabilities_secure_bits, set_no_new_privs,
            unshare_unsafe,
        };
        if self.cgroup_procs.is_none() && self.sandbox.is_none() && !tie {
            return;
        }
        let parent = getpid();
        // SAFETY: the closure runs in the forked child (one thread) and makes only
        // async-signal-safe system calls on memory prepared before the fork; a raw OS
        // error is no allocation. `unshare` is unsafe in rustix for `CLONE_FILES` (threads
        // that would see a different descriptor table), which is not asked for here.
        // rustix has no `mount_setattr`: that one is the raw system call, on a local
        // `mount_attr` and a static path, both alive for the call.
        unsafe {
            cmd.pre_exec(move || {
                if let Some(procs) = &self.cgroup_procs {
                    let _ = write_proc(procs, b"0");
                }
                if let Some(plan) = &self.sandbox {
                    unshare_unsafe(
                        UnshareFlags::NEWUSER | UnshareFlags::NEWNET | UnshareFlags::NEWNS,
                    )
                    .map_err(|e| {
                        failed(b"unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS)", e)
                    })?;
                    // (A kernel without the setgroups file does not need it written.)
                    let _ = write_proc(c"/proc/self/setgroups", b"deny");
                    write_proc(c"/proc/self/uid_map", &plan.uid_map)
                        .map_err(|e| failed(b"writing /proc/self/uid_map", e))?;
                    write_proc(c"/proc/self/gid_map", &plan.gid_map)
                        .map_err(|e| failed(b"writing /proc/self/gid_map", e))?;
                    mount_change(
                        c"/",
                        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
                    )
                    .map_err(|e| failed(b"making the mounts private", e))?;
                    let attr = MountAttr {
                        attr_set: MOUNT_ATTR_RDONLY,
                        attr_clr: 0,
                        propagation: 0,
                        userns_fd: 0,
                    };
                    if libc::syscall(
                        libc::SYS_mount_setattr,
                        libc::AT_FDCWD,
                        c"/".as_ptr(),
                        libc::AT_RECURSIVE as libc::c_uint,
                        &attr as *const MountAttr,
                        std::mem::size_of::<MountAttr>(),
                    ) != 0
                    {
                        return Err(failed(
                            b"making every mount read-only (mount_setattr)",
                            rustix::io::Errno::from_io_error(&std::io::Error::last_os_error())
                                .unwrap_or(rustix::io::Errno::IO),
                        ));
                    }
                    mount(
                        c"tmpfs",
                        plan.home.as_c_str(),
                        c"tmpfs",
                        MountFlags::NOSUID | MountFlags::NODEV,
                        c"mode=0700",
                    )
                    .map_err(|e| failed(b"mounting the private tmpfs HOME", e))?;
                    loopback_up().map_err(|e| failed(b"bringing the loopback interface up", e))?;
                    set_capabilities_secure_bits(
                        CapabilitiesSecureBits::NO_ROOT | CapabilitiesSecureBits::NO_ROOT_LOCKED,
                    )
                    .and_then(|()| set_no_new_privs(true))
                    .map_err(|e| failed(b"dropping privileges", e))?;
                }
                if tie {
                    let _ = set_parent_process_death_signal(Some(Signal::KILL));
                    if getppid() != Some(parent) {
                        return Err(rustix::io::Errno::SRCH.into());
                    }
                }
                Ok(())
            });
        }
    }
}

/// `struct mount_attr` of `mount_setattr(2)` (Linux 5.12).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;

/// In the sandboxed child: the error `e` of a step, after naming the step on stderr.
fn failed(step: &[u8], e: rustix::io::Errno) -> std::io::Error {
    let stderr = rustix::stdio::stderr();
    for part in [b"mcpspec --sandbox: ".as_slice(), step, b" failed\n"] {
        let _ = rustix::io::write(stderr, part);
    }
    e.into()
}

/// In a forked child: write `text` to a `/proc` or cgroup file (open, write, close); nothing
/// is allocated.
fn write_proc(path: &std::ffi::CStr, text: &[u8]) -> rustix::io::Result<()> {
    use rustix::fs::{Mode, OFlags, open};
    let fd = open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    match rustix::io::write(&fd, text)? {
        n if n == text.len() => Ok(()),
        _ => Err(rustix::io::Errno::IO),
    }
}

/// In the sandboxed child: set `lo` up (a new network namespace has it down), by asking
/// the kernel over rtnetlink (`RTM_NEWLINK`, `IFF_UP` changed to set) and reading its
/// acknowledgement. The message is built on the stack: the child allocates nothing.
fn loopback_up() -> rustix::io::Result<()> {
    use rustix::net::{
        AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType, netdevice, recv, send,
        socket_with,
    };
    const RTM_NEWLINK: u16 = 16;
    const NLMSG_ERROR: u16 = 2;
    const NLM_F_REQUEST_ACK: u16 = 0x1 | 0x4;
    const IFF_UP: u32 = 0x1;
    // `NETLINK_ROUTE` is protocol 0.
    let fd = socket_with(
        AddressFamily::NETLINK,
        SocketType::RAW,
        SocketFlags::CLOEXEC,
        None,
    )?;
    let index = netdevice::name_to_index(&fd, "lo")?;
    // `struct nlmsghdr` (length, type, flags, sequence, port id 0: the kernel), then
    // `struct ifinfomsg` (family AF_UNSPEC, pad, type, index, flags, change mask).
    let mut request = [0u8; 32];
    request[0..4].copy_from_slice(&32u32.to_ne_bytes());
    request[4..6].copy_from_slice(&RTM_NEWLINK.to_ne_bytes());
    request[6..8].copy_from_slice(&NLM_F_REQUEST_ACK.to_ne_bytes());
    request[8..12].copy_from_slice(&1u32.to_ne_bytes());
    request[20..24].copy_from_slice(&index.to_ne_bytes());
    request[24..28].copy_from_slice(&IFF_UP.to_ne_bytes());
    request[28..32].copy_from_slice(&IFF_UP.to_ne_bytes());
    if send(&fd, &request, SendFlags::empty())? != request.len() {
        return Err(rustix::io::Errno::IO);
    }
    // The answer: `struct nlmsghdr` of type NLMSG_ERROR, then `int error` (0: done).
    let mut answer = [0u8; 64];
    let (_, got) = recv(&fd, &mut answer, RecvFlags::empty())?;
    let kind = u16::from_ne_bytes([answer[4], answer[5]]);
    if got < 20 || kind != NLMSG_ERROR {
        return Err(rustix::io::Errno::PROTO);
    }
    match i32::from_ne_bytes([answer[16], answer[17], answer[18], answer[19]]) {
        0 => Ok(()),
        e => Err(rustix::io::Errno::from_raw_os_error(-e)),
    }
}

/// Why `--sandbox` cannot be honoured here, if it cannot: a sandboxed start of mcpspec
/// itself (`--version`) is tried once.
pub fn sandbox_unavailable() -> Option<String> {
    static PROBED: OnceLock<Option<String>> = OnceLock::new();
    PROBED
        .get_or_init(|| {
            let exe = match std::env::current_exe() {
                Ok(exe) => exe,
                Err(e) => return Some(format!("mcpspec's own program, to try it with, is not found: {e}")),
            };
            let home = std::env::temp_dir().join(format!("mcpspec-sandbox-probe-{}", std::process::id()));
            let _ = std::fs::create_dir(&home);
            let log = home.with_extension("log");
            let result = (|| -> Result<(), String> {
                let stderr = std::fs::File::create(&log).map_err(|e| e.to_string())?;
                let mut cmd = Command::new(exe);
                cmd.arg("--version")
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .stderr(stderr);
                let mut before = BeforeExec::default();
                before.sandbox(&home).map_err(|e| e.to_string())?;
                before.install(&mut cmd, false);
                match cmd.status() {
                    Ok(s) if s.success() => Ok(()),
                    Ok(s) => Err(format!("a sandboxed process ended with {s}")),
                    Err(e) => {
                        let said = std::fs::read_to_string(&log).unwrap_or_default();
                        let step = said
                            .lines()
                            .find_map(|l| l.strip_prefix("mcpspec --sandbox: "))
                            .unwrap_or("making the namespaces");
                        Err(format!(
                            "{step}: {e} (unprivileged user namespaces may be disabled: sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone, kernel.apparmor_restrict_unprivileged_userns)"
                        ))
                    }
                }
            })();
            let _ = std::fs::remove_file(&log);
            let _ = std::fs::remove_dir(&home);
            result.err()
        })
        .clone()
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
        use rustix::process::{Pid, PidfdFlags, pidfd_open};
        let Some(process) = Pid::from_raw(pid.max(0)) else {
            return Err(std::io::Error::from(std::io::ErrorKind::InvalidInput));
        };
        let fd = pidfd_open(process, PidfdFlags::empty())?;
        Ok(Pinned { fd, pid })
    }

    /// The pid it had when pinned.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// SIGKILL the pinned process. False once it is reaped.
    pub fn kill(&self) -> bool {
        rustix::process::pidfd_send_signal(&self.fd, rustix::process::Signal::KILL).is_ok()
    }

    /// Its pid still names it: it runs, or it is a zombie child of mcpspec not reaped yet.
    /// (A zombie of another parent counts as gone: nothing is left in it to signal, and
    /// its pid is free once that parent reaps it.) The pidfd turns readable when the
    /// process exits; `waitid(…, WNOWAIT)` then tells our unreaped child apart.
    pub fn alive(&self) -> bool {
        use rustix::process::{WaitId, WaitIdOptions, waitid};
        !self.has_exited()
            || matches!(
                waitid(
                    WaitId::PidFd(self.fd.as_fd()),
                    WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
                ),
                Ok(Some(_))
            )
    }

    /// Whether it has exited (reaped or not): its pidfd is readable (an error counts as
    /// exited: nothing can be said of it any more).
    fn has_exited(&self) -> bool {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        poll(&mut fds, Some(&now)) != Ok(0)
    }

    /// Reap it if it is an exited child of this process (never blocks). True once reaped
    /// or when it is not (or no longer) a child.
    pub fn reap(&self) -> bool {
        use rustix::process::{WaitId, WaitIdOptions, waitid};
        // P_PIDFD names exactly the pinned process. `Ok(None)`: not exited yet (with
        // WNOHANG, waitid(2) then leaves si_pid 0).
        let waited = waitid(
            WaitId::PidFd(self.fd.as_fd()),
            WaitIdOptions::EXITED | WaitIdOptions::NOHANG,
        );
        !matches!(waited, Ok(None))
    }

    /// Resolves once the pinned process has exited (its pidfd turns readable); `Err` if
    /// that cannot be watched (the caller falls back to polling).
    pub async fn exited(&self) -> std::io::Result<()> {
        // tokio's one safe way to watch a descriptor it has no type for is a pipe end
        // taken "unchecked": only its readiness is asked for, nothing is ever read.
        let watch =
            tokio::net::unix::pipe::Receiver::from_owned_fd_unchecked(self.fd.try_clone()?)?;
        watch.readable().await
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

/// The cgroup (v2) directory mcpspec runs in, once looked up: the cgroup2 mount (from
/// `/proc/self/mountinfo`) joined with mcpspec's path in it (`/proc/self/cgroup`), and
/// that path. `None` without a cgroup2 mount, or with `MCPSPEC_NO_CGROUPS=1` (which is
/// how the walk alone is tested where cgroups work).
fn own_cgroup() -> Option<&'static (std::path::PathBuf, String)> {
    static OWN: OnceLock<Option<(std::path::PathBuf, String)>> = OnceLock::new();
    OWN.get_or_init(|| {
        if std::env::var_os("MCPSPEC_NO_CGROUPS").is_some_and(|v| !v.is_empty() && v != "0") {
            return None;
        }
        let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let path = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        // `id parent dev root mountpoint options… - fstype source superoptions`
        let (root, mountpoint) = mounts.lines().find_map(|line| {
            let (fields, fs) = line.split_once(" - ")?;
            (fs.split_whitespace().next()? == "cgroup2").then_some(())?;
            let mut f = fields.split_whitespace().skip(3);
            Some((f.next()?.to_string(), f.next()?.to_string()))
        })?;
        let below = path.strip_prefix(root.trim_end_matches('/'))?;
        let dir = std::path::Path::new(&mountpoint).join(below.trim_start_matches('/'));
        Some((dir, path.trim_end_matches('/').to_string()))
    })
    .as_ref()
}

/// A cgroup (v2) of one server's own, below mcpspec's: everything the server starts stays
/// in it whatever it does (`setsid`, double forks, a cleared environment), and
/// `cgroup.kill` kills all of it at once, forks in flight included. Made only where
/// mcpspec may (a delegated or writable hierarchy, a kernel with `cgroup.kill`, ≥ 5.14);
/// elsewhere `create` gives `None` and the walk alone cleans up.
#[derive(Debug)]
pub struct ServerCgroup {
    dir: std::path::PathBuf,
    /// Its path as `/proc/<pid>/cgroup` shows it.
    path: String,
}

impl ServerCgroup {
    /// Make the cgroup `name` below mcpspec's own; `None` where that is not allowed.
    pub fn create(name: &str) -> Option<ServerCgroup> {
        let (own_dir, own_path) = own_cgroup()?;
        let dir = own_dir.join(name);
        std::fs::create_dir(&dir).ok()?;
        let cgroup = ServerCgroup {
            dir,
            path: format!("{own_path}/{name}"),
        };
        cgroup.dir.join("cgroup.kill").exists().then_some(cgroup)
    }

    /// SIGKILL every process in it (the leader too; it stays unreaped).
    pub fn kill(&self) {
        let _ = std::fs::write(self.dir.join("cgroup.kill"), "1");
    }

    /// Reap the processes of this cgroup that mcpspec adopted (orphans, now dead), all
    /// but `leader` (its transport reaps it). Each is pinned, then checked: a zombie
    /// child of mcpspec, still in this cgroup.
    pub fn reap_adopted(&self, leader: i32) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
        while self.populated() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let me = std::process::id();
        for child in children(me) {
            if child as i32 == leader {
                continue;
            }
            let Ok(pinned) = Pinned::open(child as i32) else {
                continue;
            };
            let inside = std::fs::read_to_string(format!("/proc/{child}/cgroup"))
                .is_ok_and(|t| t.lines().any(|l| l.strip_prefix("0::") == Some(&self.path)));
            if inside && parent_of(child) == Some(me) && pinned.alive() {
                pinned.reap();
            }
        }
    }

    /// Some process (not a zombie) is still in it.
    fn populated(&self) -> bool {
        std::fs::read_to_string(self.dir.join("cgroup.events"))
            .is_ok_and(|t| t.lines().any(|l| l == "populated 1"))
    }

    /// SIGKILL every process in the cgroups of this mcpspec whose name starts with
    /// `prefix` (on interrupt: every server's), then remove them (mcpspec exits next).
    pub fn kill_all(prefix: &str) {
        let dirs = cgroups_named(|name| name.starts_with(prefix));
        for dir in &dirs {
            let _ = std::fs::write(dir.join("cgroup.kill"), "1");
        }
        for dir in dirs {
            remove_cgroup(&dir);
        }
    }

    /// Remove the empty cgroups left by an mcpspec that was killed outright (its pid,
    /// the first number of `<prefix><pid>.<n>`, names no process now). Removing a cgroup
    /// that has a process fails, so nothing running is touched.
    pub fn remove_stale(prefix: &str) {
        let stale = cgroups_named(|name| {
            name.strip_prefix(prefix)
                .and_then(|rest| rest.split('.').next()?.parse::<i32>().ok())
                // kill(2) with signal 0 sends nothing; it only asks whether the pid
                // names a process.
                .and_then(|pid| rustix::process::Pid::from_raw(pid.max(0)))
                .is_some_and(|pid| rustix::process::test_kill_process(pid).is_err())
        });
        for dir in stale {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// The cgroups below mcpspec's own whose name `pick` accepts.
fn cgroups_named(pick: impl Fn(&str) -> bool) -> Vec<std::path::PathBuf> {
    let Some((own_dir, _)) = own_cgroup() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(own_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| pick(&e.file_name().to_string_lossy()))
        .map(|e| e.path())
        .collect()
}

/// Remove a cgroup once it is empty (zombies do not count), waiting a moment for its
/// killed processes to exit; one still populated then is left (a process stuck in the
/// kernel).
fn remove_cgroup(dir: &std::path::Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
    while std::fs::remove_dir(dir).is_err() && dir.exists() {
        if std::time::Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

impl Drop for ServerCgroup {
    fn drop(&mut self) {
        remove_cgroup(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where this machine lets mcpspec make cgroups: a process moved in before `exec`
    /// and its child are both killed by `cgroup.kill`, and the cgroup is removed.
    #[test]
    fn a_server_cgroup_holds_and_kills_the_whole_tree() {
        let name = format!("mcpspec-{}.unit", std::process::id());
        let Some(cgroup) = ServerCgroup::create(&name) else {
            crate::ground::output::err(format_args!(
                "no writable cgroup v2 hierarchy here: nothing to test\n"
            ));
            return;
        };
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "setsid sleep 30 & exec sleep 31"]);
        let mut before = BeforeExec::default();
        before.enter_cgroup(&cgroup);
        before.install(&mut cmd, false);
        let mut child = cmd.spawn().expect("sh starts");
        let procs = cgroup.dir.join("cgroup.procs");
        let count = || std::fs::read_to_string(&procs).map_or(0, |t| t.lines().count());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while count() < 2 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(count() >= 2, "the shell and its setsid child in the cgroup");
        cgroup.kill();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(child.wait().expect("wait").signal(), Some(libc::SIGKILL));
        cgroup.reap_adopted(child.id() as i32);
        let dir = cgroup.dir.clone();
        drop(cgroup);
        assert!(!dir.exists(), "the cgroup is removed");
    }

    /// `alive` while the pid names the process: running, then a zombie child of ours
    /// (the exit seen, not reaped), and no longer once reaped.
    #[test]
    fn a_pinned_child_is_alive_until_it_is_reaped() {
        let mut child = Command::new("sh")
            .args(["-c", "read _"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("sh starts");
        let pinned = Pinned::open(child.id() as i32).expect("pidfd_open");
        assert!(pinned.alive(), "running");
        drop(child.stdin.take());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !pinned.has_exited() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(pinned.has_exited(), "the pidfd says it exited");
        assert!(pinned.alive(), "a zombie child of ours still holds its pid");
        assert!(pinned.reap(), "reaped");
        assert!(!pinned.alive(), "reaped: its pid names nothing of ours");
        let _ = child.try_wait();
    }
}
