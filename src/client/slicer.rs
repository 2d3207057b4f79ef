//! Bounded blocking reads. On a current-thread runtime the stdio transport waits for a
//! reply with a plain blocking read(2) — one system call per message, as a hand-written
//! client would make — and this module makes sure such a read never blocks the runtime for
//! longer than a slice: one helper thread sends `SIGURG` (handled, without `SA_RESTART`) to
//! a thread whose read has blocked that long, the read returns `EINTR`, and the transport
//! lets the runtime run (signal handling, the process waiter) and checks its deadline.
//!
//! Only a thread inside [`Blocker::read`] is ever signalled (the helper signals under the
//! reader's lock, which the reader takes to leave), so no other system call of the thread
//! is disturbed.

use std::io::Read;
use std::sync::{Arc, Condvar, LazyLock, Mutex, Once, Weak};
use std::time::{Duration, Instant};

/// How long one read may block before it is interrupted.
pub const SLICE: Duration = Duration::from_millis(50);
/// How often the helper looks at the blocked reads.
const TICK: Duration = Duration::from_millis(10);

static BASE: LazyLock<Instant> = LazyLock::new(Instant::now);
static READERS: LazyLock<(Mutex<Vec<Weak<Blocker>>>, Condvar)> =
    LazyLock::new(|| (Mutex::new(Vec::new()), Condvar::new()));
static START: Once = Once::new();

/// One reader's state, shared with the helper thread.
#[derive(Debug)]
pub struct Blocker {
    /// While a read is under way: when it started (milliseconds since [`BASE`]) and the
    /// reading thread. The helper signals only while holding this lock, and the reader
    /// clears it under the lock, so the thread signalled is alive.
    reading: Mutex<Option<(u64, libc::pthread_t)>>,
}

impl Blocker {
    /// A reader known to the helper thread (started on first use).
    pub fn register() -> Arc<Blocker> {
        START.call_once(start);
        let blocker = Arc::new(Blocker {
            reading: Mutex::new(None),
        });
        let (list, wake) = &*READERS;
        if let Ok(mut list) = list.lock() {
            list.push(Arc::downgrade(&blocker));
            wake.notify_one();
        }
        blocker
    }

    /// read(2) on a blocking descriptor, interrupted (`ErrorKind::Interrupted`) after
    /// blocking for [`SLICE`].
    pub fn read(&self, file: &mut std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
        // SAFETY: pthread_self(3) has no preconditions.
        let me = unsafe { libc::pthread_self() };
        self.set(Some((now_ms(), me)));
        let result = file.read(buf);
        self.set(None);
        result
    }

    fn set(&self, reading: Option<(u64, libc::pthread_t)>) {
        match self.reading.lock() {
            Ok(mut r) => *r = reading,
            Err(poisoned) => *poisoned.into_inner() = reading,
        }
    }
}

fn now_ms() -> u64 {
    BASE.elapsed().as_millis() as u64
}

extern "C" fn interrupted(_: libc::c_int) {}

fn start() {
    LazyLock::force(&BASE);
    // SAFETY: installs a handler that does nothing (async-signal-safe) for SIGURG, which
    // is ignored by default and used by nothing else here; no SA_RESTART, so a blocking
    // read(2) it interrupts returns EINTR.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = interrupted as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        action.sa_flags = 0;
        libc::sigaction(libc::SIGURG, &action, std::ptr::null_mut());
    }
    let _ = std::thread::Builder::new()
        .name("mcpspec-slicer".into())
        .spawn(helper);
}

fn helper() {
    let (list, wake) = &*READERS;
    let Ok(mut readers) = list.lock() else {
        return;
    };
    loop {
        readers.retain(|r| r.strong_count() > 0);
        if readers.is_empty() {
            readers = match wake.wait(readers) {
                Ok(r) => r,
                Err(_) => return,
            };
            continue;
        }
        let now = now_ms();
        for reader in readers.iter().filter_map(Weak::upgrade) {
            let Ok(reading) = reader.reading.lock() else {
                continue;
            };
            if let Some((since, thread)) = *reading
                && now >= since + SLICE.as_millis() as u64
            {
                // SAFETY: `thread` is inside `Blocker::read`, which cannot return past its
                // `set(None)` while this lock is held: the thread is alive. If the read
                // already returned, the handler runs and does nothing.
                unsafe {
                    libc::pthread_kill(thread, libc::SIGURG);
                }
            }
        }
        drop(readers);
        std::thread::sleep(TICK);
        readers = match list.lock() {
            Ok(r) => r,
            Err(_) => return,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read on a pipe nobody writes to comes back interrupted after about a slice.
    #[test]
    fn blocked_read_is_interrupted_after_a_slice() {
        let mut fds = [0; 2];
        // SAFETY: pipe(2) fills two descriptors we then own.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors are fresh and owned here.
        let (mut read_end, _write_end) = unsafe {
            use std::os::fd::FromRawFd;
            (
                std::fs::File::from_raw_fd(fds[0]),
                std::fs::File::from_raw_fd(fds[1]),
            )
        };
        let blocker = Blocker::register();
        let started = Instant::now();
        let mut buf = [0u8; 16];
        let err = blocker.read(&mut read_end, &mut buf).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::Interrupted);
        let took = started.elapsed();
        assert!(took >= SLICE - TICK, "{took:?}");
        assert!(took < Duration::from_secs(5), "{took:?}");
    }
}
