//! The notifications bound to a capability a connection received, for the
//! undeclared-capability judgements.

use serde_json::Value;

use crate::results::exchange::Exchange;

/// The `notifications/message` a server sent on a connection (or another notification
/// bound to a capability: [`NotificationsSeen`]): how many, and the first.
#[derive(Clone, Debug, Default)]
pub struct LogsSeen {
    pub count: usize,
    pub first: Option<Value>,
}

/// The server notifications bound to a capability
/// ([`crate::protocol::methods::CAPABILITY_BOUND`]) a connection received, by method:
/// for the undeclared-capability judgements, whatever the step that received them.
#[derive(Clone, Debug, Default)]
pub struct NotificationsSeen {
    /// In the order of `CAPABILITY_BOUND` (only methods seen at least once).
    pub by_method: Vec<(&'static str, LogsSeen)>,
}

impl NotificationsSeen {
    fn entry(&mut self, method: &'static str) -> &mut LogsSeen {
        let at = match self.by_method.iter().position(|(b, _)| *b == method) {
            Some(at) => at,
            None => {
                self.by_method.push((method, LogsSeen::default()));
                self.by_method.len() - 1
            }
        };
        &mut self.by_method[at].1
    }

    pub(super) fn saw(&mut self, m: &Value) {
        let Some(method) = m.get("method").and_then(Value::as_str) else {
            return;
        };
        if let Some((bound, _)) = crate::protocol::methods::CAPABILITY_BOUND
            .iter()
            .find(|(b, _)| *b == method)
        {
            let seen = self.entry(bound);
            seen.count += 1;
            seen.first.get_or_insert_with(|| m.clone());
        }
    }

    /// Every message of `ex` besides its response (those not kept are counted too).
    pub(super) fn saw_exchange(&mut self, ex: &Exchange) {
        for (method, _) in crate::protocol::methods::CAPABILITY_BOUND {
            let count = ex.other_messages.count(method);
            if count == 0 {
                continue;
            }
            let first = ex
                .other_messages
                .iter()
                .find(|m| m.get("method").and_then(Value::as_str) == Some(method))
                .cloned();
            let seen = self.entry(method);
            seen.count += count;
            if seen.first.is_none() {
                seen.first = first;
            }
        }
    }

    /// What was seen of `method` (none: an empty record).
    pub fn of(&self, method: &str) -> &LogsSeen {
        static NONE: LogsSeen = LogsSeen {
            count: 0,
            first: None,
        };
        self.by_method
            .iter()
            .find(|(b, _)| *b == method)
            .map_or(&NONE, |(_, seen)| seen)
    }

    pub fn is_empty(&self) -> bool {
        self.by_method.is_empty()
    }
}
