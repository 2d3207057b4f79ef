//! The transport under a connection: its own stdio process, HTTP, or a process shared with others.

use super::{ConnectError, ConnectErrorKind};
use crate::results::exchange::Exchange;
use crate::run::client::http::HttpTransport;
use crate::run::client::stdio::{SharedStdio, StdioTransport};
use crate::run::client::{Outgoing, Target, TargetKind, TransportError};

#[allow(
    clippy::large_enum_variant,
    reason = "one per connection, made once and never moved: boxing would only add an indirection"
)]
pub(in crate::run::client) enum Transport {
    Stdio(StdioTransport),
    Http(HttpTransport),
    /// One server process shared with other connections (`load --stdio-mode shared`).
    Shared(SharedTransport),
}

impl Transport {
    pub(super) fn open(target: &Target) -> Result<Transport, ConnectError> {
        match &target.kind {
            TargetKind::Stdio {
                program,
                args,
                env,
                cwd,
                sandbox,
            } => StdioTransport::spawn(
                program,
                args,
                env,
                cwd.as_deref(),
                target.max_message_bytes,
                *sandbox,
            )
            .map(Transport::Stdio)
            .map_err(|e| ConnectError {
                kind: ConnectErrorKind::Start,
                message: format!("cannot start `{program}`: {e}"),
                stderr_tail: None,
                transcript: Vec::new(),
                refused: false,
            }),
            TargetKind::Http {
                url,
                headers,
                bearer,
                auth,
            } => HttpTransport::new(
                url,
                headers,
                bearer.as_deref(),
                auth.clone(),
                target.max_message_bytes,
            )
            .map(Transport::Http)
            .map_err(|message| ConnectError {
                kind: ConnectErrorKind::Unreachable,
                message,
                stderr_tail: None,
                transcript: Vec::new(),
                refused: false,
            }),
        }
    }

    /// Why the connection cannot be used any more (the stdio server exited or stopped
    /// answering; the HTTP target stopped answering), if it cannot.
    pub(super) fn closed_reason(&self) -> Option<&str> {
        match self {
            Transport::Stdio(t) => t.closed_reason(),
            Transport::Http(t) => t.closed_reason(),
            Transport::Shared(t) => t.closed_reason(),
        }
    }

    pub(super) fn set_answerer(
        &mut self,
        answerer: Option<std::sync::Arc<crate::run::client::answers::Answerer>>,
    ) {
        match self {
            Transport::Stdio(t) => t.answerer = answerer,
            Transport::Http(t) => t.set_answerer(answerer),
            // The process answers as the connection that opened it.
            Transport::Shared(_) => {}
        }
    }

    pub(super) fn mark_closed(&mut self, why: String) {
        match self {
            Transport::Stdio(t) => t.mark_closed(why),
            Transport::Http(t) => t.mark_closed(why),
            Transport::Shared(t) => t.mark_closed(why),
        }
    }
}

/// A connection's side of a shared process (`shared.rs` opens the process and hands out
/// the sides; the transport only holds one, so this file need not know that one).
pub(in crate::run::client) struct SharedTransport {
    mux: SharedStdio,
    /// This connection found the process dead (a liveness probe went unanswered).
    closed: Option<String>,
}

impl SharedTransport {
    /// A side of the process `mux` runs, not found dead yet.
    pub(super) fn on(mux: SharedStdio) -> SharedTransport {
        SharedTransport { mux, closed: None }
    }

    /// Another connection's side of the same process.
    pub(super) fn sibling(&self) -> SharedTransport {
        SharedTransport::on(self.mux.clone())
    }

    /// Wait for the process to end (the other connections on it gone).
    pub(super) async fn ended(self) {
        self.mux.ended().await;
    }

    pub(super) fn closed_reason(&self) -> Option<&str> {
        self.closed.as_deref().or_else(|| self.mux.closed_reason())
    }

    pub(super) fn mark_closed(&mut self, why: String) {
        self.closed.get_or_insert(why);
    }

    pub(super) async fn exchange(&self, out: &Outgoing) -> Result<Exchange, TransportError> {
        if let Some(why) = &self.closed {
            return Err(TransportError::Closed(why.clone()));
        }
        self.mux.exchange(out).await
    }
}
