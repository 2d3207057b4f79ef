//! `close-after-response`: a front for the HTTP server that closes every client
//! connection right after its first response, without saying `Connection: close` — the
//! way servers drop keep-alive connections after an error or on an idle timeout. A client
//! that reuses such a connection sees it closed under its next request.
//!
//! Each client connection gets exactly one request: it is forwarded to the real server
//! (listening on another loopback port) with `Connection: close`, and the response is
//! relayed with that header removed, then the socket is closed. Requests need a
//! `Content-Length` body (or none), which is what HTTP clients send for JSON POSTs.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Largest request or response head accepted.
const MAX_HEAD: usize = 64 * 1024;

/// Accept connections on `front` forever, each one relayed to `backend` once.
pub async fn serve(front: TcpListener, backend: SocketAddr) {
    loop {
        let Ok((client, _)) = front.accept().await else {
            continue;
        };
        let _ = client.set_nodelay(true);
        tokio::spawn(async move {
            let _ = relay_one(client, backend).await;
        });
    }
}

async fn relay_one(mut client: TcpStream, backend: SocketAddr) -> std::io::Result<()> {
    let (head, mut rest) = read_head(&mut client).await?;
    let head = String::from_utf8_lossy(&head).into_owned();
    let length = header_value(&head, "content-length")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    while rest.len() < length {
        let mut buf = vec![0u8; length - rest.len()];
        let n = client.read(&mut buf).await?;
        if n == 0 {
            return Ok(());
        }
        rest.extend_from_slice(&buf[..n]);
    }
    let mut upstream = TcpStream::connect(backend).await?;
    let _ = upstream.set_nodelay(true);
    let mut request = without_header(&head, "connection");
    request.push_str("connection: close\r\n\r\n");
    upstream.write_all(request.as_bytes()).await?;
    upstream.write_all(&rest).await?;
    let (response_head, body_start) = read_head(&mut upstream).await?;
    let mut response = without_header(&String::from_utf8_lossy(&response_head), "connection");
    response.push_str("\r\n");
    client.write_all(response.as_bytes()).await?;
    client.write_all(&body_start).await?;
    // The rest of the body, until the server closes; a client that goes away (an SSE
    // stream it stopped reading) ends the relay too.
    let mut buf = vec![0u8; 16 * 1024];
    let mut probe = [0u8; 1];
    loop {
        tokio::select! {
            n = upstream.read(&mut buf) => {
                let n = n?;
                if n == 0 {
                    break;
                }
                client.write_all(&buf[..n]).await?;
            }
            gone = client.read(&mut probe) => {
                if matches!(gone, Ok(0) | Err(_)) {
                    return Ok(());
                }
            }
        }
    }
    // Closed at once, unannounced (no FIN wait for the client to say anything).
    client.shutdown().await
}

/// Read up to the end of an HTTP head (`\r\n\r\n`): the head without its final blank
/// line (each header line ends in `\r\n`), and what came after it.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = data.split_off(end + 4);
            data.truncate(end + 2);
            return Ok((data, rest));
        }
        if data.len() > MAX_HEAD {
            return Err(std::io::Error::other("HTTP head too large"));
        }
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        data.extend_from_slice(&buf[..n]);
    }
}

fn header_value<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.split("\r\n").skip(1).find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The head (lines ending in `\r\n`) without the header `name`.
fn without_header(head: &str, name: &str) -> String {
    let mut out = String::with_capacity(head.len());
    for line in head.split("\r\n").filter(|l| !l.is_empty()) {
        let drop = line
            .split_once(':')
            .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case(name));
        if !drop {
            out.push_str(line);
            out.push_str("\r\n");
        }
    }
    out
}
