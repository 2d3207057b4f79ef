//! The transport under a connection: its own stdio process, HTTP, or a process shared with others.

use super::shared;
use super::{ConnectError, ConnectErrorKind};
use crate::run::client::http::HttpTransport;
use crate::run::client::stdio::StdioTransport;
use crate::run::client::{Target, TargetKind};

#[allow(
    clippy::large_enum_variant,
    reason = "one per connection, made once and never moved: boxing would only add an indirection"
)]
pub(in crate::run::client) enum Transport {
    Stdio(StdioTransport),
    Http(HttpTransport),
    /// One server process shared with other connections (`load --stdio-mode shared`).
    Shared(shared::SharedTransport),
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
