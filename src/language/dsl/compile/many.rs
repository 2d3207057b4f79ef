//! Compiling many scenario files at once, on every core.
//!
//! Reading YAML is nearly all of the cost of loading (the one front end, serde-saphyr,
//! reads 7–9 MB/s), and scenario files are independent of each other, so a pack of many
//! files is compiled by a few worker threads. It is the same compile call as for one
//! file; results come back in file order, so errors and scenarios are listed as before.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Stack of a compile worker: the size of the main thread's.
const COMPILE_STACK: usize = 8 << 20;

use super::parse_scenario_with;
use crate::ground::load_error::LoadErrors;
use crate::ground::source::SourceFile;
use crate::language::dsl::scenario::Scenario;
use crate::language::dsl::scope::Scope;

/// Below this much text in all, threads cost more than they save (a thread starts in
/// ~20 µs; serde-saphyr reads 64 KB in ~8 ms).
const PARALLEL_FROM_BYTES: usize = 64 * 1024;

/// Compile `files` (in order); `release(i)` says whether the `i`-th one drops its
/// compiled steps (see [`parse_scenario_with`]).
pub(crate) fn parse_scenarios(
    files: Vec<Arc<SourceFile>>,
    scope: &Arc<Scope>,
    release: impl Fn(usize) -> bool + Sync,
) -> Vec<Result<Scenario, LoadErrors>> {
    let compile =
        |i: usize, file: &Arc<SourceFile>| parse_scenario_with(file.clone(), scope, release(i));
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    let workers = if files.len() < 2 || bytes < PARALLEL_FROM_BYTES {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(files.len()))
    };
    if workers == 1 {
        return files
            .iter()
            .enumerate()
            .map(|(i, f)| compile(i, f))
            .collect();
    }
    // Each worker takes the next file not yet taken, so one large file does not hold
    // back a share of small ones.
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, Result<Scenario, LoadErrors>)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                // The main thread's stack (8 MiB), not a spawned thread's 2 MiB: a deeply
                // nested file that one thread compiles must compile on the others too.
                std::thread::Builder::new()
                    .stack_size(COMPILE_STACK)
                    .spawn_scoped(s, || {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(file) = files.get(i) else {
                                return mine;
                            };
                            mine.push((i, compile(i, file)));
                        }
                    })
                    .expect("a compile thread starts")
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| match h.join() {
                Ok(mine) => mine,
                // A panic in a worker is a bug; raise it where it happened.
                Err(panic) => std::panic::resume_unwind(panic),
            })
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}
