//! The stdio recording proxy: the client's config launches `mcpspec record … -- SERVER`
//! instead of the server. Bytes go both ways unchanged and at once (a reply is written to the
//! client before the tape sees it); the tape gets a copy of every line, and the server's
//! stderr is passed through to mcpspec's stderr and kept on the tape too.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;

use super::tape::{End, From, Lines, TapeWriter};
use crate::run::client::stdio::Relayed;

/// After the client closed its side, how long the server may go on answering (its replies
/// still reach the client) before it is stopped.
const DRAIN_AFTER_CLIENT: Duration = Duration::from_secs(3);

/// How a recorded session went.
pub struct RelaySummary {
    pub end: End,
    pub detail: String,
    pub messages: u64,
    pub malformed: u64,
}

/// Relay between this process's stdin/stdout and the server `words` until one side ends
/// or a signal arrives; the tape gets every line. The server is stopped before returning.
pub async fn relay(words: &[String], tape: TapeWriter) -> std::io::Result<RelaySummary> {
    let mut server = Relayed::spawn(words)?;
    let tape = Arc::new(Mutex::new(tape));
    if let Some(mut stderr) = server.stderr.take() {
        let tape = Arc::clone(&tape);
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let _ = std::io::stderr().write_all(&buf[..n]);
                let _ = tape
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .stderr(&buf[..n]);
            }
        });
    }
    let (client_tx, mut client_rx) = mpsc::channel::<Vec<u8>>(16);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if client_tx.blocking_send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut from_client = Lines::default();
    let mut from_server = Lines::default();
    let mut out = std::io::stdout();
    let mut buf = vec![0u8; 64 * 1024];
    let mut client_open = true;
    let mut drain_until = None;
    let interrupted = crate::ground::signals::interrupted();
    tokio::pin!(interrupted);
    let note = |lines: &mut Lines, from: From, bytes: &[u8]| {
        let mut t = tape.lock().unwrap_or_else(|e| e.into_inner());
        lines.push(bytes, |line, cut| t.line(from, line, cut))
    };
    let (end, detail) = loop {
        let drain = async {
            match drain_until {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            chunk = client_rx.recv(), if client_open => match chunk {
                Some(bytes) => {
                    if let Some(stdin) = server.stdin.as_mut() {
                        let mut rest = &bytes[..];
                        while !rest.is_empty() {
                            match stdin.write(rest).await {
                                Ok(n) => rest = &rest[n..],
                                Err(_) => {
                                    server.stdin = None;
                                    break;
                                }
                            }
                        }
                    }
                    note(&mut from_client, From::Client, &bytes)?;
                }
                None => {
                    client_open = false;
                    {
                        let mut t = tape.lock().unwrap_or_else(|e| e.into_inner());
                        from_client.finish(|line, cut| t.line(From::Client, line, cut))?;
                    }
                    server.stdin = None;
                    drain_until = Some(tokio::time::Instant::now() + DRAIN_AFTER_CLIENT);
                }
            },
            read = server.stdout.read(&mut buf) => match read {
                Ok(n) if n > 0 => {
                    // The client first: recording never delays a reply.
                    if out.write_all(&buf[..n]).and_then(|_| out.flush()).is_err() {
                        // The client is gone: what it did not read is still on the tape.
                        client_open = false;
                    }
                    note(&mut from_server, From::Server, &buf[..n])?;
                }
                _ => {
                    {
                        let mut t = tape.lock().unwrap_or_else(|e| e.into_inner());
                        from_server.finish(|line, cut| t.line(From::Server, line, cut))?;
                    }
                    let status = server.wait_exit(Duration::from_secs(2)).await;
                    // The signal's handler stops the server right after it is received: its
                    // end is the signal's, whichever this loop saw first.
                    if let Some(name) = crate::ground::signals::received_name() {
                        break (End::Interrupted, format!("mcpspec got {name}"));
                    }
                    break match (client_open, status) {
                        (false, status) => (
                            End::ClientClosed,
                            status.map_or("the server closed its output".into(), |s| {
                                server.describe_exit(s)
                            }),
                        ),
                        (true, Some(s)) if s.success() => {
                            (End::ServerExited, server.describe_exit(s))
                        }
                        (true, Some(s)) => (End::ServerCrashed, server.describe_exit(s)),
                        (true, None) => (
                            End::ServerCrashed,
                            "the server closed its output and did not exit".into(),
                        ),
                    };
                }
            },
            _ = drain => {
                break (
                    End::ClientClosed,
                    "the server was still running when the client left; mcpspec stopped it".into(),
                );
            }
            name = &mut interrupted => {
                break (End::Interrupted, format!("mcpspec got {name}"));
            }
        }
    };
    server.stop().await;
    let mut t = tape.lock().unwrap_or_else(|e| e.into_inner());
    t.end(end, &detail)?;
    Ok(RelaySummary {
        end,
        detail,
        messages: t.messages,
        malformed: t.malformed,
    })
}
