//! The GET stream of a legacy HTTP session: after `initialize`, a client may GET the
//! endpoint for an event stream on which the server sends requests and notifications
//! that belong to no request of the client's (server-everything's `roots/list`). mcpspec
//! opens it when the scenario declares a client (it has answers to give), reads it in a
//! task of its own — a server request there is answered while the step's own request
//! waits on it — and keeps what came for the next exchange to report.
//!
//! Bounded: the stream ends with the session (dropping the listener aborts its task); a
//! stream the server ends is resumed (`Last-Event-ID`, after the server's `retry:`) a few
//! times only; a 405 (the server offers no such stream) ends it silently; an event that is
//! not a JSON-RPC message fails the next exchange and ends the stream.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use super::{HttpTransport, Outgoing, TransportError, send_once_more, sse_events};
use crate::protocol::headers as h;

/// Resumptions of a stream the server ended, in a row without an event between them.
const RESUMPTIONS: u32 = 3;
/// The wait before a resumption when the server gave no `retry:`.
const DEFAULT_RETRY: Duration = Duration::from_millis(500);
/// The longest `retry:` honoured: a longer one is shortened to it.
const LONGEST_RETRY: Duration = Duration::from_secs(5);

/// How long an answer to a request on the stream may take (a sampling model's answer,
/// say): the request belongs to no step, so no step's timeout bounds it.
const ANSWER_BOUND: Duration = Duration::from_secs(30);

/// What the listener's task shares with the transport.
#[derive(Default)]
struct Shared {
    /// Messages that came on the stream and were not reported yet, with the answer sent
    /// to each server request among them.
    inbox: Vec<Value>,
    /// Transcript notes (opened, refused, resumed, ended).
    notes: Vec<String>,
    /// Why the stream failed (not JSON-RPC, broke): the next exchange fails with it, once.
    failure: Option<String>,
}

/// The session's GET stream, read in a task of its own until dropped.
pub struct Listener {
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
    /// Becomes true once the stream is open (or will not be).
    ready: tokio::sync::watch::Receiver<bool>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Listener {
    /// Open the GET stream of `session` (negotiated `revision`) and read it in a task.
    /// `transport` is a copy of the session's transport (its answers, headers, sign-in).
    pub fn open(transport: HttpTransport, session: String, revision: String) -> Listener {
        let shared = Arc::new(Mutex::new(Shared::default()));
        let (ready_tx, ready) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(listen(
            transport,
            session,
            revision,
            shared.clone(),
            ready_tx,
        ));
        Listener {
            shared,
            task,
            ready,
        }
    }

    /// Wait until the stream is open (or refused), at most `wait`: a request sent after it
    /// finds the stream there for what the server sends tied to no call.
    pub async fn opened(&mut self, wait: Duration) {
        let _ = tokio::time::timeout(wait, self.ready.wait_for(|open| *open)).await;
    }

    /// What came on the stream since the last call: its messages, notes, and its failure
    /// (once).
    pub fn take(&self) -> (Vec<Value>, Vec<String>, Option<String>) {
        let mut s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        (
            std::mem::take(&mut s.inbox),
            std::mem::take(&mut s.notes),
            s.failure.take(),
        )
    }
}

fn note(shared: &Mutex<Shared>, text: String) {
    shared
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .notes
        .push(text);
}

fn fail(shared: &Mutex<Shared>, why: String) {
    let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
    s.notes.push(format!("the session's GET stream: {why}"));
    s.failure.get_or_insert(why);
}

/// How one opening of the stream ended.
enum Ended {
    /// The server ended it (resume after `retry`); `events`: whether anything came.
    Closed { events: bool },
    /// Not to be opened again (405, an error status, garbage).
    Done,
}

async fn listen(
    t: HttpTransport,
    session: String,
    revision: String,
    shared: Arc<Mutex<Shared>>,
    ready: tokio::sync::watch::Sender<bool>,
) {
    let mut last_id: Option<String> = None;
    let mut retry = DEFAULT_RETRY;
    let mut idle_resumptions = 0;
    // Whatever happens, the exchange waiting on the opening goes on.
    let ready = ReadyOnDrop(ready);
    loop {
        let once = listen_once(
            &t,
            &session,
            &revision,
            &shared,
            &mut last_id,
            &mut retry,
            &ready.0,
        );
        match once.await {
            Ended::Done => return,
            Ended::Closed { events } => {
                idle_resumptions = if events { 0 } else { idle_resumptions + 1 };
                if idle_resumptions > RESUMPTIONS {
                    note(
                        &shared,
                        format!(
                            "the session's GET stream ended {RESUMPTIONS} times in a row without an event: not resumed again"
                        ),
                    );
                    return;
                }
                tokio::time::sleep(retry).await;
                note(
                    &shared,
                    format!(
                        "the session's GET stream ended: resumed{}",
                        last_id
                            .as_ref()
                            .map(|id| format!(" with Last-Event-ID {id}"))
                            .unwrap_or_default()
                    ),
                );
            }
        }
    }
}

/// Signals `ready` when dropped (the task ended, or was aborted).
struct ReadyOnDrop(tokio::sync::watch::Sender<bool>);

impl Drop for ReadyOnDrop {
    fn drop(&mut self) {
        self.0.send_replace(true);
    }
}

async fn listen_once(
    t: &HttpTransport,
    session: &str,
    revision: &str,
    shared: &Mutex<Shared>,
    last_id: &mut Option<String>,
    retry: &mut Duration,
    ready: &tokio::sync::watch::Sender<bool>,
) -> Ended {
    let mut out_headers = vec![
        (h::SESSION_ID.to_string(), session.to_string()),
        (h::PROTOCOL_VERSION.to_string(), revision.to_string()),
        ("Accept".to_string(), "text/event-stream".to_string()),
    ];
    if let Some(id) = last_id {
        out_headers.push((h::LAST_EVENT_ID.to_string(), id.clone()));
    }
    let out = Outgoing {
        body: String::new(),
        id: None,
        expects_response: false,
        headers: out_headers,
        drop_headers: vec!["content-type".into()],
        http_method: Some("GET".into()),
        // The bound of each answer POSTed (see `HttpTransport::answer`).
        timeout: Duration::from_secs(5),
        quiet_period: Duration::ZERO,
    };
    let token = t.access_token(&out).await.ok().flatten();
    let headers = match t.headers_for(&out, token.as_deref()) {
        Ok(mut headers) => {
            headers.remove(reqwest::header::CONTENT_TYPE);
            headers
        }
        Err(e) => {
            fail(shared, e.to_string());
            return Ended::Done;
        }
    };
    let response = match send_once_more(&t.client, |c| c.get(&t.url).headers(headers.clone())).await
    {
        Ok((r, _)) => r,
        Err(e) => {
            note(
                shared,
                format!("the session's GET stream could not be opened: {e}"),
            );
            return Ended::Done;
        }
    };
    let status = response.status().as_u16();
    let is_sse = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().starts_with("text/event-stream"));
    if status == 405 {
        // The spec's way to say "no such stream here": nothing to report.
        return Ended::Done;
    }
    if !(200..300).contains(&status) {
        note(
            shared,
            format!("the session's GET stream was refused: HTTP {status}"),
        );
        return Ended::Done;
    }
    if !is_sse {
        fail(
            shared,
            format!(
                "HTTP {status} without `Content-Type: text/event-stream` (a GET for the stream is answered with an event stream or 405)"
            ),
        );
        return Ended::Done;
    }
    if last_id.is_none() {
        note(shared, "the session's GET stream is open".into());
    }
    ready.send_replace(true);
    let mut events = std::pin::pin!(sse_events(response, t.max_bytes, None));
    let mut any = false;
    while let Some(event) = events.next().await {
        let event = match event {
            Ok(e) => e,
            Err(e) => {
                fail(shared, format!("the stream broke: {e}"));
                return Ended::Done;
            }
        };
        if let Some(ms) = event.retry {
            *retry = Duration::from_millis(ms).min(LONGEST_RETRY);
        }
        if let Some(id) = event.id.filter(|id| !id.is_empty()) {
            *last_id = Some(id);
        }
        let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
            continue;
        };
        any = true;
        let msg = match serde_json::from_str::<Value>(&data) {
            Ok(msg) if msg.is_object() => msg,
            _ => {
                fail(
                    shared,
                    format!(
                        "an event that is not a JSON-RPC message: {}",
                        crate::ground::redact::shorten(&data, 300)
                    ),
                );
                return Ended::Done;
            }
        };
        if let Some(reply) =
            super::super::server_request_reply(&msg, t.answerer.as_deref(), ANSWER_BOUND).await
        {
            // The answer goes in a POST of the session: the request that waits on it (a
            // step's call, blocked in the server) goes on meanwhile.
            t.answer(reply, &out).await;
        }
        shared
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .inbox
            .push(msg);
    }
    Ended::Closed { events: any }
}

/// The transport's error for a failed GET stream (the exchange that reports it fails).
pub fn failed(why: String) -> TransportError {
    TransportError::Io(format!("the session's GET stream failed: {why}"))
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Write};
    use std::time::Instant;

    use super::*;

    const SSE: &str = "200 OK\r\ncontent-type: text/event-stream";

    /// A server on 127.0.0.1 that answers successive GETs, one connection each, with
    /// `replies` (status line and headers, then the body; the last one is held open a
    /// while); the request heads it saw come on the channel.
    fn serve(
        replies: Vec<(&'static str, &'static str)>,
    ) -> (String, std::sync::mpsc::Receiver<String>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let n = replies.len();
            for (i, (status, body)) in replies.into_iter().enumerate() {
                let Ok((mut socket, _)) = listener.accept() else {
                    return;
                };
                let mut reader = BufReader::new(socket.try_clone().expect("clone"));
                let mut head = String::new();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    head.push_str(&line.to_ascii_lowercase());
                }
                let _ = tx.send(head);
                let _ = write!(
                    socket,
                    "HTTP/1.1 {status}\r\nconnection: close\r\n\r\n{body}"
                );
                if i + 1 == n {
                    std::thread::sleep(Duration::from_secs(3));
                }
            }
        });
        (url, rx)
    }

    /// Open a listener on `url` and collect what it reports until `done` holds of the
    /// messages and notes so far, or `wait` passes.
    fn listen_to(
        url: &str,
        wait: Duration,
        done: impl Fn(&[Value], &str) -> bool,
    ) -> (Vec<Value>, String, Option<String>) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let t = HttpTransport::new(url, &[], None, None, 1 << 20).expect("transport");
            let mut listener = Listener::open(t, "s1".into(), "2025-11-25".into());
            listener.opened(Duration::from_secs(5)).await;
            let deadline = Instant::now() + wait;
            let (mut messages, mut notes, mut failure) = (Vec::new(), Vec::new(), None);
            while Instant::now() < deadline {
                let (m, n, f) = listener.take();
                messages.extend(m);
                notes.extend(n);
                failure = failure.or(f);
                if done(&messages, &notes.join("\n")) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            (messages, notes.join("\n"), failure)
        })
    }

    #[test]
    fn a_stream_the_server_ends_is_resumed_with_the_last_event_id() {
        let message =
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n";
        let (url, heads) = serve(vec![(SSE, "id: 7\nretry: 10\ndata:\n\n"), (SSE, message)]);
        let (messages, notes, failure) =
            listen_to(&url, Duration::from_secs(5), |m, _| !m.is_empty());
        assert_eq!(failure, None);
        assert_eq!(messages.len(), 1, "{notes}");
        assert!(notes.contains("resumed with Last-Event-ID 7"), "{notes}");
        let first = heads.recv().expect("the first GET");
        assert!(first.starts_with("get /mcp"), "{first}");
        assert!(first.contains("mcp-session-id: s1"), "{first}");
        assert!(first.contains("accept: text/event-stream"), "{first}");
        assert!(!first.contains("last-event-id"), "{first}");
        let second = heads.recv().expect("the resumption");
        assert!(second.contains("last-event-id: 7"), "{second}");
    }

    #[test]
    fn a_stream_that_keeps_ending_empty_is_given_up() {
        let empty = (SSE, "retry: 10\n\n");
        let (url, heads) = serve(vec![empty; 6]);
        let (messages, notes, failure) = listen_to(&url, Duration::from_secs(5), |_, n| {
            n.contains("not resumed again")
        });
        assert!(messages.is_empty());
        assert_eq!(failure, None);
        assert!(notes.contains("not resumed again"), "{notes}");
        let gets = heads.try_iter().count();
        assert_eq!(gets, 1 + RESUMPTIONS as usize, "{notes}");
    }

    #[test]
    fn a_405_is_no_stream_and_nothing_is_said() {
        let (url, _) = serve(vec![("405 Method Not Allowed\r\ncontent-length: 0", "")]);
        // Nothing to wait for: a while for anything it would wrongly say.
        let (messages, notes, failure) = listen_to(&url, Duration::from_millis(300), |_, _| false);
        assert!(
            messages.is_empty() && notes.is_empty() && failure.is_none(),
            "{notes}"
        );
    }
}
