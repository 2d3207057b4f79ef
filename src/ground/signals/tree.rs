//! Whole-tree cleanup of stdio servers. A process group reaches the server and the
//! children that stay in it, but a grandchild that calls `setsid()` (or `setpgid`) leaves
//! the group and would survive it. So every server is started with a marker in its
//! environment (inherited by its descendants), mcpspec makes itself a child subreaper
//! (orphans are re-parented to it, not to init), and a server's shutdown kills its tree
//! as taken *before* stdin is closed (a descendant that cleared its environment is still
//! under the server then) plus every process under mcpspec that carries its marker.
//!
//! A pid read from `/proc` may name someone else a moment later (pids come round within
//! seconds on a busy machine), so every process found is pinned (a pidfd, see
//! [`crate::ground::platform::Pinned`]), re-verified after pinning, and signalled only through the pin.
//!
//! Linux only (`/proc`, pidfds, `PR_SET_CHILD_SUBREAPER`): elsewhere the platform finds
//! no process and pins none, so only the process group is signalled (see the contract in
//! [`crate::ground::platform`]). Where the server has a cgroup of its own
//! ([`crate::ground::platform::ServerCgroup`]), `cgroup.kill` has stopped all of it before
//! the walk, which then only reaps. What the walk alone cannot catch: a descendant that
//! both clears its environment and leaves the server's subtree after the tree was taken
//! (it is started while the server shuts down, and its parent exits), and a fork chain
//! that outpaces the walks for [`SWEEP_LIMIT`].

use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::ground::platform::{Pinned, children, environ, parent_of};

/// The environment variable that marks a server's processes.
pub const MARKER_VAR: &str = "MCPSPEC_SERVER_TOKEN";

static SUBREAPER: Once = Once::new();
static NEXT: AtomicU64 = AtomicU64::new(1);

/// A fresh marker value for one server (`<mcpspec pid>.<n>`). On first use, makes
/// mcpspec a subreaper and removes the server cgroups an mcpspec killed outright left.
pub fn new_marker() -> String {
    SUBREAPER.call_once(|| {
        crate::ground::platform::become_subreaper();
        crate::ground::platform::ServerCgroup::remove_stale(CGROUP_PREFIX);
    });
    format!(
        "{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// The name of the cgroup of the server with `marker` (see
/// [`crate::ground::platform::ServerCgroup`]).
pub fn cgroup_name(marker: &str) -> String {
    format!("{CGROUP_PREFIX}{marker}")
}

/// The start of every server cgroup's name (then the marker, `<mcpspec pid>.<n>`).
const CGROUP_PREFIX: &str = "mcpspec-";

/// The start of the name of every server cgroup of this mcpspec.
pub fn cgroup_prefix() -> String {
    cgroup_name(&format!("{}.", std::process::id()))
}

/// At most this many processes are pinned by one walk of a sweep ([`kill_marked`]): each
/// holds a descriptor (the usual limit is 1024). The sweep walks again until nothing is
/// left.
const WALK_LIMIT: usize = 256;
/// At most this many processes of a server's tree are pinned before its stdin is closed
/// (twice per server: see `Leader::pin_tree`); the rest are found by their marker.
const TREE_LIMIT: usize = 1000;
/// How long a sweep goes on while each walk still finds processes to kill (a fork chain
/// that forks again between a walk and its kill is found by the next walk).
const SWEEP_LIMIT: Duration = Duration::from_secs(3);

/// Every process below `root` (not `root` itself), at most [`TREE_LIMIT`], each pinned
/// (see [`crate::ground::platform::Pinned`]) and verified to be a child of the pinned
/// process above it at the time it was pinned. `root` must not be reaped during the call
/// (mcpspec itself, or a server leader, which mcpspec reaps only after its cleanup).
pub fn pin_descendants(root: u32) -> Vec<Pinned> {
    pin_below(root, TREE_LIMIT, |_| true)
}

/// [`pin_descendants`], keeping only the processes `keep` accepts (checked after
/// pinning); the others are walked through and let go. A child is pinned only when it
/// is visited, so the descriptors held are the kept ones and the path above the walk.
fn pin_below(root: u32, limit: usize, keep: impl Fn(&Pinned) -> bool) -> Vec<Pinned> {
    let mut kept: Vec<Rc<Pinned>> = Vec::new();
    let mut seen = HashSet::new();
    // (a child, its parent's pid, its parent pinned; `None` for `root`)
    let mut stack: Vec<(u32, u32, Option<Rc<Pinned>>)> = children(root)
        .into_iter()
        .map(|c| (c, root, None))
        .collect();
    while let Some((child, parent, parent_pin)) = stack.pop() {
        if kept.len() >= limit {
            break;
        }
        if !seen.insert(child) {
            continue;
        }
        let Ok(handle) = Pinned::open(child as i32) else {
            continue;
        };
        // Read after pinning; then both ends still alive means both pids named the
        // same processes all along, so the pinned one is `parent`'s child.
        if parent_of(child) != Some(parent)
            || !handle.alive()
            || parent_pin.as_ref().is_some_and(|p| !p.alive())
        {
            continue;
        }
        let handle = Rc::new(handle);
        if keep(&handle) {
            kept.push(handle.clone());
        }
        stack.extend(
            children(child)
                .into_iter()
                .map(|c| (c, child, Some(handle.clone()))),
        );
    }
    drop(stack);
    kept.into_iter()
        .filter_map(|p| Rc::try_unwrap(p).ok())
        .collect()
}

/// Whether `pid`'s environment has `MARKER_VAR=<value>` (`prefix`: the value starts with
/// `value`).
fn has_marker(pid: u32, value: &str, prefix: bool) -> bool {
    let Some(env) = environ(pid) else {
        return false;
    };
    env.split(|&b| b == 0).any(|entry| {
        entry
            .strip_prefix(MARKER_VAR.as_bytes())
            .and_then(|rest| rest.strip_prefix(b"="))
            .is_some_and(|v| {
                if prefix {
                    v.starts_with(value.as_bytes())
                } else {
                    v == value.as_bytes()
                }
            })
    })
}

/// The processes under mcpspec that carry `marker` (`prefix`: a marker starting with it),
/// pinned, at most [`WALK_LIMIT`]; the environment is read after pinning, and a process
/// that is still alive afterwards is the one that was read.
pub fn pin_marked(marker: &str, prefix: bool) -> Vec<Pinned> {
    pin_below(std::process::id(), WALK_LIMIT, |p| {
        has_marker(p.pid() as u32, marker, prefix) && p.alive()
    })
}

/// SIGKILL every process of one server: `pinned` (its tree, taken while the leader
/// lived) and every process under mcpspec carrying `marker`. Orphans adopted by mcpspec
/// are reaped; the `leader` is not (its transport reaps it).
pub fn kill_server_tree(pinned: Vec<Pinned>, marker: &str, leader: i32) {
    kill_and_reap(pinned, |pid| pid == leader);
    kill_marked(marker, false, |pid| pid == leader);
}

/// SIGKILL every server process of this mcpspec (on interrupt); the `leaders` are not
/// reaped (their transports reap them).
pub fn kill_all_servers(leaders: &HashSet<i32>) {
    let marker = format!("{}.", std::process::id());
    kill_marked(&marker, true, |pid| leaders.contains(&pid));
}

/// Walk, kill and reap the processes under mcpspec that carry the marker, again and
/// again until a walk finds none (a process forked between a walk and its kill, or past
/// [`WALK_LIMIT`], is found by the next), for at most [`SWEEP_LIMIT`]. With mcpspec a
/// subreaper every orphan of the server stays under it, so only a chain that outpaces
/// the walks for that long, or a process that cleared its environment, escapes.
fn kill_marked(marker: &str, prefix: bool, leader: impl Fn(i32) -> bool) {
    let deadline = Instant::now() + SWEEP_LIMIT;
    loop {
        let victims = pin_marked(marker, prefix);
        if victims.is_empty() {
            return;
        }
        kill_and_reap(victims, &leader);
        if Instant::now() >= deadline {
            return;
        }
    }
}

/// Every signal goes through the pinned handle: a process that is gone is not replaced by
/// whoever got its pid.
fn kill_and_reap(mut victims: Vec<Pinned>, leader: impl Fn(i32) -> bool) {
    if victims.is_empty() {
        return;
    }
    for p in &victims {
        p.kill();
    }
    // The adopted ones are ours to reap (`reap` is a no-op for a process that is not our
    // child). A leader is reaped by its transport alone, after its cleanup: reaped here,
    // its pid and group id could name a stranger while that cleanup still signals them.
    victims.retain(|p| !leader(p.pid()));
    let deadline = Instant::now() + Duration::from_millis(200);
    while !victims.is_empty() && Instant::now() < deadline {
        victims.retain(|p| !p.reap());
        if !victims.is_empty() {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(not(mcpspec_linux), ignore = "the tree walk is Linux-only")]
    fn parent_of_a_child_is_this_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep");
        assert_eq!(parent_of(child.id()), Some(std::process::id()));
        let pinned = pin_descendants(std::process::id());
        assert!(pinned.iter().any(|p| p.pid() as u32 == child.id()));
        let _ = child.kill();
        let _ = child.wait();
    }
}
