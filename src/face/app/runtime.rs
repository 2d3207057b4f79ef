//! The tokio runtimes the commands run on.

/// A single-threaded runtime: one connection at a time is I/O-bound, and cross-thread
/// wake-ups would cost more than they give.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    runtime_for(1)
}

/// A runtime for `concurrency` connections at once: worker threads only when several
/// scenarios run in parallel.
pub(crate) fn runtime_for(concurrency: usize) -> tokio::runtime::Runtime {
    let mut builder = if concurrency <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(
            concurrency.min(
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1),
            ),
        );
        b
    };
    builder.enable_all().build().expect("tokio runtime")
}
