//! Child process groups alive right now, so that Ctrl-C or SIGTERM on mcpspec takes
//! every server it started down with it.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex};

static GROUPS: LazyLock<Mutex<HashSet<i32>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

pub fn register_group(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.insert(pgid);
    }
}

pub fn unregister_group(pgid: i32) {
    if let Ok(mut g) = GROUPS.lock() {
        g.remove(&pgid);
    }
}

/// SIGKILL every registered process group and every marked server process (on
/// interrupt).
pub fn kill_all() {
    if let Ok(g) = GROUPS.lock() {
        for &p in g.iter() {
            crate::sys::kill_group(p, libc::SIGKILL);
        }
    }
    crate::client::tree::kill_all_servers();
}

/// On SIGINT/SIGTERM: kill the servers, then exit 130 / 143.
pub fn install() {
    tokio::spawn(async {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) else {
            return;
        };
        let code = tokio::select! {
            _ = int.recv() => 130,
            _ = term.recv() => 143,
        };
        kill_all();
        eprintln!("mcpspec: interrupted; stopped all servers it started");
        std::process::exit(code);
    });
}
