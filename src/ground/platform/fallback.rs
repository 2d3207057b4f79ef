//! The whole-tree cleanup's API where there are no pidfds, no child-subreaper flag and no
//! `/proc` (macOS, the BSDs, Windows, and Linux built portable): nothing can be pinned
//! and no walk finds anything, so a server's cleanup is its group kill alone (see the
//! contract in [`crate::ground::platform`]).

/// Not available: orphans go to init (or nowhere, on Windows).
pub fn become_subreaper() -> bool {
    false
}

/// Start `cmd`. Nothing ties the server's life to mcpspec's here (no `PR_SET_PDEATHSIG`):
/// if mcpspec is killed outright, a server that ignores the end of its stdin outlives it.
#[cfg(unix)]
pub fn spawn_tied(
    mut cmd: std::process::Command,
    _before: BeforeExec,
) -> std::io::Result<std::process::Child> {
    cmd.spawn()
}

/// Nothing is done between `fork` and `exec` here: no cgroup to enter, no sandbox.
#[derive(Default)]
pub struct BeforeExec;

impl BeforeExec {
    pub fn enter_cgroup(&mut self, _cgroup: &ServerCgroup) {}

    /// `--sandbox` needs Linux namespaces: never made here.
    pub fn sandbox(&mut self, _home: &std::path::Path) -> std::io::Result<()> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}

/// A process pinned so that a signal reaches it or nothing; never made here (a bare pid
/// could name a stranger by the time it is signalled, so nothing is signalled by pid).
#[derive(Debug)]
pub struct Pinned {
    pid: i32,
}

impl Pinned {
    /// Always fails (`Unsupported`).
    pub fn open(pid: i32) -> std::io::Result<Pinned> {
        let _ = Pinned { pid };
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    pub fn kill(&self) -> bool {
        false
    }

    pub fn alive(&self) -> bool {
        false
    }

    pub fn reap(&self) -> bool {
        true
    }

    /// Never resolves to `Ok`: the caller polls.
    pub async fn exited(&self) -> std::io::Result<()> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
}

/// Nothing is found without `/proc`.
pub fn children(_pid: u32) -> Vec<u32> {
    Vec::new()
}

pub fn parent_of(_pid: u32) -> Option<u32> {
    None
}

pub fn environ(_pid: u32) -> Option<Vec<u8>> {
    None
}

/// Why `--sandbox` cannot be honoured here: always.
pub fn sandbox_unavailable() -> Option<String> {
    Some("it needs Linux user, network and mount namespaces".into())
}

/// No cgroups here: the server's cleanup is the group kill (see the contract).
#[derive(Debug)]
pub struct ServerCgroup;

impl ServerCgroup {
    pub fn create(_name: &str) -> Option<ServerCgroup> {
        None
    }

    pub fn kill(&self) {}

    pub fn reap_adopted(&self, _leader: i32) {}

    pub fn kill_all(_prefix: &str) {}

    pub fn remove_stale(_prefix: &str) {}
}
