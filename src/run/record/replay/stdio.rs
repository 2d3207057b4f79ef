//! The replay's server over stdio: started for the replay, one JSON line each way.

use serde_json::Value;
use tokio::time::Instant;

use super::{Came, Peer};
use crate::run::client::stdio::Relayed;
use crate::run::record::tape::Lines;

pub struct StdioPeer {
    server: Relayed,
    lines: Lines,
    buf: Vec<u8>,
}

impl StdioPeer {
    pub fn spawn(words: &[String]) -> std::io::Result<StdioPeer> {
        Ok(StdioPeer {
            server: Relayed::spawn(words)?,
            lines: Lines::default(),
            buf: vec![0u8; 64 * 1024],
        })
    }

    /// Write one line to the server's stdin; false when it reads no more.
    async fn write_line(&mut self, line: &str) -> bool {
        let Some(stdin) = self.server.stdin.as_mut() else {
            return false;
        };
        let mut bytes = line.as_bytes().to_vec();
        bytes.push(b'\n');
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            match stdin.write(rest).await {
                Ok(n) => rest = &rest[n..],
                Err(_) => return false,
            }
        }
        true
    }
}

impl Peer for StdioPeer {
    async fn send(&mut self, _msg: &Value, text: &str) -> Result<(), String> {
        if self.write_line(text).await {
            Ok(())
        } else {
            Err("the server stopped reading its input".into())
        }
    }

    async fn next(&mut self, deadline: Instant) -> Came {
        let read = tokio::time::timeout_at(deadline, self.server.stdout.read(&mut self.buf)).await;
        let n = match read {
            Ok(Ok(n)) if n > 0 => n,
            Ok(_) => return Came::Gone("the server closed its output".into()),
            Err(_) => return Came::TimedOut,
        };
        let mut got = Vec::new();
        let _ = self.lines.push(&self.buf[..n], |line, _| {
            if let Ok(v) = serde_json::from_slice::<Value>(line) {
                got.push(v);
            }
            Ok(())
        });
        Came::Messages(got)
    }

    async fn answer(&mut self, text: &str) {
        self.write_line(text).await;
    }

    async fn stop(&mut self) {
        self.server.stop().await;
    }
}
