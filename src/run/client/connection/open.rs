//! Opening a connection in an era: the transport started, then the handshake or the `auto` probe.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::reuse::count_start;
use super::seen::NotificationsSeen;
use super::transport::Transport;
use super::{ConnectError, Connection};
use crate::protocol::era::{EraKind, EraRequest, LATEST_LEGACY_REVISION, Negotiated};
use crate::run::client::Target;

impl Connection {
    /// Open a connection in the requested era.
    pub async fn open(
        target: &Target,
        era_label: &str,
        era: &EraRequest,
    ) -> Result<Connection, ConnectError> {
        Self::open_as(target, era_label, era, None).await
    }

    /// [`Connection::open`] as a client that declares capabilities and answers the
    /// server's requests from a script (`answerer`).
    pub async fn open_as(
        target: &Target,
        era_label: &str,
        era: &EraRequest,
        answerer: Option<std::sync::Arc<crate::run::client::answers::Answerer>>,
    ) -> Result<Connection, ConnectError> {
        let started = Instant::now();
        let mut processes = 1;
        let mut transport = Transport::open(target)?;
        transport.set_answerer(answerer.clone());
        let mut conn = Connection {
            transport,
            target: target.clone(),
            negotiated: Negotiated {
                requested: era_label.to_string(),
                kind: EraKind::Legacy,
                revision: String::new(),
                note: None,
                server_info: None,
                capabilities: Value::Null,
                supported_versions: Vec::new(),
                instructions: None,
                handshake: None,
                handshake_headers: None,
            },
            next_id: 0,
            handovers: 0,
            session_id: None,
            log: Vec::new(),
            log_started: Instant::now(),
            exchanged: Duration::ZERO,
            tools: None,
            server_requests: Vec::new(),
            seen: NotificationsSeen::default(),
            answerer,
            meta_text: None,
            probing: false,
            unanswered: None,
            timed_out: false,
            slowest_opening: None,
            slowest_answer: None,
            opening_wire: Default::default(),
            opened: false,
            used: false,
            era_request: era.clone(),
            wire: Default::default(),
        };
        let result = match era {
            EraRequest::Legacy => conn.handshake(LATEST_LEGACY_REVISION, false).await,
            EraRequest::PinnedLegacy(rev) => conn.handshake(rev, true).await,
            EraRequest::Modern(rev) => match conn.discover(rev).await {
                Err(e) => Err(conn.exited_on_discover(rev, e, &mut processes).await),
                ok => ok,
            },
            EraRequest::Auto => conn.open_auto(&mut processes).await?,
        };
        if !target.is_http() {
            count_start(processes, started.elapsed());
        }
        match result {
            Ok(()) => {
                conn.opening_wire = conn.wire.clone();
                conn.opened = true;
                Ok(conn)
            }
            Err(mut e) => {
                e.transcript = conn.take_log();
                if e.stderr_tail.is_none() {
                    e.stderr_tail = conn.stderr_tail().await;
                }
                conn.close().await;
                Err(e)
            }
        }
    }

    /// Another connection to the same target, asked for in the same way (same era request
    /// and label): for checks that compare, or probe on a connection of their own.
    pub async fn open_another(&self) -> Result<Connection, String> {
        let target = self.target.clone();
        Connection::open(&target, &self.negotiated.requested, &self.era_request)
            .await
            .map_err(|e| e.message)
    }
}
