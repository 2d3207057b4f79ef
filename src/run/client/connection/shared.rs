//! Connections that share one server process (`mcpspec load --stdio-mode shared`): the
//! process is opened (spawned, its handshake done) once, then every connection sends its
//! requests to it at the same time ([`SharedStdio`]); a process that broke is replaced by
//! a new one when the next connection is asked for.

use std::time::Instant;

use super::transport::{SharedTransport, Transport};
use super::{ConnectError, Connection};
use crate::protocol::era::EraRequest;
use crate::run::client::Target;
use crate::run::client::stdio::SharedStdio;

/// Opens connections on one shared server process per target and era.
pub struct SharedProcess {
    target: Target,
    era_label: String,
    era: EraRequest,
    /// The connection that opened the current process (not used for requests itself).
    opener: tokio::sync::Mutex<Option<Connection>>,
}

impl SharedProcess {
    pub fn new(target: &Target, era_label: &str, era: &EraRequest) -> SharedProcess {
        SharedProcess {
            target: target.clone(),
            era_label: era_label.to_string(),
            era: era.clone(),
            opener: tokio::sync::Mutex::new(None),
        }
    }

    /// A connection on the shared process, the process started first when there is none
    /// (or it broke). `answerer`: the connection's client; the process answers the server's
    /// requests as the client of the connection that started it.
    pub async fn connect(
        &self,
        answerer: Option<std::sync::Arc<crate::run::client::answers::Answerer>>,
    ) -> Result<Connection, ConnectError> {
        let mut opener = self.opener.lock().await;
        if let Some(conn) = opener.as_ref()
            && !conn.is_broken()
        {
            return Ok(conn.sibling(answerer));
        }
        if let Some(old) = opener.take() {
            old.close_shared().await;
        }
        let mut conn =
            Connection::open_as(&self.target, &self.era_label, &self.era, answerer.clone()).await?;
        conn.share();
        let first = conn.sibling(answerer);
        *opener = Some(conn);
        Ok(first)
    }

    /// End the process once the connections on it are gone.
    pub async fn close(&self) {
        if let Some(conn) = self.opener.lock().await.take() {
            conn.close_shared().await;
        }
    }
}

impl Connection {
    /// Its stdio process from now on shared ([`SharedStdio`]); nothing over HTTP.
    fn share(&mut self) {
        let placeholder = Transport::Shared(SharedTransport::on(SharedStdio::closed()));
        match std::mem::replace(&mut self.transport, placeholder) {
            Transport::Stdio(t) => {
                self.transport = Transport::Shared(SharedTransport::on(SharedStdio::start(t)));
            }
            other => self.transport = other,
        }
    }

    /// Another connection on this one's shared process, as opened (the handshake done),
    /// as the client `answerer`.
    fn sibling(
        &self,
        answerer: Option<std::sync::Arc<crate::run::client::answers::Answerer>>,
    ) -> Connection {
        let Transport::Shared(t) = &self.transport else {
            unreachable!("a sibling of a shared connection only");
        };
        Connection {
            transport: Transport::Shared(t.sibling()),
            target: self.target.clone(),
            negotiated: self.negotiated.clone(),
            next_id: 0,
            handovers: 0,
            session_id: self.session_id.clone(),
            log: Vec::new(),
            log_started: Instant::now(),
            exchanged: std::time::Duration::ZERO,
            tools: None,
            era_request: self.era_request.clone(),
            wire: self.opening_wire.clone(),
            server_requests: Vec::new(),
            seen: super::NotificationsSeen::default(),
            answerer,
            meta_text: None,
            probing: false,
            unanswered: None,
            timed_out: false,
            slowest_opening: self.slowest_opening,
            slowest_answer: self.slowest_answer,
            opened: true,
            used: false,
            opening_wire: self.opening_wire.clone(),
        }
    }

    /// Wait for the shared process to end (the other connections on it gone).
    async fn close_shared(self) {
        if let Transport::Shared(t) = self.transport {
            t.ended().await;
        }
    }
}
