//! The Streamable HTTP recording proxy: a reverse proxy on a loopback address in front of
//! the server's URL. Requests and responses go through unchanged (status, headers, body;
//! an SSE answer streamed event by event as it comes, the GET stream, `Mcp-Session-Id`,
//! `Last-Event-ID`); the tape gets every JSON-RPC message of the bodies. Hop-by-hop headers
//! are the connection's own (RFC 9110 §7.6.1): the proxy speaks HTTP/1.1 with chunked
//! bodies to the client and lets reqwest pool its connections to the server.
//!
//! The session ends on SIGINT/SIGTERM, or when the client ends its session (a DELETE the
//! server accepted).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::stdio::RelaySummary;
use super::tape::{End, From, TapeWriter};

/// The longest request head read, and the largest request body forwarded.
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 << 20;

type Tape = Arc<Mutex<TapeWriter>>;

/// Hop-by-hop headers, and the ones the proxy sets itself.
fn is_own_header(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
            | "host"
            | "content-length"
            | "accept-encoding"
    )
}

/// Proxy `listen` → `upstream` until a signal or the client's DELETE; `bound` is told the
/// address actually listened on (port 0 picks one).
pub async fn relay(
    listen: SocketAddr,
    upstream: reqwest::Url,
    tape: TapeWriter,
    bound: impl FnOnce(SocketAddr),
) -> std::io::Result<RelaySummary> {
    let listener = TcpListener::bind(listen).await?;
    bound(listener.local_addr()?);
    crate::ground::tls::install_provider();
    let client = reqwest::Client::builder()
        .no_proxy()
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| std::io::Error::other(format!("cannot build the HTTP client: {e}")))?;
    let tape: Tape = Arc::new(Mutex::new(tape));
    let (ended_tx, mut ended_rx) = watch::channel(false);
    let interrupted = crate::ground::signals::interrupted();
    tokio::pin!(interrupted);
    let (end, detail) = loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let _ = stream.set_nodelay(true);
                let conn = Connection {
                    client: client.clone(),
                    upstream: upstream.clone(),
                    tape: Arc::clone(&tape),
                    ended: ended_tx.clone(),
                };
                tokio::spawn(async move {
                    let _ = conn.serve(stream).await;
                });
            }
            _ = ended_rx.changed() => {
                break (End::ClientClosed, "the client ended its session (DELETE)".to_string());
            }
            name = &mut interrupted => {
                break (End::Interrupted, format!("mcpspec got {name}"));
            }
        }
    };
    let mut t = tape.lock().unwrap_or_else(|e| e.into_inner());
    t.end(end, &detail)?;
    Ok(RelaySummary {
        end,
        detail,
        messages: t.messages,
        malformed: t.malformed,
    })
}

struct Connection {
    client: reqwest::Client,
    upstream: reqwest::Url,
    tape: Tape,
    ended: watch::Sender<bool>,
}

/// A request as the client sent it.
struct Request {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    close: bool,
}

impl Connection {
    async fn serve(self, stream: TcpStream) -> std::io::Result<()> {
        let (read, mut write) = stream.into_split();
        let mut read = BufReader::new(read);
        loop {
            let Some(request) = read_request(&mut read).await? else {
                return Ok(());
            };
            let close = request.close;
            self.forward(request, &mut write).await?;
            if close {
                return Ok(());
            }
        }
    }

    async fn forward(
        &self,
        request: Request,
        out: &mut (impl tokio::io::AsyncWrite + Unpin),
    ) -> std::io::Result<()> {
        if request.method == "POST" {
            self.note_body(From::Client, &request.body);
        }
        let url = self
            .upstream
            .join(&request.target)
            .unwrap_or_else(|_| self.upstream.clone());
        // The MCP endpoint itself whatever path the client was given.
        let url = if request.target.split('?').next() == Some(self.upstream.path())
            || request.target == "/"
        {
            self.upstream.clone()
        } else {
            url
        };
        let method =
            reqwest::Method::from_bytes(request.method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut builder = self.client.request(method.clone(), url);
        for (k, v) in &request.headers {
            if !is_own_header(k) {
                builder = builder.header(k, v);
            }
        }
        if !request.body.is_empty() {
            builder = builder.body(request.body);
        }
        let response = match builder.send().await {
            Ok(r) => r,
            Err(e) => {
                let text = format!("mcpspec record: the server could not be reached: {e}");
                let head = format!(
                    "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\r\n",
                    text.len()
                );
                out.write_all(head.as_bytes()).await?;
                out.write_all(text.as_bytes()).await?;
                return out.flush().await;
            }
        };
        let status = response.status();
        let mut head = format!(
            "HTTP/1.1 {} {}\r\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        );
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        for (k, v) in response.headers() {
            if !is_own_header(k.as_str()) {
                head.push_str(k.as_str());
                head.push_str(": ");
                head.push_str(&String::from_utf8_lossy(v.as_bytes()));
                head.push_str("\r\n");
            }
        }
        head.push_str("transfer-encoding: chunked\r\n\r\n");
        out.write_all(head.as_bytes()).await?;
        out.flush().await?;
        let sse = content_type.starts_with("text/event-stream");
        let mut events = SseLines::default();
        let mut json = Vec::new();
        let mut response = response;
        loop {
            let chunk = match response.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(_) => break,
            };
            // The client first: recording never delays what the server sent.
            out.write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
                .await?;
            out.write_all(&chunk).await?;
            out.write_all(b"\r\n").await?;
            out.flush().await?;
            if sse {
                for data in events.push(&chunk) {
                    self.note_body(From::Server, data.as_bytes());
                }
            } else if json.len() < MAX_BODY {
                json.extend_from_slice(&chunk);
            }
        }
        out.write_all(b"0\r\n\r\n").await?;
        out.flush().await?;
        if !sse && content_type.contains("json") {
            self.note_body(From::Server, &json);
        }
        if method == reqwest::Method::DELETE && status.is_success() {
            let _ = self.ended.send(true);
        }
        Ok(())
    }

    /// A body's JSON-RPC message, or each message of a batch, onto the tape.
    fn note_body(&self, from: From, body: &[u8]) {
        if body.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let mut tape = self.tape.lock().unwrap_or_else(|e| e.into_inner());
        match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(serde_json::Value::Array(items)) => {
                for item in items {
                    let line = serde_json::to_vec(&item).unwrap_or_default();
                    let _ = tape.line(from, &line, false);
                }
            }
            _ => {
                let _ = tape.line(from, body, false);
            }
        }
    }
}

/// Read one request (head and body); `None` when the client closed the connection.
async fn read_request(
    read: &mut (impl Unpin + tokio::io::AsyncBufRead),
) -> std::io::Result<Option<Request>> {
    use tokio::io::AsyncBufReadExt;
    let mut head = Vec::new();
    loop {
        let n = read.read_until(b'\n', &mut head).await?;
        if n == 0 {
            return Ok(None);
        }
        if head.ends_with(b"\r\n\r\n") || head == b"\r\n" || head.ends_with(b"\n\n") {
            if head.iter().all(|b| b.is_ascii_whitespace()) {
                head.clear();
                continue;
            }
            break;
        }
        if head.len() > MAX_HEAD {
            return Err(std::io::Error::other("request head too large"));
        }
    }
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.split("\r\n").flat_map(|l| l.split('\n'));
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split_whitespace();
    let method = parts.next().unwrap_or("GET").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let version = parts.next().unwrap_or("HTTP/1.1").to_string();
    let mut headers = Vec::new();
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let header = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.to_ascii_lowercase())
    };
    let close = header("connection").is_some_and(|v| v.contains("close")) || version == "HTTP/1.0";
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            let mut size = String::new();
            read.read_line(&mut size).await?;
            let n = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
                .map_err(|_| std::io::Error::other("bad chunk size"))?;
            if n == 0 {
                let mut end = String::new();
                read.read_line(&mut end).await?;
                break;
            }
            if body.len() + n > MAX_BODY {
                return Err(std::io::Error::other("request body too large"));
            }
            let start = body.len();
            body.resize(start + n, 0);
            read.read_exact(&mut body[start..]).await?;
            let mut crlf = [0u8; 2];
            read.read_exact(&mut crlf).await?;
        }
    } else if let Some(len) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        if len > MAX_BODY {
            return Err(std::io::Error::other("request body too large"));
        }
        body.resize(len, 0);
        read.read_exact(&mut body).await?;
    }
    Ok(Some(Request {
        method,
        target,
        headers,
        body,
        close,
    }))
}

/// An SSE stream cut into the `data` of its events, as bytes arrive.
#[derive(Default)]
pub(super) struct SseLines {
    buf: Vec<u8>,
    data: String,
}

impl SseLines {
    pub(super) fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buf.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(at) = self.buf.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=at).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push(std::mem::take(&mut self.data));
                }
            } else if let Some(d) = line.strip_prefix("data:") {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(d.strip_prefix(' ').unwrap_or(d));
            }
        }
        events
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_are_cut_where_they_end() {
        let mut sse = SseLines::default();
        assert!(sse.push(b"id: 1\ndata: {\"a\"").is_empty());
        assert_eq!(sse.push(b":1}\n\ndata:\n\n"), vec!["{\"a\":1}".to_string()]);
        assert_eq!(
            sse.push(b"data: x\r\ndata: y\r\n\r\n"),
            vec!["x\ny".to_string()]
        );
    }

    #[test]
    fn hop_by_hop_headers_are_the_proxys() {
        assert!(is_own_header("Transfer-Encoding"));
        assert!(!is_own_header("Mcp-Session-Id"));
        assert!(!is_own_header("Authorization"));
    }
}
