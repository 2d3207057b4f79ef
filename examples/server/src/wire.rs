//! The stdio line pump between the real stdin/stdout and rmcp's transport.
//!
//! It exists for two reasons:
//! - rmcp silently drops a stdin line that is not JSON; JSON-RPC 2.0 wants a `-32700`
//!   reply, so the pump answers such lines itself (without `id`, as MCP's schema has no
//!   null id; see [`crate::defects::PARSE_ERROR`]) and goes on reading;
//! - the stdio wire defects ([`StdioWire`]) rewrite whole lines.

use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream},
    sync::mpsc,
    task::JoinHandle,
};

use crate::defects::StdioWire;

/// Reads one line (with its newline) into `line`; false at end of input or on error.
async fn next_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, line: &mut String) -> bool {
    line.clear();
    matches!(reader.read_line(line).await, Ok(n) if n > 0)
}

/// Whether rmcp has left its pre-lifecycle loop, which ends the whole session on any
/// notification (rmcp 3.11 `ExpectedInitializeRequest`). Until a lifecycle is chosen
/// (an `initialize`, or a 2026-07-28 request other than `server/discover` carrying its
/// protocol version) a notification has nothing to act on, so a correct server
/// ignores it: the pump drops it instead of letting rmcp exit. Before this, a modern
/// client whose first messages were `server/discover` and a notification killed us.
#[derive(Default)]
struct Lifecycle {
    chosen: bool,
}

impl Lifecycle {
    /// True for a message rmcp must not see yet.
    fn ignores(&mut self, message: &serde_json::Value) -> bool {
        if self.chosen {
            return false;
        }
        let method = message.get("method").and_then(|m| m.as_str());
        let is_request = message.get("id").is_some();
        match method {
            Some("initialize") if is_request => self.chosen = true,
            Some("server/discover" | "ping") => {}
            Some(_) if is_request => {
                self.chosen = message
                    .pointer("/params/_meta")
                    .and_then(|meta| meta.get(crate::defects::PROTOCOL_VERSION_META))
                    .is_some();
            }
            Some("notifications/initialized") => {}
            Some(_) => return true,
            None => {}
        }
        false
    }
}

/// Interposes the pump between `input`/`output` and the returned pair, which is handed
/// to rmcp. The returned task ends once rmcp has closed its writer and every line has
/// been flushed to `output`.
pub fn install<R, W>(
    hooks: StdioWire,
    tasks: Option<crate::tasks::TaskWire>,
    input: R,
    output: W,
) -> ((DuplexStream, DuplexStream), JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    const PIPE: usize = 1 << 16;
    let (rmcp_in, mut to_rmcp) = tokio::io::duplex(PIPE);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE);
    // Every line to write, in order: rmcp's own and the pump's parse errors. `None` means
    // rmcp closed its writer, which ends the output.
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<Option<String>>();

    let inbound_hooks = hooks.clone();
    let inbound_tasks = tasks.clone();
    let parse_errors = out_tx.clone();
    // `parse-error=late`: a parse error held back until rmcp's next line is written.
    let held = std::sync::Arc::new(std::sync::Mutex::new(None::<String>));
    let hold = held.clone();
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        let mut line = String::new();
        let mut lifecycle = Lifecycle::default();
        while next_line(&mut input, &mut line).await {
            let text = line.trim();
            if !text.is_empty() {
                match serde_json::from_str::<serde_json::Value>(text) {
                    Ok(mut message) => {
                        if let Some(log) = inbound_hooks.invalid_request_log(&message) {
                            let _ = parse_errors.send(Some(log.to_owned()));
                        }
                        if inbound_hooks.drops_invalid(&message) {
                            continue;
                        }
                        if lifecycle.ignores(&message) {
                            continue;
                        }
                        // The 2025-11-25 tasks of `slow_job` and `approve_job`
                        // (`--interactive`).
                        if let Some(lines) =
                            inbound_tasks.as_ref().and_then(|t| t.inbound(&message))
                        {
                            for reply in lines {
                                let _ = parse_errors.send(Some(reply));
                            }
                            continue;
                        }
                        let (reply, swallow) = inbound_hooks.inbound_effects(&message);
                        if let Some(reply) = reply {
                            let _ = parse_errors.send(Some(reply));
                        }
                        if swallow {
                            continue;
                        }
                        if inbound_hooks.on_inbound(&mut message) {
                            line = format!("{message}\n");
                        }
                    }
                    Err(_) => {
                        if let Some(log) = inbound_hooks.malformed_log() {
                            let _ = parse_errors.send(Some(log.to_owned()));
                        }
                        if let Some(reply) = inbound_hooks.parse_error_reply() {
                            if inbound_hooks.parse_error_late() {
                                *hold.lock().expect("lock") = Some(reply.to_owned());
                            } else {
                                let _ = parse_errors.send(Some(reply.to_owned()));
                            }
                        }
                        if inbound_hooks.parse_error_fatal() {
                            // `parse-error=fatal`: the session is dead, the process lives on
                            // until its input ends.
                            while next_line(&mut input, &mut line).await {}
                            break;
                        }
                        continue;
                    }
                }
            }
            if to_rmcp.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
        let _ = to_rmcp.shutdown().await;
    });

    tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = String::new();
        while next_line(&mut from_rmcp, &mut line).await {
            let mut text = line.trim_end_matches(['\n', '\r']).to_owned();
            if let Some(changed) = tasks.as_ref().and_then(|t| t.outbound(&text)) {
                text = changed;
            }
            if out_tx.send(Some(text)).is_err() {
                break;
            }
            if let Some(late) = held.lock().expect("lock").take() {
                let _ = out_tx.send(Some(late));
            }
        }
        let _ = out_tx.send(None);
    });

    let flushed = tokio::spawn(async move {
        let mut output = output;
        while let Some(Some(text)) = out_rx.recv().await {
            let mut out = hooks.on_outbound(&text);
            if out.is_empty() {
                continue; // a line a defect drops
            }
            out.push('\n');
            if output.write_all(out.as_bytes()).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });

    ((rmcp_in, rmcp_out), flushed)
}
