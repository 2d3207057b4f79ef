//! A reply body as SSE events: each event bounded in size, the moment each chunk came stamped.

use std::time::Instant;

use futures::StreamExt;

use super::OVERSIZED;
use super::reqwest_client::describe_reqwest;

/// The body as SSE events; the stream fails once one event (message) is longer than
/// `limit` bytes. A stream as a whole is not capped: like stdio, a server may send any
/// number of messages before its reply (each one is judged and counted as it comes).
/// `received`, when given, is stamped as each chunk comes (before the SSE parsing).
pub(super) fn sse_events(
    response: reqwest::Response,
    limit: usize,
    received: Option<Stamp>,
) -> sse_stream::SseByteStream<
    impl futures::Stream<Item = Result<bytes::Bytes, std::io::Error>> + Send + use<>,
> {
    let mut event = EventSize::default();
    let bytes = response.bytes_stream().map(move |chunk| {
        if let Some(stamp) = &received {
            stamp.set_now();
        }
        match chunk {
            Ok(c) if event.feed(&c) > limit => Err(std::io::Error::other(OVERSIZED)),
            Ok(c) => Ok(c),
            Err(e) => Err(std::io::Error::other(describe_reqwest(&e))),
        }
    });
    sse_stream::SseByteStream::new(bytes)
}

/// A moment of an exchange, set from wherever its bytes pass (hyper's connection task for
/// the request body, the reply's stream for its chunks).
#[derive(Clone)]
pub(super) struct Stamp(std::sync::Arc<std::sync::Mutex<Instant>>);

impl Stamp {
    pub(super) fn now() -> Stamp {
        Stamp(std::sync::Arc::new(std::sync::Mutex::new(Instant::now())))
    }

    pub(super) fn set_now(&self) {
        if let Ok(mut at) = self.0.lock() {
            *at = Instant::now();
        }
    }

    pub(super) fn get(&self) -> Instant {
        self.0.lock().map_or_else(|e| *e.into_inner(), |at| *at)
    }
}

/// The size of the SSE event being received: the bytes of its lines (line ends left out)
/// since the blank line that ended the one before. Line ends are `\n`, `\r\n` or `\r`,
/// and may be split across chunks.
#[derive(Default)]
struct EventSize {
    /// Bytes of the current event so far.
    event: usize,
    /// Bytes of the current line so far.
    line: usize,
    /// The last byte was `\r` (a `\n` right after it ends no other line).
    after_cr: bool,
}

impl EventSize {
    /// Count `chunk`; the largest size the current event reached within it.
    fn feed(&mut self, chunk: &[u8]) -> usize {
        let mut most = self.event;
        for &b in chunk {
            if b == b'\n' && self.after_cr {
                self.after_cr = false;
                continue;
            }
            self.after_cr = b == b'\r';
            if b == b'\n' || b == b'\r' {
                if self.line == 0 {
                    // A blank line: the event is complete.
                    self.event = 0;
                }
                self.line = 0;
            } else {
                self.line += 1;
                self.event += 1;
                most = most.max(self.event);
            }
        }
        most
    }
}

#[cfg(test)]
mod tests {
    use super::EventSize;

    #[test]
    fn event_size_restarts_at_each_blank_line() {
        let mut e = EventSize::default();
        assert_eq!(e.feed(b"data: abc\n\n"), 9);
        assert_eq!(e.event, 0);
        // Any number of events: each is counted alone.
        for _ in 0..1000 {
            assert!(e.feed(b"data: {\"x\":1}\r\n\r\n") <= 14);
        }
        // One event split over chunks and lines (CR LF split between chunks too).
        assert_eq!(e.feed(b"data: 1234\r"), 10);
        assert_eq!(e.feed(b"\ndata: 5678"), 20);
        assert_eq!(e.feed(b"\r\r"), 20);
        assert_eq!(e.event, 0);
        assert_eq!(e.feed(b"data: x\n\ndata: yy\n"), 8);
    }
}
