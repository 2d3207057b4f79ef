//! Whole-tree cleanup of stdio servers. A process group reaches the server and the
//! children that stay in it, but a grandchild that calls `setsid()` (or `setpgid`) leaves
//! the group and would survive it. So every server is started with a marker in its
//! environment (inherited by its descendants), mcpspec makes itself a child subreaper
//! (orphans are re-parented to it, not to init), and a server's shutdown kills every
//! process under mcpspec that carries the server's marker, plus the server's own
//! descendants (in case one cleared its environment).
//!
//! Linux only (`/proc`, `PR_SET_CHILD_SUBREAPER`); elsewhere only the process group is
//! signalled. What cannot be caught: a descendant that both clears its environment and
//! leaves the server's subtree (its parent exits) before the server is stopped.

use std::collections::HashSet;
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that marks a server's processes.
pub const MARKER_VAR: &str = "MCPSPEC_SERVER_TOKEN";

static SUBREAPER: Once = Once::new();
static NEXT: AtomicU64 = AtomicU64::new(1);

/// A fresh marker value for one server (`<mcpspec pid>.<n>`); makes mcpspec a subreaper
/// on first use.
pub fn new_marker() -> String {
    SUBREAPER.call_once(|| {
        crate::sys::become_subreaper();
    });
    format!(
        "{}.{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Processes below `root` (not `root` itself), by the `/proc` children links.
pub fn descendants(root: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        for child in children(pid) {
            // A bound against a runaway tree (a fork bomb).
            if seen.insert(child) && found.len() < 100_000 {
                found.push(child);
                queue.push(child);
            }
        }
    }
    found
}

fn children(pid: u32) -> Vec<u32> {
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

/// Whether `pid`'s environment has `MARKER_VAR=<value>` (`prefix`: the value starts with
/// `value`).
fn has_marker(pid: u32, value: &str, prefix: bool) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
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

/// SIGKILL every process of one server: `leader`'s descendants and every process under
/// mcpspec carrying `marker`. Orphans adopted by mcpspec are reaped.
pub fn kill_server_tree(leader: Option<u32>, marker: &str) {
    let mut victims: Vec<u32> = leader.map(descendants).unwrap_or_default();
    victims.extend(
        descendants(std::process::id())
            .into_iter()
            .filter(|&p| has_marker(p, marker, false)),
    );
    kill_and_reap(victims, leader);
}

/// SIGKILL every server process of this mcpspec (on interrupt).
pub fn kill_all_servers() {
    let prefix = format!("{}.", std::process::id());
    let victims: Vec<u32> = descendants(std::process::id())
        .into_iter()
        .filter(|&p| has_marker(p, &prefix, true))
        .collect();
    kill_and_reap(victims, None);
}

fn kill_and_reap(mut victims: Vec<u32>, leader: Option<u32>) {
    victims.sort_unstable();
    victims.dedup();
    victims.retain(|&p| Some(p) != leader && p != std::process::id());
    for &pid in &victims {
        crate::sys::kill(pid as i32, libc::SIGKILL);
    }
    // The adopted ones are ours to reap (the leader is tokio's).
    let me = std::process::id();
    let mut adopted: Vec<u32> = victims
        .into_iter()
        .filter(|&p| parent_of(p) == Some(me))
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
    while !adopted.is_empty() && std::time::Instant::now() < deadline {
        adopted.retain(|&p| !crate::sys::reap(p as i32));
        if !adopted.is_empty() {
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid …`; comm may contain spaces and parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_of_a_child_is_this_process() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep");
        assert_eq!(parent_of(child.id()), Some(std::process::id()));
        assert!(descendants(std::process::id()).contains(&child.id()));
        let _ = child.kill();
        let _ = child.wait();
    }
}
