//! Hostile HTTP servers (the HTTP half of the matrix in tests/hostile.rs): a server on
//! 127.0.0.1 that answers the modern handshake (`server/discover`, canned JSON, no
//! session) and then stalls (reads the request, never answers) or drips (headers, then
//! one body byte every 200 ms). Every case checks that the configured timeout holds
//! (wall time, with slack), that the JSON and JUnit reports are written and valid, and
//! that mcpspec let go of every connection it opened.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::{mcpspec, process, scenario_file};
use serde_json::{Value, json};

/// Outer limit for one run: far above what any case needs; a run that reaches it hung.
const RUN_LIMIT: Duration = Duration::from_secs(60);
/// Slack on top of the timeouts a case is allowed to spend (a busy, shared machine).
const SLACK: Duration = Duration::from_secs(4);
const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

/// What the server does with a request it does not answer.
#[derive(Clone, Copy)]
enum Misbehaviour {
    /// Reads it and never answers (keeps the connection open until the client drops it).
    Stall,
    /// Sends the headers and then one body byte every 200 ms, never finishing.
    Drip,
    /// Answers on an SSE stream: 200,000 small notifications (~22 MB in all), then the
    /// reply (a flood that stdio passes; the cap is per message, not per stream).
    SseBurst,
    /// Answers on an SSE stream with one event of 200,000 bytes, then the reply.
    SseHugeEvent,
    /// HTTP 401 with a JSON-RPC error "unauthorized", then closes the connection (the
    /// server withdrew the session's authorization after the handshake).
    Unauthorized,
}

/// Which requests get the misbehaviour; the others get a canned answer.
#[derive(Clone, Copy)]
enum Victims {
    /// Everything after the first `server/discover` (the handshake), the liveness probe too.
    AllAfterHandshake,
    /// Only `tools/list`: the probe is answered, so the connection is alive.
    ToolsList,
}

struct Server {
    url: String,
    /// Connections currently open (accepted and not yet closed by the client).
    open: Arc<AtomicUsize>,
}

impl Server {
    fn start(how: Misbehaviour, victims: Victims) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let open = Arc::new(AtomicUsize::new(0));
        let discovers = Arc::new(AtomicUsize::new(0));
        let counter = open.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (open, discovers) = (counter.clone(), discovers.clone());
                open.fetch_add(1, Ordering::SeqCst);
                thread::spawn(move || {
                    serve(stream, how, victims, &discovers);
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Server { url, open }
    }

    /// Once mcpspec has exited, every connection it opened is closed (nothing of the
    /// run is left holding the server).
    fn assert_released(&self) {
        let deadline = Instant::now() + Duration::from_secs(2);
        while self.open.load(Ordering::SeqCst) > 0 {
            assert!(
                Instant::now() < deadline,
                "{} connection(s) still open after mcpspec exited",
                self.open.load(Ordering::SeqCst)
            );
            thread::sleep(Duration::from_millis(20));
        }
    }
}

/// One keep-alive connection: read requests (headers + Content-Length body) until the
/// client closes it.
fn serve(stream: TcpStream, how: Misbehaviour, victims: Victims, discovers: &AtomicUsize) {
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    loop {
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let method = request["method"].as_str().unwrap_or_default();
        let victim = match victims {
            Victims::AllAfterHandshake => match method {
                "initialize" | "notifications/initialized" => false,
                "server/discover" => discovers.fetch_add(1, Ordering::SeqCst) > 0,
                _ => true,
            },
            Victims::ToolsList => method == "tools/list",
        };
        if victim {
            match how {
                // Nothing more comes on this connection: wait for the client to close it.
                Misbehaviour::Stall => {
                    let _ = reader.read_to_end(&mut Vec::new());
                }
                Misbehaviour::SseBurst | Misbehaviour::SseHugeEvent => {
                    let _ = sse_reply(&mut writer, how, &request);
                    continue;
                }
                Misbehaviour::Unauthorized => {
                    let body = json!({ "jsonrpc": "2.0", "id": request["id"], "error": { "code": -32001, "message": "unauthorized" } }).to_string();
                    let _ = writer.write_all(
                        format!(
                            "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
                            body.len()
                        )
                        .as_bytes(),
                    );
                }
                Misbehaviour::Drip => {
                    let _ = writer.write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n",
                    );
                    // Until the client hangs up (a write fails), or a minute at most.
                    for _ in 0..300 {
                        if writer.write_all(b" ").and_then(|_| writer.flush()).is_err() {
                            break;
                        }
                        thread::sleep(Duration::from_millis(200));
                    }
                }
            }
            return;
        }
        let (head, reply) = if request.get("id").is_none() {
            // A notification: accepted, no body.
            (
                "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n".to_string(),
                String::new(),
            )
        } else {
            let reply = json!({ "jsonrpc": "2.0", "id": request["id"], "result": answer(method) });
            let reply = reply.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                reply.len()
            );
            (head, reply)
        };
        if writer
            .write_all(head.as_bytes())
            .and_then(|_| writer.write_all(reply.as_bytes()))
            .is_err()
        {
            return;
        }
    }
}

/// The reply to `request` on an SSE stream, after the flood of [`Misbehaviour::SseBurst`]
/// or the one huge event of [`Misbehaviour::SseHugeEvent`] (chunked, then closed).
fn sse_reply(writer: &mut TcpStream, how: Misbehaviour, request: &Value) -> std::io::Result<()> {
    writer.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n",
    )?;
    let mut chunk = |data: &[u8]| -> std::io::Result<()> {
        writer.write_all(format!("{:x}\r\n", data.len()).as_bytes())?;
        writer.write_all(data)?;
        writer.write_all(b"\r\n")
    };
    let note = format!(
        "data: {}\n\n",
        json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": { "level": "info", "data": "x".repeat(40) } })
    );
    match how {
        Misbehaviour::SseBurst => {
            let thousand = note.repeat(1000);
            for _ in 0..200 {
                chunk(thousand.as_bytes())?;
            }
        }
        _ => {
            let huge = format!(
                "data: {}\n\n",
                json!({ "jsonrpc": "2.0", "method": "notifications/message", "params": { "level": "info", "data": "x".repeat(200_000) } })
            );
            chunk(huge.as_bytes())?;
        }
    }
    let method = request["method"].as_str().unwrap_or_default();
    let reply = json!({ "jsonrpc": "2.0", "id": request["id"], "result": answer(method) });
    chunk(format!("data: {reply}\n\n").as_bytes())?;
    writer.write_all(b"0\r\n\r\n")
}

fn answer(method: &str) -> Value {
    match method {
        // Legacy, without a session (a session is optional over HTTP).
        "initialize" => json!({
            "protocolVersion": LEGACY,
            "capabilities": { "tools": {} },
            "serverInfo": { "name": "hostile-http", "version": "1.0.0" }
        }),
        "server/discover" => json!({
            "supportedVersions": [MODERN],
            "capabilities": { "tools": {} },
            "_meta": { "io.modelcontextprotocol/serverInfo": { "name": "hostile-http", "version": "1.0.0" } }
        }),
        "tools/list" => {
            json!({ "tools": [{ "name": "echo", "inputSchema": { "type": "object" } }] })
        }
        "tools/call" => json!({ "content": [{ "type": "text", "text": "hello" }] }),
        _ => json!({}),
    }
}

/// Two steps that pass on a server that answers: lists tools, calls echo.
const TWO_STEPS: &str = r#"
scenario: steps
steps:
  - name: lists tools
    request: { method: tools/list }
    expect:
      - { path: "$.tools[*].name", contains: echo }
  - name: calls echo
    request:
      method: tools/call
      params: { name: echo, arguments: { text: hello } }
    expect:
      - { path: "$.content[0].text", equals: hello }
"#;

/// [`TWO_STEPS`] and a third one.
fn three_steps() -> String {
    format!("{TWO_STEPS}  - name: lists tools again\n    request: {{ method: tools/list }}\n")
}

struct Outcome {
    code: i32,
    output: String,
    wall: Duration,
    json: Value,
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {} after {:?}\n{}",
            self.code, self.wall, self.output
        )
    }
}

/// The mcpspec under test; `HOSTILE_MCPSPEC=/path/to/mcpspec` runs the matrix against
/// another build (e.g. to show that an older one fails it).
fn binary() -> PathBuf {
    std::env::var_os("HOSTILE_MCPSPEC").map_or_else(mcpspec, PathBuf::from)
}

/// `mcpspec run SCENARIO --url URL --era ERA --timeout 2s --json … --junit …`: waits at
/// most [`RUN_LIMIT`] and checks that both reports are written and valid.
fn run(url: &str, scenario: &Path) -> Outcome {
    run_in_era(url, scenario, MODERN)
}

fn run_in_era(url: &str, scenario: &Path, era: &str) -> Outcome {
    run_with(url, scenario, era, &["--timeout", "2s"])
}

/// [`run_in_era`] with other flags (a timeout of its own among them).
fn run_with(url: &str, scenario: &Path, era: &str, extra: &[&str]) -> Outcome {
    let work = tempfile::tempdir().expect("tempdir");
    let json = work.path().join("result.json");
    let junit = work.path().join("result.xml");
    let done = process::spawn(
        Command::new(binary())
            .arg("run")
            .arg(scenario)
            .args(["--url", url, "--era", era])
            .args(extra)
            .arg("--json")
            .arg(&json)
            .arg("--junit")
            .arg(&junit),
    )
    .wait(RUN_LIMIT)
    .unwrap_or_else(|| panic!("mcpspec hung: still running after {RUN_LIMIT:?}"));
    let (code, wall) = (done.code, done.wall);
    let output = format!("--- stdout\n{}\n--- stderr\n{}", done.stdout, done.stderr);
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|e| panic!("no JSON report ({e}):\n{output}"));
    let json: Value = serde_json::from_str(&text).expect("the JSON report parses");
    common::assert_valid_junit(&junit);
    Outcome {
        code,
        output,
        wall,
        json,
    }
}

fn status<'a>(run: &'a Outcome, name: &str) -> (&'a str, String) {
    let steps = run.json["suites"][0]["steps"].as_array().expect("steps");
    let o = &steps
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step `{name}`: {run:?}"))["outcome"];
    let why = format!(
        "{} {}",
        o["message"].as_str().unwrap_or_default(),
        o["detail"].as_str().unwrap_or_default()
    );
    (o["status"].as_str().unwrap_or_default(), why)
}

fn assert_step(run: &Outcome, name: &str, expected: &str, needles: &[&str]) {
    let (got, why) = status(run, name);
    assert_eq!(got, expected, "{name}: {why}\n{run:?}");
    for needle in needles {
        assert!(
            why.contains(needle),
            "{name}: expected {needle:?} in {why:?}"
        );
    }
}

fn assert_within(run: &Outcome, budget: Duration) {
    assert!(
        run.wall <= budget + SLACK,
        "took {:?}, budget {budget:?} + {SLACK:?}: {run:?}",
        run.wall
    );
}

/// The server stops answering after the handshake: the first step times out, the
/// liveness probe times out too, and the other steps are not run — one timeout and one
/// probe (2 s each), not one timeout per step (6 s).
#[test]
fn stall_after_handshake_costs_one_timeout_not_one_per_step() {
    let server = Server::start(Misbehaviour::Stall, Victims::AllAfterHandshake);
    let (_dir, scenario) = scenario_file("three-steps.yaml", &three_steps());
    let run = run(&server.url, &scenario);
    assert_eq!(run.code, 1, "{run:?}");
    assert_step(&run, "lists tools", "error", &["timed out after 2s"]);
    for later in ["calls echo", "lists tools again"] {
        assert_step(
            &run,
            later,
            "error",
            &[
                "not run: the connection broke at step `lists tools`",
                "the connection is dead",
            ],
        );
    }
    assert_within(&run, Duration::from_secs(4));
    server.assert_released();
}

/// The same in the legacy era: the probe is `ping` (after `initialize` without a session).
#[test]
fn legacy_stall_after_handshake_costs_one_timeout_not_one_per_step() {
    let server = Server::start(Misbehaviour::Stall, Victims::AllAfterHandshake);
    let (_dir, scenario) = scenario_file("three-steps.yaml", &three_steps());
    let run = run_in_era(&server.url, &scenario, "legacy");
    assert_eq!(run.code, 1, "{run:?}");
    assert_step(&run, "lists tools", "error", &["timed out after 2s"]);
    assert_step(
        &run,
        "calls echo",
        "error",
        &[
            "not run: the connection broke at step `lists tools`",
            "`ping` got no answer",
        ],
    );
    assert_within(&run, Duration::from_secs(4));
    server.assert_released();
}

/// Headers, then a byte every 200 ms: the timeout bounds the whole response, not each
/// chunk; the probe drips too, so the connection is dead after one timeout + one probe.
#[test]
fn drip_times_out_at_the_configured_timeout() {
    let server = Server::start(Misbehaviour::Drip, Victims::AllAfterHandshake);
    let (_dir, scenario) = scenario_file("three-steps.yaml", &three_steps());
    let run = run(&server.url, &scenario);
    assert_eq!(run.code, 1, "{run:?}");
    assert_step(&run, "lists tools", "error", &["timed out after 2s"]);
    assert_step(
        &run,
        "lists tools again",
        "error",
        &["not run: the connection broke at step `lists tools`"],
    );
    assert_within(&run, Duration::from_secs(4));
    server.assert_released();
}

/// A server slow on one request only answers the probe: the connection is alive and the
/// next steps run (and pass when answered).
#[test]
fn one_stalled_request_does_not_condemn_the_connection() {
    let server = Server::start(Misbehaviour::Stall, Victims::ToolsList);
    let (_dir, scenario) = scenario_file(
        "two-steps.yaml",
        r#"
scenario: two-steps
steps:
  - name: lists tools
    request: { method: tools/list }
  - name: calls echo
    request:
      method: tools/call
      params: { name: echo, arguments: { text: hello } }
    expect:
      - { path: "$.content[0].text", equals: hello }
"#,
    );
    let run = run(&server.url, &scenario);
    assert_eq!(run.code, 1, "{run:?}");
    assert_step(&run, "lists tools", "error", &["timed out after 2s"]);
    assert_step(&run, "calls echo", "passed", &[]);
    assert_within(&run, Duration::from_secs(2));
    server.assert_released();
}

/// 200,000 notifications (~22 MB) on the response stream before the reply: the flood
/// passes as it does over stdio (the size cap is per message, not per stream), and the
/// next step runs on the same connection.
#[test]
fn sse_notification_burst_before_the_reply_passes() {
    let server = Server::start(Misbehaviour::SseBurst, Victims::ToolsList);
    let (_dir, scenario) = scenario_file("two-steps.yaml", TWO_STEPS);
    let run = run_with(&server.url, &scenario, MODERN, &["--timeout", "60s"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_step(&run, "lists tools", "passed", &[]);
    assert_step(&run, "calls echo", "passed", &[]);
    server.assert_released();
}

/// One event larger than `--max-message-size` on the stream is still refused, with the
/// limit named; the connection stays usable for the next step.
#[test]
fn sse_event_over_the_message_limit_is_refused() {
    let server = Server::start(Misbehaviour::SseHugeEvent, Victims::ToolsList);
    let (_dir, scenario) = scenario_file("two-steps.yaml", TWO_STEPS);
    let run = run_with(
        &server.url,
        &scenario,
        MODERN,
        &["--timeout", "20s", "--max-message-size", "100000"],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert_step(&run, "lists tools", "error", &["larger than 100000 bytes"]);
    assert_step(&run, "calls echo", "passed", &[]);
    server.assert_released();
}

/// After a handshake that passed, the server answers 401 and closes the connection: the
/// step says so with the HTTP status, not only the JSON-RPC error's text.
#[test]
fn unauthorized_after_the_handshake_names_the_http_status() {
    let server = Server::start(Misbehaviour::Unauthorized, Victims::ToolsList);
    let (_dir, scenario) = scenario_file("two-steps.yaml", TWO_STEPS);
    let run = run(&server.url, &scenario);
    assert_eq!(run.code, 1, "{run:?}");
    let (status, _) = status(&run, "lists tools");
    assert_eq!(status, "failed", "{run:?}");
    // The failure's message, expected and actual.
    let why = run.json["suites"][0]["steps"][0]["outcome"].to_string();
    assert!(
        why.contains("HTTP 401") && why.contains("the server dropped the session's authorization"),
        "{why}"
    );
    server.assert_released();
}
