//! Opening a connection in its era: the legacy `initialize` handshake, the modern
//! `server/discover`, and the `auto` probe between them.

use std::time::{Duration, Instant};

use indexmap::IndexMap;
use serde_json::{Value, json};

use super::liveness::PROMPT_FLOOR;
use super::request::client_info;
use super::transcript::{error_of, out_method, refusal_hint, result_of};
use super::transport::Transport;
use super::{ConnectError, ConnectErrorKind, Connection};
use crate::protocol::era::{EraKind, LATEST_LEGACY_REVISION, LEGACY_REVISIONS, MODERN_REVISION};
use crate::protocol::{errors, headers as h, meta, methods};
use crate::results::exchange::Exchange;
use crate::run::client::{AutoDecision, Outgoing, TransportError};

/// Longest wait for the `auto` probe over HTTP before falling back to legacy. Over stdio the
/// probe is the first request of a process just spawned: its wait includes the server's
/// start-up (a Python server may take seconds on a loaded machine), so it gets the
/// target's whole timeout, like any first request — a silent answer then means legacy.
const AUTO_PROBE_TIMEOUT: Duration = Duration::from_secs(5);
/// Over stdio, the first `auto` probe of a run (no decision yet) waits at most this, not
/// the whole timeout: a server that ignores requests before `initialize` costs this once.
/// Its silence is taken for legacy only when a fresh process then starts and answers
/// `initialize` in at most a [`STARTUP_FACTOR`]th of the wait; a server slower to start is
/// probed again on a fresh process, waiting [`STARTUP_FACTOR`] times that start and
/// handshake (at least [`PROMPT_FLOOR`], at most the timeout), so a slow modern server is
/// still found modern.
const FIRST_PROBE_WAIT: Duration = Duration::from_secs(3);
const STARTUP_FACTOR: u32 = 3;

impl Connection {
    // ---- era negotiation ----

    pub(super) async fn handshake(
        &mut self,
        offer: &str,
        pinned: bool,
    ) -> Result<(), ConnectError> {
        self.negotiated.kind = EraKind::Legacy;
        self.negotiated.revision = String::new();
        let id = self.next_id();
        let params = json!({
            "protocolVersion": offer,
            "capabilities": self.client_capabilities().clone(),
            "clientInfo": client_info(),
        });
        let out = self.build_plain(methods::INITIALIZE, Some(params), Some(id));
        let ex = self.connect_exchange(&out).await?;
        let result =
            result_of(&ex).map_err(|e| self.protocol_error(format!("initialize failed: {e}")))?;
        let answered = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if pinned && answered != offer {
            return Err(self.protocol_error(format!(
                "the server answered initialize with protocol revision `{answered}`, not the pinned `{offer}`: pin the revision it speaks, or use --era legacy"
            )));
        }
        if !LEGACY_REVISIONS.contains(&answered.as_str()) {
            return Err(self.protocol_error(format!(
                "the server answered initialize with protocol revision `{answered}`, which is not a legacy revision mcpspec knows ({})",
                LEGACY_REVISIONS.join(", ")
            )));
        }
        if let Some(sid) = ex.http.as_ref().and_then(|h| h.header(h::SESSION_ID)) {
            self.session_id = Some(sid.to_string());
        }
        self.negotiated.handshake_headers = ex.http.as_ref().map(|h| h.headers.clone());
        self.negotiated.revision = answered;
        self.negotiated.server_info = result.get("serverInfo").cloned();
        self.negotiated.handshake = Some(result.clone());
        self.negotiated.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.negotiated.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        if answered_differs(offer, &self.negotiated.revision) {
            self.negotiated.note = Some(format!(
                "offered {offer}; the server counter-offered {}",
                self.negotiated.revision
            ));
        }
        let out = self.build_plain(methods::NOTIFICATIONS_INITIALIZED, None, None);
        if let Transport::Stdio(t) = &mut self.transport {
            t.mark_handshake();
        }
        match self.connect_exchange(&out).await {
            // It started and answered: what went wrong next is the first step's to report.
            Err(e) if e.kind == ConnectErrorKind::Start => {
                if let Transport::Stdio(t) = &mut self.transport {
                    t.mark_closed(format!(
                        "the server closed the connection after the handshake: {}",
                        e.message
                            .strip_prefix("the server did not start: ")
                            .unwrap_or(&e.message)
                    ));
                }
                Ok(())
            }
            Err(e) => Err(e),
            Ok(_) => {
                self.listen_to_session();
                Ok(())
            }
        }
    }

    pub(super) async fn discover(&mut self, revision: &str) -> Result<(), ConnectError> {
        self.negotiated.kind = EraKind::Modern;
        self.negotiated.revision = revision.to_string();
        let id = self.next_id();
        let out = self.build_plain(methods::SERVER_DISCOVER, None, Some(id));
        let ex = self.connect_exchange(&out).await?;
        let result = result_of(&ex).map_err(|e| {
            self.protocol_error(format!(
                "the server did not accept protocol {revision}: server/discover answered {e} ({})",
                refusal_hint(&ex)
            ))
        })?;
        self.adopt_discover(&result);
        self.negotiated.handshake_headers = ex.http.as_ref().map(|h| h.headers.clone());
        if !self
            .negotiated
            .supported_versions
            .iter()
            .any(|v| v == revision)
        {
            return Err(self.protocol_error(format!(
                "the server did not accept protocol {revision}: server/discover lists supportedVersions {:?}",
                self.negotiated.supported_versions
            )));
        }
        Ok(())
    }

    /// A modern opening whose stdio process ended on `server/discover` (`e`): did the
    /// server start at all? A fresh process is asked for the legacy handshake. When it
    /// completes, the server started and exited on that request, as rmcp-based legacy
    /// servers do on a first request that is not `initialize`: a refusal of the era, said
    /// so, with the stderr of the process that exited. Otherwise `e` as it was.
    pub(super) async fn exited_on_discover(
        &mut self,
        revision: &str,
        mut e: ConnectError,
        processes: &mut u64,
    ) -> ConnectError {
        if e.kind != ConnectErrorKind::Start || !matches!(self.transport, Transport::Stdio(_)) {
            return e;
        }
        let why = e
            .message
            .strip_prefix("the server did not start: ")
            .unwrap_or(&e.message)
            .to_string();
        let log = self.take_log();
        let stderr = self.stderr_tail().await;
        self.close_transport().await;
        self.transport = match Transport::open(&self.target) {
            Ok(t) => t,
            Err(_) => {
                self.log = log;
                return e;
            }
        };
        *processes += 1;
        let legacy = self.handshake(LATEST_LEGACY_REVISION, false).await;
        // The fresh process's exchanges are no part of this opening's transcript.
        let _ = self.take_log();
        self.log = log;
        if legacy.is_err() {
            return e;
        }
        self.note(
            "a fresh process of the same command completed the legacy `initialize` handshake: the server starts".into(),
        );
        e.kind = ConnectErrorKind::Protocol;
        e.refused = true;
        e.stderr_tail = stderr;
        e.message = format!(
            "the server did not accept protocol {revision}: it started, then exited on `server/discover` without answering it ({why}); a fresh process completed the legacy `initialize` handshake (a legacy-only server? it ends on a request it does not know: try --era legacy or --era auto)"
        );
        e
    }

    /// `auto`: the probe, then — unless the server is modern — a legacy handshake. Over
    /// stdio, a process that refused the probe with an error takes the handshake as it is
    /// (one start, not two); otherwise, or when that handshake does not complete, a fresh
    /// process (stdio) or session, since the probe may have left state behind (counted in
    /// `processes`). The outer error: that process did not start.
    pub(super) async fn open_auto(
        &mut self,
        processes: &mut u64,
    ) -> Result<Result<(), ConnectError>, ConnectError> {
        // Decided once per run and server: the first connection probes, the others wait.
        let shared = self.target.auto_era.clone();
        let mut decided = Some(shared.lock().await);
        match decided.as_deref() {
            Some(Some(AutoDecision::Legacy(why))) => {
                let why = why.clone();
                drop(decided);
                let r = self.handshake(LATEST_LEGACY_REVISION, false).await;
                self.negotiated.note = Some(format!("{why}{}", crate::protocol::era::DECIDED_ONCE));
                return Ok(r);
            }
            // Modern: this connection probes too (answered at once), in parallel.
            Some(Some(AutoDecision::Modern)) => decided = None,
            _ => {}
        }
        // Over stdio the first probe of a run is bounded (see [`FIRST_PROBE_WAIT`]); a
        // connection probing beside a modern decision waits as any first request does.
        let first = decided.is_some() && !self.is_http();
        let wait = if first {
            self.target.timeout.min(FIRST_PROBE_WAIT)
        } else {
            self.target.timeout
        };
        let (answered, timed_out) = match self.probe(wait).await {
            Ok(Probed::Modern) => {
                if let Some(d) = decided.as_mut() {
                    **d = Some(AutoDecision::Modern);
                }
                return Ok(Ok(()));
            }
            Ok(Probed::Legacy {
                answered,
                timed_out,
            }) => (answered, timed_out),
            Err(e) => return Ok(Err(e)),
        };
        let mut note = self.negotiated.note.take();
        let reused = if answered && !self.is_http() {
            Some(self.handshake(LATEST_LEGACY_REVISION, false).await)
        } else {
            None
        };
        let mut r = match reused {
            Some(Ok(())) => Ok(()),
            _ => {
                let (r, took) = self.fresh_legacy(processes).await?;
                // A bounded first probe that went unanswered proves nothing about a server
                // slower to start than the bound: the fresh process's handshake (its
                // start-up and first answer) measures it. Unless the probe waited
                // [`STARTUP_FACTOR`] times that, or the handshake failed, a fresh process
                // is probed again with that wait (at most the timeout).
                let cut_short = timed_out && wait < self.target.timeout;
                let enough = took
                    .saturating_mul(STARTUP_FACTOR)
                    .max(PROMPT_FLOOR)
                    .min(self.target.timeout);
                if cut_short && (r.is_err() || enough > wait) {
                    let again = if r.is_ok() {
                        enough
                    } else {
                        self.target.timeout
                    };
                    (self.timed_out, self.unanswered) = (false, None);
                    self.close_transport().await;
                    self.transport = Transport::open(&self.target)?;
                    *processes += 1;
                    match self.probe(again).await {
                        Ok(Probed::Modern) => {
                            if let Some(d) = decided.as_mut() {
                                **d = Some(AutoDecision::Modern);
                            }
                            return Ok(Ok(()));
                        }
                        Ok(Probed::Legacy { .. }) => {}
                        Err(e) => return Ok(Err(e)),
                    }
                    note = self.negotiated.note.take();
                    self.fresh_legacy(processes).await?.0
                } else {
                    if cut_short && r.is_ok() {
                        note = note.map(|n| {
                            format!(
                                "{n} (a fresh process answered `initialize` in {}: the probe waited at least {STARTUP_FACTOR} × that)",
                                humantime::format_duration(Duration::from_millis(
                                    took.as_millis() as u64
                                ))
                            )
                        });
                    }
                    r
                }
            }
        };
        if let (Err(e), Some(note)) = (&mut r, &note)
            && e.kind == ConnectErrorKind::Unreachable
        {
            e.message.push_str(&format!(" (tried first: {note})"));
        }
        if r.is_ok()
            && let (Some(note), Some(d)) = (&note, decided.as_mut())
        {
            **d = Some(AutoDecision::Legacy(note.clone()));
        }
        self.negotiated.note = note;
        Ok(r)
    }

    /// `auto`'s fallback on a new process (stdio) or session: the legacy handshake, and how
    /// long the opening and the handshake took. The outer error: that process did not start.
    async fn fresh_legacy(
        &mut self,
        processes: &mut u64,
    ) -> Result<(Result<(), ConnectError>, Duration), ConnectError> {
        // (A failed attempt stays in the transcript; the new process starts clean.)
        (self.timed_out, self.unanswered) = (false, None);
        self.close_transport().await;
        let started = Instant::now();
        self.transport = Transport::open(&self.target)?;
        *processes += 1;
        let r = self.handshake(LATEST_LEGACY_REVISION, false).await;
        Ok((r, started.elapsed()))
    }

    /// `auto`: whether the server is modern, or to fall back to legacy.
    /// `wait`: the longest wait over stdio (HTTP: at most [`AUTO_PROBE_TIMEOUT`]).
    pub(super) async fn probe(&mut self, wait: Duration) -> Result<Probed, ConnectError> {
        self.negotiated.kind = EraKind::Modern;
        self.negotiated.revision = MODERN_REVISION.to_string();
        let id = self.next_id();
        let timeout = if self.is_http() {
            self.target.timeout.min(AUTO_PROBE_TIMEOUT)
        } else {
            wait
        };
        let mut timed_out = false;
        let out = self.build(
            methods::SERVER_DISCOVER,
            None,
            Some(id),
            &IndexMap::new(),
            &IndexMap::new(),
            timeout,
        );
        let mut answered = false;
        let outcome = match self.send(&out).await {
            Ok(ex) => {
                if let Some(401 | 403) = ex.http.as_ref().map(|h| h.status) {
                    return Err(self.refusal_error(&ex));
                }
                match (
                    ex.response.as_ref().and_then(|r| r.get("result")),
                    error_of(&ex),
                ) {
                    (Some(result), _) => {
                        let result = result.clone();
                        self.adopt_discover(&result);
                        self.negotiated.handshake_headers =
                            ex.http.as_ref().map(|h| h.headers.clone());
                        if self
                            .negotiated
                            .supported_versions
                            .iter()
                            .any(|v| v == MODERN_REVISION)
                        {
                            self.negotiated.note = Some(format!(
                                "auto: server/discover lists {MODERN_REVISION}; chose modern"
                            ));
                            return Ok(Probed::Modern);
                        }
                        format!(
                            "server/discover lists only {:?}",
                            self.negotiated.supported_versions
                        )
                    }
                    (None, Some((code, message))) if errors::MODERN_ONLY.contains(&code) => {
                        self.negotiated.note = Some(format!(
                            "auto: server/discover answered modern error {code} ({message}); chose modern"
                        ));
                        return Ok(Probed::Modern);
                    }
                    (None, Some((code, message))) => {
                        answered = true;
                        format!("server/discover answered {code} ({message})")
                    }
                    (None, None) => match ex.http.as_ref() {
                        Some(h) => format!(
                            "server/discover got HTTP {} without a JSON-RPC response",
                            h.status
                        ),
                        None => "server/discover got no JSON-RPC response".into(),
                    },
                }
            }
            Err(TransportError::Unreachable(e)) => {
                return Err(ConnectError {
                    kind: ConnectErrorKind::Unreachable,
                    message: format!(
                        "cannot reach {} (POST server/discover): {e}",
                        crate::ground::redact::safe_url(self.target.location())
                    ),
                    stderr_tail: None,
                    transcript: Vec::new(),
                    refused: false,
                });
            }
            Err(e) => {
                timed_out = matches!(e, TransportError::Timeout(_));
                format!("server/discover: {e}")
            }
        };
        self.negotiated.note = Some(format!("auto: {outcome}; fell back to legacy"));
        self.negotiated.kind = EraKind::Legacy;
        self.negotiated.revision = String::new();
        Ok(Probed::Legacy {
            answered,
            timed_out,
        })
    }

    pub(super) fn adopt_discover(&mut self, result: &Value) {
        self.negotiated.handshake = Some(result.clone());
        self.negotiated.supported_versions = crate::protocol::fields::supported_versions(result)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        self.negotiated.capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        self.negotiated.instructions = result
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.negotiated.server_info = result
            .get("_meta")
            .and_then(|m| m.get(meta::SERVER_INFO))
            .cloned();
    }

    /// An exchange during connection setup: transport failures become connect errors.
    pub(super) async fn connect_exchange(
        &mut self,
        out: &Outgoing,
    ) -> Result<Exchange, ConnectError> {
        match self.send(out).await {
            Ok(ex) => {
                if let Some(401 | 403) = ex.http.as_ref().map(|h| h.status) {
                    return Err(self.refusal_error(&ex));
                }
                // A handshake answered 404 with no JSON-RPC message: nothing at this URL
                // speaks MCP (a mistyped path), whatever the era.
                if ex.response.is_none()
                    && ex.http.as_ref().is_some_and(|h| h.status == 404)
                    && matches!(
                        out_method(out).as_str(),
                        methods::INITIALIZE | methods::SERVER_DISCOVER
                    )
                {
                    return Err(ConnectError {
                        kind: ConnectErrorKind::Unreachable,
                        message: format!(
                            "no MCP endpoint at {}: POST {} answered HTTP 404 (check the URL's path)",
                            self.target.location(),
                            out_method(out)
                        ),
                        stderr_tail: None,
                        transcript: Vec::new(),
                        refused: false,
                    });
                }
                Ok(ex)
            }
            Err(e) => {
                // Unreachable only when no connection could be made: a connection that
                // broke after reaching the server is the server's failure.
                let kind = match (&e, self.is_http()) {
                    (TransportError::Unreachable(_), _) => ConnectErrorKind::Unreachable,
                    (TransportError::Closed(_), false) => ConnectErrorKind::Start,
                    _ => ConnectErrorKind::Protocol,
                };
                let what = out_method(out);
                Err(ConnectError {
                    kind,
                    message: match kind {
                        ConnectErrorKind::Start => format!("the server did not start: {e}"),
                        ConnectErrorKind::Unreachable => match &e {
                            TransportError::Unreachable(detail) => format!(
                                "cannot reach {} (POST {what}): {detail}",
                                self.target.location()
                            ),
                            other => format!(
                                "cannot reach {} (POST {what}): {other}",
                                self.target.location()
                            ),
                        },
                        _ => format!("{what}: {e}"),
                    },
                    stderr_tail: None,
                    transcript: Vec::new(),
                    refused: false,
                })
            }
        }
    }

    /// A 401 or 403 to the handshake. A 403 whose body blames the Host or Origin (DNS
    /// rebinding protection: the server accepts other host names only) is no request for
    /// credentials, and a token would not help: it is said so, with the server's words.
    pub(super) fn refusal_error(&self, ex: &Exchange) -> ConnectError {
        let status = ex.http.as_ref().map_or(0, |h| h.status);
        let body = ex.raw_body.as_deref().unwrap_or("");
        let said = if body.trim().is_empty() {
            String::new()
        } else {
            format!(": {}", crate::ground::redact::shorten(body.trim(), 200))
        };
        let challenged = ex
            .http
            .as_ref()
            .and_then(|h| h.header("www-authenticate"))
            .is_some();
        let lower = body.to_ascii_lowercase();
        if status == 403 && !challenged && (lower.contains("host") || lower.contains("origin")) {
            return ConnectError {
                kind: ConnectErrorKind::Protocol,
                message: format!(
                    "the server refused the request's Host or Origin (HTTP 403){said} — its DNS rebinding protection accepts other host names only — use the address it expects (e.g. 127.0.0.1 or localhost, with its port) or allow this host in its settings; a token would not help"
                ),
                stderr_tail: None,
                transcript: Vec::new(),
                refused: false,
            };
        }
        ConnectError {
            kind: ConnectErrorKind::Auth,
            message: format!(
                "the server requires authentication (HTTP {status}){said}; pass a token with --bearer-env VAR or --header"
            ),
            stderr_tail: None,
            transcript: Vec::new(),
            refused: false,
        }
    }

    pub(super) fn protocol_error(&self, message: String) -> ConnectError {
        ConnectError {
            kind: ConnectErrorKind::Protocol,
            message,
            stderr_tail: None,
            transcript: Vec::new(),
            refused: false,
        }
    }
}

pub(super) fn answered_differs(offer: &str, answered: &str) -> bool {
    offer != answered
}

/// What the `auto` probe found.
pub(super) enum Probed {
    Modern,
    /// Fall back to legacy. `answered`: the server answered `server/discover` with a
    /// JSON-RPC error, as a legacy server refuses a method it does not know: it is alive,
    /// nothing of the probe is pending, and it is as it started.
    Legacy {
        answered: bool,
        /// `server/discover` went unanswered within its wait.
        timed_out: bool,
    },
}
