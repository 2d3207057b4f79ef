//! Run-time changes of the tools list and their notifications (`--utilities`): the
//! `toggle_tool` tool adds or removes the `ephemeral` tool, and the change is announced —
//! to a legacy session with `notifications/tools/list_changed`, and to every modern
//! `subscriptions/listen` subscription that asked for `toolsListChanged`.
//!
//! rmcp acknowledges a subscription before [`crate::server`]'s `listen` runs; `listen`
//! registers it here until it is cancelled. The defects `listen-unrequested` (every
//! subscription gets the change, whatever it asked for), `listen-ignores-cancel` (a
//! cancelled subscription stays registered), `list-changed-never-sent` and
//! `listen-no-subscription-id` bend that.

use std::sync::{
    Arc, Mutex,
    atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
};

use rmcp::{
    Peer, RoleServer,
    model::{GetMeta, RequestId, ServerNotification, Tool, ToolListChangedNotification},
    service::{RequestContext, SubscriptionContext},
};
use serde_json::json;

use crate::defects::{Defect, Defects};

/// The tool whose call adds or removes [`EPHEMERAL_TOOL`].
pub const TOGGLE_TOOL: &str = "toggle_tool";
/// The tool that comes and goes.
pub const EPHEMERAL_TOOL: &str = "ephemeral";
const ACK_METHOD: &str = "notifications/subscriptions/acknowledged";

/// Whether an outbound line is a subscription acknowledgement (`listen-no-ack` drops it).
pub fn is_ack(line: &str) -> bool {
    line.contains(ACK_METHOD)
}

struct Subscriber {
    key: u64,
    id: RequestId,
    peer: Peer<RoleServer>,
    tools: bool,
}

/// The ephemeral tool's state and the open subscriptions; shared by every clone of the
/// server (one per HTTP request or session).
#[derive(Default)]
pub struct Changes {
    /// Listen requests accepted and acknowledged (or about to be) but not registered yet:
    /// rmcp acknowledges before `listen` runs, so a change made right after the
    /// acknowledgement waits for them (bounded) instead of missing them.
    pending: AtomicUsize,
    ephemeral: AtomicBool,
    subscribers: Mutex<Vec<Subscriber>>,
    next_key: AtomicU64,
}

/// Removes its subscriber when the subscription ends (however rmcp ends the future).
pub struct Registration {
    changes: Arc<Changes>,
    key: u64,
    keep: bool,
}

impl Drop for Registration {
    fn drop(&mut self) {
        if !self.keep {
            let mut subscribers = self.changes.subscribers.lock().expect("lock");
            subscribers.retain(|s| s.key != self.key);
        }
    }
}

pub fn toggle_tool() -> Tool {
    serde_json::from_value(json!({
        "name": TOGGLE_TOOL,
        "description": "Add or remove the `ephemeral` tool (a run-time change of the tools list, announced by list_changed).",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false},
    }))
    .expect("a valid tool")
}

pub fn ephemeral_tool() -> Tool {
    serde_json::from_value(json!({
        "name": EPHEMERAL_TOOL,
        "description": "A tool that exists only between two calls of toggle_tool.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": true},
    }))
    .expect("a valid tool")
}

impl Changes {
    /// Whether the ephemeral tool is listed now.
    pub fn ephemeral(&self) -> bool {
        self.ephemeral.load(Ordering::SeqCst)
    }

    /// A listen request was accepted: it is acknowledged, then registered.
    pub fn accepted(&self) {
        self.pending.fetch_add(1, Ordering::SeqCst);
    }

    /// Register an acknowledged subscription until the returned guard drops.
    pub fn subscribe(
        self: &Arc<Self>,
        defects: &Defects,
        context: &SubscriptionContext,
    ) -> Registration {
        let key = self.next_key.fetch_add(1, Ordering::SeqCst);
        let _ = self
            .pending
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        let request = context.request_context();
        self.subscribers.lock().expect("lock").push(Subscriber {
            key,
            id: request.id.clone(),
            peer: request.peer.clone(),
            tools: context.accepted().tools_list_changed == Some(true),
        });
        Registration {
            changes: self.clone(),
            key,
            keep: defects.has(&Defect::ListenIgnoresCancel),
        }
    }

    /// `toggle_tool`: flip the ephemeral tool and announce the change.
    pub async fn toggle(
        &self,
        defects: &Defects,
        modern: bool,
        context: &RequestContext<RoleServer>,
    ) -> bool {
        let now = !self.ephemeral.fetch_xor(true, Ordering::SeqCst);
        if defects.has(&Defect::ListChangedNeverSent) {
            return now;
        }
        if !modern {
            let _ = context.peer.notify_tool_list_changed().await;
            return now;
        }
        // Subscriptions acknowledged a moment ago get this change too.
        for _ in 0..100 {
            if self.pending.load(Ordering::SeqCst) == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let everyone = defects.has(&Defect::ListenUnrequested);
        let tagged = !defects.has(&Defect::ListenNoSubscriptionId);
        let targets: Vec<(RequestId, Peer<RoleServer>)> = self
            .subscribers
            .lock()
            .expect("lock")
            .iter()
            .filter(|s| s.tools || everyone)
            .map(|s| (s.id.clone(), s.peer.clone()))
            .collect();
        for (id, peer) in targets {
            // Sent on the peer, not the filter-enforcing sink: the defects need to get
            // past it; a correct server sends only what the filter allowed above.
            let mut notification =
                ServerNotification::ToolListChangedNotification(ToolListChangedNotification {
                    method: Default::default(),
                    extensions: Default::default(),
                });
            if tagged {
                notification.get_meta_mut().set_subscription_id(id);
            }
            let _ = peer.send_notification(notification).await;
        }
        now
    }
}
