//! The server's stdin and stdout on tokio's reactor, the same on every platform: tokio's
//! own child pipes (non-blocking pipes registered with the reactor on Unix, a pipe thread
//! on Windows), so no descriptor is registered by hand.

use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The server's stdin: writes that never block.
pub struct PipeWriter(tokio::process::ChildStdin);

impl PipeWriter {
    pub fn new(pipe: std::process::ChildStdin) -> std::io::Result<PipeWriter> {
        Ok(PipeWriter(tokio::process::ChildStdin::from_std(pipe)?))
    }

    /// Write what the pipe takes now (`WouldBlock` when it is full, or while a previous
    /// write is still going).
    pub fn try_write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(&mut self.0).poll_write(&mut cx, buf) {
            Poll::Ready(r) => r,
            Poll::Pending => Err(std::io::ErrorKind::WouldBlock.into()),
        }
    }

    /// Wait until the server takes some of `buf`; how much it took.
    pub async fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).await
    }

    /// [`PipeWriter::write`], and the moment just before the attempt that wrote: a time
    /// measured from there never misses any of the server's (it cannot have read the
    /// bytes sooner), however late this thread runs after the write.
    pub async fn write_stamped(&mut self, buf: &[u8]) -> std::io::Result<(usize, Instant)> {
        std::future::poll_fn(|cx| {
            let at = Instant::now();
            Pin::new(&mut self.0)
                .poll_write(cx, buf)
                .map(|written| written.map(|n| (n, at)))
        })
        .await
    }
}

/// The server's stdout, read without blocking the runtime.
pub struct PipeReader(tokio::process::ChildStdout);

impl PipeReader {
    pub fn new(pipe: std::process::ChildStdout) -> std::io::Result<PipeReader> {
        Ok(PipeReader(tokio::process::ChildStdout::from_std(pipe)?))
    }

    /// Wait for output and read it into `buf` (0: end of file). On Unix a read that did
    /// not fill `buf` emptied the pipe, and tokio then waits on the reactor rather than
    /// with a read(2) that finds nothing: one system call per reply.
    pub async fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).await
    }
}
