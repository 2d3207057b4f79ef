//! The scenarios of a run that are under way at once (at most `--jobs`), polled together
//! in the run's one future.
//!
//! Why not `futures::stream::FuturesUnordered`: after it has polled each of its futures
//! once it wakes its own task to yield to the runtime, so every time a scenario waits for
//! a server reply the current-thread runtime takes one more turn of its reactor
//! (`epoll_wait` with no timeout) and polls the run again for nothing — a system call and
//! a poll per request, measured in `cargo bench --bench stdio_overhead` (BENCHMARKS.md,
//! session 11). A run holds a handful of scenarios at a time, so polling all of them on
//! each wake-up costs less than the bookkeeping that avoids it.
//!
//! # The rule: never block the engine
//!
//! Every scenario of a run is polled inside this one future, on one thread: a call that
//! blocks the thread (`std::thread::sleep`, `std::sync::mpsc::Receiver::recv_timeout`, a
//! blocking read or a wait for a process) stalls every scenario under way, so with
//! `--jobs 16` sixteen waits add up instead of overlapping. On the engine's path a wait is
//! always a future: `tokio::time::timeout`/`sleep`, a `tokio::sync::Notify` or `watch`
//! fed by the thread that does the blocking work (the stdio transport's stderr thread
//! tells its progress so), or the tokio reactor. Blocking work goes to a thread of its own
//! (stderr reads, process spawns through the spawner thread) and only its result is
//! awaited. `tests/faults.rs` (`sixteen_failing_starts_at_once_…`) holds the rule: sixteen
//! failing starts at once take about one wait, not sixteen.
//!
//! Known exceptions, bounded and short: `fork`/`exec` of a server (the spawner thread's
//! reply, milliseconds: it is waited for under the lock of `ground::signals::groups`, which
//! registers the new process group before an interrupt can miss it, and a std lock held
//! across an `.await` deadlocks the next spawn on this thread — awaiting it needs that
//! registration moved onto the spawner thread first) and, when a server left processes behind, the reaping of what
//! mcpspec just killed with `SIGKILL` (`ground::signals::tree`, polls every 2 ms for at
//! most 200 ms; a killed process is normally gone within the first poll). They also run
//! from `Drop`, which cannot await.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;

pub struct Running<F> {
    futures: Vec<Pin<Box<F>>>,
}

impl<F: Future> Running<F> {
    pub fn new() -> Self {
        Running {
            futures: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.futures.len()
    }

    pub fn is_empty(&self) -> bool {
        self.futures.is_empty()
    }

    pub fn push(&mut self, future: F) {
        self.futures.push(Box::pin(future));
    }

    /// The output of the next one to finish (in no particular order); `None` when none
    /// is under way.
    pub async fn next(&mut self) -> Option<F::Output> {
        if self.futures.is_empty() {
            return None;
        }
        std::future::poll_fn(|cx| {
            for i in 0..self.futures.len() {
                if let Poll::Ready(output) = self.futures[i].as_mut().poll(cx) {
                    drop(self.futures.swap_remove(i));
                    return Poll::Ready(Some(output));
                }
            }
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every future finishes and is handed back once, whatever the order they finish in.
    #[test]
    fn each_output_comes_back_once() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let outputs = rt.block_on(async {
            let mut running = Running::new();
            for (i, ms) in [30u64, 10, 20, 0].into_iter().enumerate() {
                running.push(async move {
                    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
                    i
                });
            }
            assert_eq!(running.len(), 4);
            let mut outputs = Vec::new();
            while let Some(i) = running.next().await {
                outputs.push(i);
            }
            assert!(running.is_empty());
            outputs
        });
        // Each once; the order is the timer's (on a busy machine two sleeps end in one
        // turn and come back in either order).
        let mut sorted = outputs.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, [0, 1, 2, 3], "{outputs:?}");
    }
}
